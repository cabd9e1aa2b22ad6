"""The ``resize_images`` helper ``apply`` writes for ``K.resize_images``
(``rules/data/keras2_compat.py``), proven against Keras 2 itself (tf_keras) on tensorflow,
jax and torch: nearest and bilinear, channels_last and channels_first, float16/32/64 and
integer images, a factor of one and a one-pixel image; eagerly, inside a functional model
(the batch axis unknown while it is built) and under ``jax.jit``. The reference is
tf_keras's ``K.resize_images`` on the same inputs (shape, dtype and values).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from kmigrate.rules.common.compat_helpers import HELPER_FILE
from tests.backend_run import saved_outputs
from tests.rules.test_keras2_helpers_backends import _float64_on, _same

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

# (image shape, height factor, width factor, data_format, interpolation, dtype)
RESIZE = [
    ((2, 3, 4, 2), 2, 3, "channels_last", "nearest", "float32"),
    ((2, 2, 3, 4), 3, 2, "channels_first", "nearest", "float32"),
    ((2, 3, 4, 2), 2, 2, "channels_last", "nearest", "int32"),
    ((2, 3, 4, 1), 2, 2, "channels_last", "nearest", "uint8"),
    ((2, 3, 4, 2), 4, 1, "channels_last", "nearest", "float64"),
    ((2, 3, 4, 2), 2, 2, "channels_last", "bilinear", "float32"),
    ((2, 2, 3, 4), 2, 3, "channels_first", "bilinear", "float32"),
    ((2, 5, 3, 3), 3, 2, "channels_last", "bilinear", "float16"),
    ((2, 3, 3, 2), 2, 2, "channels_last", "bilinear", "float64"),
    ((2, 3, 4, 2), 2, 2, "channels_last", "bilinear", "int32"),
    ((2, 3, 4, 2), 1, 1, "channels_last", "bilinear", "float32"),  # a factor of one
    ((1, 1, 1, 1), 4, 4, "channels_first", "bilinear", "float32"),  # one pixel
]

WORKER = r"""
import importlib.util, json, os, sys
import numpy as np

cases = json.load(open("cases.json"))
data = dict(np.load("inputs.npz"))
out = {}
reference = os.environ.get("TF_USE_LEGACY_KERAS") == "1"
if reference:
    import tensorflow as tf
    import tf_keras
    K = tf_keras.backend
    for i, (shape, hf, wf, fmt, how, dtype) in enumerate(cases):
        out[f"r{i}"] = K.resize_images(tf.constant(data[f"r{i}"]), hf, wf, fmt, how).numpy()
else:
    import keras
    from keras import ops
    spec = importlib.util.spec_from_file_location("keras2_compat", sys.argv[1])
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    backend = keras.backend.backend()
    for i, (shape, hf, wf, fmt, how, dtype) in enumerate(cases):
        x = data[f"r{i}"]
        fn = lambda t, hf=hf, wf=wf, fmt=fmt, how=how: compat.resize_images(t, hf, wf, fmt, how)
        out[f"r{i}"] = ops.convert_to_numpy(fn(ops.convert_to_tensor(x)))
        if dtype.startswith("float"):  # predict() feeds floats; integer images stay eager
            a = keras.Input(shape=shape[1:], dtype=dtype)
            model = keras.Model(a, keras.layers.Lambda(fn, dtype=dtype)(a))
            out[f"r{i}_model"] = np.asarray(model.predict(x, verbose=0))
        if backend == "jax":
            import jax
            out[f"r{i}_jit"] = np.asarray(jax.jit(fn)(x))
np.savez(f"out_{os.environ['KERAS_BACKEND']}_{int(reference)}.npz", **out)
print("REPORT{}")
"""


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    arrays = {}
    for index, (shape, *_, dtype) in enumerate(RESIZE):
        values = rng.uniform(0, 100, shape)
        arrays[f"r{index}"] = values.astype(dtype)
    return arrays


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict[str, np.ndarray]]:
    work = tmp_path_factory.mktemp("resize")
    (work / "worker.py").write_text(WORKER)
    (work / "cases.json").write_text(json.dumps(RESIZE))
    np.savez(work / "inputs.npz", **_inputs())
    return saved_outputs(work, [sys.executable, "worker.py", str(HELPER_FILE)], BACKENDS)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(RESIZE)))
def test_resize_images_helper_matches_keras2(runs, backend: str, index: int) -> None:
    expected = _float64_on(backend, runs["reference"][f"r{index}"])
    got = runs[backend]
    dtype = RESIZE[index][-1]
    what = f"resize_images{RESIZE[index]} on {backend}"
    _same(expected, got[f"r{index}"], what)
    if f"r{index}_model" in got:
        # predict() casts float64 inputs to floatx first (Keras 3's data adapters)
        precision = "float32" if dtype == "float64" else ""
        _same(expected, got[f"r{index}_model"], what + " in a functional model", precision)
    if backend == "jax":
        _same(expected, got[f"r{index}_jit"], what + " under jax.jit")
