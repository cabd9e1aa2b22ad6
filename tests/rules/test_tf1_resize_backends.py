"""The ``tf1_resize`` helper ``apply`` writes for TensorFlow 1's resizes
(``tf.compat.v1.image.resize_images`` / ``resize``, ``tf.compat.v1.image.resize_bilinear``,
``tf.compat.v1.image.resize_nearest_neighbor``; ``rules/data/keras2_compat.py``),
proven against TensorFlow's own functions on tensorflow, jax and torch: bilinear and
nearest, with and without align_corners, up, down and mixed sizes, a one-pixel output,
the same size (resize_images returns the images as they are, dtype included), a single
3-D image, float32, float64 and uint8 images; eagerly, inside a functional model (the
batch axis unknown while it is built) and under ``jax.jit``. Shape, dtype and values.
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

# (function, image shape, size, method (resize_images only), align_corners, dtype)
CASES = [
    ("resize_images", (2, 5, 7, 3), (10, 14), "bilinear", False, "float32"),
    ("resize_images", (2, 5, 7, 3), (10, 14), "bilinear", True, "float32"),
    ("resize_images", (2, 5, 7, 3), (3, 4), "bilinear", False, "float32"),
    ("resize_images", (2, 5, 7, 3), (8, 5), "nearest", False, "float32"),
    ("resize_images", (2, 5, 7, 3), (8, 5), "nearest", True, "float32"),
    ("resize_images", (2, 4, 4, 1), (7, 3), "nearest", True, "uint8"),
    ("resize_images", (2, 4, 4, 2), (9, 6), "bilinear", False, "uint8"),
    ("resize_images", (2, 4, 4, 2), (4, 4), "bilinear", False, "uint8"),  # same size
    ("resize_images", (5, 7, 3), (11, 2), "bilinear", True, "float64"),  # one image
    ("resize", (2, 3, 3, 2), (1, 1), "bilinear", True, "float32"),  # one pixel
    ("resize", (2, 1, 3, 2), (4, 9), "nearest", False, "float32"),
    ("resize_bilinear", (2, 5, 7, 3), (10, 14), None, True, "float32"),
    ("resize_bilinear", (2, 4, 4, 2), (4, 4), None, False, "uint8"),  # no skip: float32
    ("resize_nearest_neighbor", (2, 5, 7, 3), (2, 9), None, True, "int32"),
    ("resize_nearest_neighbor", (2, 6, 6, 1), (4, 4), None, False, "float32"),
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
    methods = {"bilinear": 0, "nearest": 1}
    for i, (function, shape, size, method, align, dtype) in enumerate(cases):
        resize = getattr(tf.compat.v1.image, function)
        x = tf.constant(data[f"r{i}"])
        if method is None:
            out[f"r{i}"] = resize(x, size, align_corners=align).numpy()
        else:
            out[f"r{i}"] = resize(x, size, methods[method], align_corners=align).numpy()
else:
    import keras
    spec = importlib.util.spec_from_file_location("keras2_compat", sys.argv[1])
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    backend = keras.backend.backend()
    fixed = {"resize_bilinear": "bilinear", "resize_nearest_neighbor": "nearest"}
    for i, (function, shape, size, method, align, dtype) in enumerate(cases):
        x = data[f"r{i}"]
        how = fixed.get(function, method)
        skip = function in ("resize_images", "resize")
        fn = lambda t, size=tuple(size), how=how, align=align, skip=skip: compat.tf1_resize(
            t, size, how, align_corners=align, skip_same_size=skip
        )
        out[f"r{i}"] = keras.ops.convert_to_numpy(fn(keras.ops.convert_to_tensor(x)))
        if dtype == "float32" and len(shape) == 4:
            a = keras.Input(shape=shape[1:], dtype=dtype)
            model = keras.Model(a, keras.layers.Lambda(fn)(a))
            out[f"r{i}_model"] = np.asarray(model.predict(x, verbose=0))
        if backend == "jax":
            import jax
            out[f"r{i}_jit"] = np.asarray(jax.jit(fn)(x))
np.savez(f"out_{os.environ['KERAS_BACKEND']}_{int(reference)}.npz", **out)
print("REPORT{}")
"""


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    return {
        f"r{index}": rng.uniform(0, 255, shape).astype(dtype)
        for index, (_, shape, *_, dtype) in enumerate(CASES)
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict[str, np.ndarray]]:
    work = tmp_path_factory.mktemp("tf1_resize")
    (work / "worker.py").write_text(WORKER)
    (work / "cases.json").write_text(json.dumps(CASES))
    np.savez(work / "inputs.npz", **_inputs())
    return saved_outputs(work, [sys.executable, "worker.py", str(HELPER_FILE)], BACKENDS)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(CASES)))
def test_tf1_resize_helper_matches_tensorflow(runs, backend: str, index: int) -> None:
    expected = _float64_on(backend, runs["reference"][f"r{index}"])
    got = runs[backend]
    what = f"tf.compat.v1.image.{CASES[index]} on {backend}"
    _same(expected, got[f"r{index}"], what)
    if f"r{index}_model" in got:
        _same(expected, got[f"r{index}_model"], what + " in a functional model")
    if backend == "jax":
        _same(expected, got[f"r{index}_jit"], what + " under jax.jit")
