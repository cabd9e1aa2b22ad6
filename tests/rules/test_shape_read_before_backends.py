"""``x.shape[0] or tf.shape(x)[0]`` (TensorFlow's idiom for a dimension known while the
model is built, or not): the left operand has read ``x.shape`` before the call runs, so
``x`` has a shape and the call is ``keras.ops.shape(x)``, not the ``shape_of`` helper
(rules/common/known_tensors.shape_read_before). Checked against tf_keras (Keras 2) on
tensorflow, jax and torch: a free function's parameter given a NumPy array (a known
first dimension, and an empty one, where ``0 or ...`` reads the call), a tensor, and the
symbolic input of a functional model (dimension unknown: the call's value), eagerly,
in predict and, on jax, under jit."""

from __future__ import annotations

import pytest

from tests.backend_run import assert_same_report, layer_runs

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K


def rows(t):
    n = t.shape[0] or tf.shape(t)[0]
    width = t.shape[-1] or K.shape(t)[-1]
    return tf.reshape(t, (n, -1)) * tf.cast(width, "float32")


def first_dim(t):
    return t.shape[0] or tf.shape(t)[0]


def build():
    inputs = keras.Input((4, 3))
    return keras.Model(inputs, keras.layers.Lambda(rows)(inputs))
"""

DRIVER = """
import json
import numpy as np
from layer import build, first_dim, keras, rows

to_tensor = keras.ops.convert_to_tensor if hasattr(keras, "ops") else keras.backend.constant
x = (np.arange(24, dtype="float32").reshape(2, 4, 3) - 5.0) / 10
report = {
    "array": np.asarray(rows(x)).tolist(),
    "empty": int(first_dim(np.zeros((0, 4, 3), "float32"))),
    "tensor": np.asarray(rows(to_tensor(x))).tolist(),
    "predict": np.asarray(build().predict(x, verbose=0)).tolist(),
}
if keras.backend.backend() == "jax":
    import jax

    report["jit"] = np.asarray(jax.jit(rows)(x)).tolist()
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    text, found = layer_runs(tmp_path_factory, LAYER, DRIVER)
    assert "shape_of" not in text and text.count("ops.shape(t)") == 3, text
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_idiom_gives_keras2s_values(runs, backend: str) -> None:
    keys = ("array", "empty", "tensor", "predict")
    assert_same_report(runs[backend], runs["reference"], keys, rtol=1e-6, atol=1e-6)
    if backend == "jax":
        assert_same_report(runs["jax"], runs["reference"], ("array",), rtol=1e-6)
        assert runs["jax"]["jit"] == runs["jax"]["array"]
