"""Run a script under one Keras backend in its own process and read back its report.

Keras picks its backend (and `tensorflow.keras` picks Keras 2 or 3) once, at import, so
every backend-test worker runs as a subprocess. The worker prints one line
``<tag><json>``; anything else it prints (TensorFlow's start-up noise) is ignored.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path


def run_on_backend(
    argv: list[str],
    backend: str,
    cwd: Path,
    *,
    legacy_keras: bool = False,
    tag: str = "REPORT",
    timeout: int = 600,
) -> dict:
    """The JSON the worker ``argv`` printed after ``tag`` on ``backend``; the test fails
    with the worker's output when it exits non-zero or prints no report.
    ``legacy_keras``: `tensorflow.keras` is tf_keras (Keras 2), for a reference run."""
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    if legacy_keras:
        env["TF_USE_LEGACY_KERAS"] = "1"
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith(tag)]
    assert done.returncode == 0 and lines, (
        f"{backend} worker failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    )
    return json.loads(lines[-1][len(tag) :])


def write_converted(path: Path, text: str) -> None:
    """``text``, a module `kmigrate apply` converted, at ``path``, with the project helpers'
    module beside it where it imports one (apply writes that module into a real project;
    ``apply_to_text`` converts one module and writes nothing)."""
    from kmigrate.rules.common.compat_helpers import HELPER_FILE, HELPER_MODULE

    path.write_text(text)
    if f"{HELPER_MODULE} import" in text:
        shutil.copyfile(HELPER_FILE, path.parent / f"{HELPER_MODULE}.py")


def original_and_migrated(
    tmp_path_factory, source: str, name: str = "layer.py", driver: str | None = None
) -> tuple[Path, Path]:
    """Two folders holding ``source`` as ``name``: as written, and after `kmigrate apply`
    (the engine's rewrite, never a hand-written copy); ``driver``: the same script in
    both, as ``driver.py``, that runs the module and prints its report."""
    from kmigrate.api import apply_to_text

    original = tmp_path_factory.mktemp("original")
    (original / name).write_text(source)
    migrated = tmp_path_factory.mktemp("migrated")
    write_converted(migrated / name, apply_to_text(source))
    if driver is not None:
        for folder in (original, migrated):
            (folder / "driver.py").write_text(driver)
    return original, migrated


def migrated_off_tensorflow(
    tmp_path_factory, source: str, driver: str, written: str
) -> tuple[Path, Path]:
    """:func:`original_and_migrated` of the Keras 2 module ``source`` (dedented) as
    ``layer.py``, checking that `kmigrate apply` left no TensorFlow in it and wrote
    ``written`` (the rewrite the test is about)."""
    original, migrated = original_and_migrated(
        tmp_path_factory, textwrap.dedent(source), driver=driver
    )
    text = (migrated / "layer.py").read_text()
    assert "tensorflow" not in text and written in text, text
    return original, migrated


def layer_runs(tmp_path_factory, source: str, driver: str) -> tuple[str, dict[str, dict]]:
    """``source`` (a Keras 2 module, dedented) as ``layer.py``, as written and after
    `kmigrate apply`: the text apply wrote, and the report of the script ``driver`` (run
    with ``python -c`` in the module's folder) on tf_keras (``"reference"``, the
    original) and on tensorflow, jax and torch (the converted module)."""
    import textwrap

    original, migrated = original_and_migrated(tmp_path_factory, textwrap.dedent(source))
    argv = [sys.executable, "-c", driver]
    runs = {"reference": run_on_backend(argv, "tensorflow", original, legacy_keras=True)}
    for backend in ("tensorflow", "jax", "torch"):
        runs[backend] = run_on_backend(argv, backend, migrated)
    return (migrated / "layer.py").read_text(), runs


def assert_same_report(found: dict, expected: dict, keys: tuple[str, ...], **tolerance) -> None:
    """Each of ``keys`` holds the same values (within ``tolerance``: rtol, atol) in both
    reports; a list of arrays is compared array by array."""
    import numpy as np

    for key in keys:
        got, want = found[key], expected[key]
        pairs = zip(got, want, strict=True) if key.endswith("_each") else [(got, want)]
        for one, other in pairs:
            np.testing.assert_allclose(one, other, err_msg=key, **tolerance)


def run_driver(folder: Path, backend: str, legacy_keras: bool = False) -> dict:
    """:func:`run_on_backend` of the ``driver.py`` that :func:`original_and_migrated`
    wrote into ``folder``."""
    argv = [sys.executable, "driver.py"]
    return run_on_backend(argv, backend, folder, legacy_keras=legacy_keras, timeout=300)


def driver_reports(work: Path, driver: str, backends: tuple[str, ...]) -> dict[str, dict]:
    """``driver`` (a script printing a report) written into ``work`` and run on tf_keras
    (``"reference"``) and on each backend: each run's report."""
    (work / "driver.py").write_text(driver)
    argv = [sys.executable, "driver.py"]
    runs = {"reference": run_on_backend(argv, "tensorflow", work, legacy_keras=True)}
    for backend in backends:
        runs[backend] = run_on_backend(argv, backend, work)
    return runs


def project_runs_on_backends(
    tmp_path_factory, files: dict[str, str], backends: tuple[str, ...]
) -> tuple[dict[str, str], dict[str, object]]:
    """A Keras 2 project (``files``: relative path -> text, ``driver.py`` among them)
    converted by ``kmigrate apply`` in a copy: the texts apply wrote, and the report of
    ``driver.py`` on tf_keras (``"reference"``, the original) and on each backend (the copy)."""
    from kmigrate import api

    original = tmp_path_factory.mktemp("original")
    for relative, text in files.items():
        (original / relative).parent.mkdir(parents=True, exist_ok=True)
        (original / relative).write_text(text)
    converted = tmp_path_factory.mktemp("converted") / "project"
    shutil.copytree(original, converted)
    changes = api.apply([converted], write=True)
    written = {change.path: change.new_text for change in changes if change.written}
    argv = [sys.executable, "driver.py"]
    runs = {"reference": run_on_backend(argv, "tensorflow", original, legacy_keras=True)}
    for backend in backends:
        runs[backend] = run_on_backend(argv, backend, converted)
    return written, runs


def helper_reports(
    work: Path, worker: str, cases: dict, inputs: dict, backends: tuple[str, ...]
) -> dict[str, dict]:
    """A helper worker (``worker``: a script given the helper file, reading
    ``cases.json`` and ``inputs.npz``, saving ``out_<backend>_<0|1>.npz`` and printing a
    report) run on tf_keras (``"reference"``) and on each backend: each run's report,
    with the arrays it saved under ``"out"``."""
    import json

    import numpy as np

    from kmigrate.rules.common.compat_helpers import HELPER_FILE

    (work / "worker.py").write_text(worker)
    (work / "cases.json").write_text(json.dumps(cases))
    np.savez(work / "inputs.npz", **inputs)
    argv = [sys.executable, "worker.py", str(HELPER_FILE)]
    runs = {"reference": run_on_backend(argv, "tensorflow", work, legacy_keras=True)}
    runs["reference"]["out"] = dict(np.load(work / "out_tensorflow_1.npz"))
    for backend in backends:
        runs[backend] = run_on_backend(argv, backend, work)
        runs[backend]["out"] = dict(np.load(work / f"out_{backend}_0.npz"))
    return runs


def saved_outputs(work: Path, argv: list[str], backends: tuple[str, ...]) -> dict[str, dict]:
    """The arrays a worker saved as ``out_<backend>_<1 if reference else 0>.npz`` in
    ``work``: once under Keras 2 (tf_keras, key ``"reference"``), then on each backend."""
    import numpy as np

    run_on_backend(argv, "tensorflow", work, legacy_keras=True)
    found = {"reference": dict(np.load(work / "out_tensorflow_1.npz"))}
    for backend in backends:
        run_on_backend(argv, backend, work)
        found[backend] = dict(np.load(work / f"out_{backend}_0.npz"))
    return found


# The first lines of a :func:`helper_outputs` worker: the cases and inputs, ``out`` (what
# ``save()`` writes), ``reference`` (tf_keras runs it), ``compat`` (the helpers' module,
# on Keras 3), and ``record(key, fn, x, in_model)``: ``fn(x)`` eagerly, in a functional
# model (``in_model``) and, on JAX, under ``jax.jit``.
HELPER_WORKER_HEAD = r"""
import importlib.util, json, os, sys
import numpy as np

cases = json.load(open("cases.json"))
data = dict(np.load("inputs.npz"))
out = {}
reference = os.environ.get("TF_USE_LEGACY_KERAS") == "1"
if not reference:
    import keras
    spec = importlib.util.spec_from_file_location("keras2_compat", sys.argv[1])
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)


def record(key, fn, x, in_model, dtype=None):
    out[key] = keras.ops.convert_to_numpy(fn(keras.ops.convert_to_tensor(x)))
    if in_model:
        a = keras.Input(shape=x.shape[1:], dtype=dtype or str(x.dtype))
        model = keras.Model(a, keras.layers.Lambda(fn, dtype=dtype)(a))
        out[key + "_model"] = np.asarray(model.predict(x, verbose=0))
    if keras.backend.backend() == "jax":
        import jax
        out[key + "_jit"] = np.asarray(jax.jit(fn)(x))


def save():
    np.savez(f"out_{os.environ['KERAS_BACKEND']}_{int(reference)}.npz", **out)
    print("REPORT{}")
"""


def helper_outputs(
    tmp_path_factory, worker: str, cases: list, inputs: dict, backends: tuple[str, ...]
) -> dict[str, dict]:
    """:func:`saved_outputs` of ``worker`` run on the project helpers' file (its first
    argument) in a new folder holding ``cases.json`` and ``inputs.npz`` (``inputs``)."""
    import numpy as np

    from kmigrate.rules.common.compat_helpers import HELPER_FILE

    work = tmp_path_factory.mktemp("helper")
    (work / "worker.py").write_text(worker)
    (work / "cases.json").write_text(json.dumps(cases))
    np.savez(work / "inputs.npz", **inputs)
    return saved_outputs(work, [sys.executable, "worker.py", str(HELPER_FILE)], backends)


# The first lines of a worker that runs one module given as its argument: ``subject``.
LOAD_SUBJECT = (
    "import importlib.util, json, sys\n"
    "import numpy as np\n"
    "spec = importlib.util.spec_from_file_location('subject', sys.argv[1])\n"
    "subject = importlib.util.module_from_spec(spec)\n"
)


# A worker (after LOAD_SUBJECT) for a module whose ``build()`` returns a model of one
# (batch, 4) input: seeded weights, ``predict`` on 3 seeded rows and the number of weights;
# ``{"error": ...}`` when loading the module or building the model raises.
PREDICT_WORKER = """
try:
    spec.loader.exec_module(subject)
    model = subject.build()
except Exception as error:
    print("REPORT" + json.dumps({"error": f"{type(error).__name__}: {error}"[:300]}))
    raise SystemExit(0)
rng = np.random.default_rng(0)
model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
x = rng.normal(size=(3, 4)).astype("float32")
out = model.predict(x, verbose=0)
print("REPORT" + json.dumps({"weights": len(model.weights), "out": out.tolist()}))
"""


def run_module_worker(worker: str, module: Path, backend: str, tmp_path: Path) -> dict:
    """:func:`run_on_backend` of the script ``LOAD_SUBJECT + worker`` on ``module``;
    ``backend`` "keras2" runs it on tf_keras (TensorFlow), the Keras 2 reference."""
    script = tmp_path / "worker.py"
    script.write_text(LOAD_SUBJECT + worker)
    argv = [sys.executable, str(script), str(module)]
    if backend == "keras2":
        return run_on_backend(argv, "tensorflow", tmp_path, legacy_keras=True)
    return run_on_backend(argv, backend, tmp_path)


def keras2_and_converted(
    worker: str, legacy: str, converted: str, tmp_path: Path
) -> tuple[dict, dict[str, dict]]:
    """The report of ``worker`` on ``legacy`` under tf_keras (the Keras 2 reference), and
    on ``converted`` under each Keras 3 backend; a worker error fails the test."""
    original = tmp_path / "original.py"
    original.write_text(legacy)
    rewritten = tmp_path / "converted.py"
    write_converted(rewritten, converted)
    reference = run_module_worker(worker, original, "keras2", tmp_path)
    assert "error" not in reference, reference
    targets = {}
    for backend in ("tensorflow", "jax", "torch"):
        targets[backend] = run_module_worker(worker, rewritten, backend, tmp_path)
        assert "error" not in targets[backend], (backend, targets[backend])
    return reference, targets


def build_and_predict_worker(input_shape: tuple[int, ...]) -> str:
    """A worker for :func:`run_module_worker`: builds ``subject.build()``, sets seeded
    weights and reports ``{"y": predict(x)}`` for a seeded batch of ``input_shape``, or
    ``{"error": "Type: message"}`` when the module or the model does not build."""
    return textwrap.dedent(
        f"""
        try:
            spec.loader.exec_module(subject)
            model = subject.build()
        except Exception as error:
            print("REPORT" + json.dumps({{"error": f"{{type(error).__name__}}: {{error}}"[:300]}}))
            raise SystemExit(0)
        rng = np.random.default_rng(0)
        model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
        x = rng.normal(size={input_shape!r}).astype("float32")
        print("REPORT" + json.dumps({{"y": model.predict(x, verbose=0).tolist()}}))
        """
    )


def assert_fails_on_every_backend(
    worker: str, text: str, error: str, needle: str, tmp_path: Path
) -> None:
    """``text`` (a converted module) raises ``error`` naming ``needle`` on TensorFlow,
    JAX and PyTorch: the reason a rule reports what apply cannot rewrite."""
    module = tmp_path / "converted.py"
    module.write_text(text)
    for backend in ("tensorflow", "jax", "torch"):
        got = run_module_worker(worker, module, backend, tmp_path)
        assert got.get("error", "").startswith(error), (backend, got)
        assert needle in got["error"], (backend, got)


def assert_matches_keras2(
    worker: str, legacy: str, converted: str, tmp_path: Path, atol: float = 1e-6
) -> None:
    """``converted`` predicts on every Keras 3 backend what ``legacy`` predicts on tf_keras."""
    import numpy as np

    reference, targets = keras2_and_converted(worker, legacy, converted, tmp_path)
    for backend, got in targets.items():
        np.testing.assert_allclose(got["y"], reference["y"], rtol=1e-5, atol=atol, err_msg=backend)
