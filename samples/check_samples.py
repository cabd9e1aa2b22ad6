"""Smoke-check the samples: build each model and predict on a fixed random batch.

    python samples/check_samples.py [NAME ...]             # Keras 3 (tf.keras -> keras 3)
    TF_USE_LEGACY_KERAS=1 python samples/check_samples.py  # Keras 2 (tf_keras)

Prints one OK / FAIL / XFAIL line per sample; exit status 1 if any sample FAILs.
XFAIL = a sample that is expected to fail on this Keras version (keras2_legacy on Keras 3).
The notebook sample is checked by running its code cells (magics and `!` lines skipped).
"""
import contextlib
import importlib.util
import io
import json
import linecache
import os
import sys
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = {
    "custom_layers": "custom_layers/models.py",
    "vae_sampling": "vae_sampling/models.py",
    "losses_metrics": "losses_metrics/models.py",
    "training_script": "training_script/models.py",
    "keras2_legacy": "keras2_legacy/models.py",
    "notebook": "notebook/custom_layer_demo.ipynb",
}
KERAS3_XFAIL = {"keras2_legacy"}
BATCH = 4


def load_build_model(name, rel):
    path = os.path.join(HERE, rel)
    if path.endswith(".ipynb"):
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        code = "\n".join(
            line
            for cell in nb["cells"] if cell["cell_type"] == "code"
            for line in "".join(cell["source"]).splitlines()
            if not line.lstrip().startswith(("%", "!"))
        )
        # register the cell source so inspect/autograph can find it
        fake = "<notebook %s>" % rel
        linecache.cache[fake] = (len(code), None, code.splitlines(True), fake)
        namespace = {"__name__": "sample_" + name}
        with contextlib.redirect_stdout(io.StringIO()):  # the notebook prints a lot
            exec(compile(code, fake, "exec"), namespace)
        return namespace["build_model"]
    sys.path.insert(0, os.path.dirname(path))  # for sibling imports
    spec = importlib.util.spec_from_file_location("sample_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_model


def check(name, rel):
    build_model = load_build_model(name, rel)
    model = build_model()
    shape = [BATCH if d is None else d for d in model.input_shape]
    x = np.random.RandomState(0).rand(*shape).astype("float32")
    y = model.predict(x, verbose=0)
    if not np.all(np.isfinite(y)):
        raise ValueError("non-finite output")
    return "in %s -> out %s" % (tuple(shape), tuple(y.shape))


def main(names):
    from tensorflow import keras

    keras3 = not keras.Model.__module__.startswith("tf_keras")
    if keras3:
        import keras as keras_pkg
    else:
        import tf_keras as keras_pkg
    print("keras %s (%s)" % (keras_pkg.__version__, "Keras 3" if keras3 else "Keras 2 / tf_keras"))
    failed = 0
    for name in names or SAMPLES:
        try:
            detail = check(name, SAMPLES[name])
            status = "OK"
        except Exception as e:  # noqa: BLE001 - report and go on
            detail = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0][:160])
            status = "XFAIL" if keras3 and name in KERAS3_XFAIL else "FAIL"
            if status == "FAIL":
                failed += 1
                if os.environ.get("VERBOSE"):
                    traceback.print_exc()
        print("%-6s %-16s %s" % (status, name, detail), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
