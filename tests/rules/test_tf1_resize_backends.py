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

import numpy as np
import pytest

from tests.backend_run import HELPER_WORKER_HEAD, helper_outputs
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

WORKER = (
    HELPER_WORKER_HEAD
    + r"""
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
    fixed = {"resize_bilinear": "bilinear", "resize_nearest_neighbor": "nearest"}
    for i, (function, shape, size, method, align, dtype) in enumerate(cases):
        how = fixed.get(function, method)
        skip = function in ("resize_images", "resize")
        fn = lambda t, size=tuple(size), how=how, align=align, skip=skip: compat.tf1_resize(
            t, size, how, align_corners=align, skip_same_size=skip
        )
        record(f"r{i}", fn, data[f"r{i}"], dtype == "float32" and len(shape) == 4)
save()
"""
)


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    return {
        f"r{index}": rng.uniform(0, 255, shape).astype(dtype)
        for index, (_, shape, *_, dtype) in enumerate(CASES)
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict[str, np.ndarray]]:
    return helper_outputs(tmp_path_factory, WORKER, CASES, _inputs(), BACKENDS)


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
