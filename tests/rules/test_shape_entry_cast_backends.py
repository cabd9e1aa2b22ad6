"""Shapes and counts built from K.shape / tf.shape in layer code, converted by `kmigrate
apply`, against the Keras 2 original (tf_keras) on tensorflow, jax and torch, in a
functional model whose dimensions are unknown (a graph on tensorflow, jit on jax) and
called eagerly: a shape entry cast to int32 used to slice (which ops.cast broke on jax:
a traced value cannot bound a slice under jit), a float cast in arithmetic, entries in
reshape / tile / ones / zeros shapes, a shape bound to a name and indexed.
"""

from __future__ import annotations

import pytest

from tests.backend_run import assert_same_report, layer_runs

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K


class Half(keras.layers.Layer):
    def call(self, x):
        n = K.cast(K.shape(x)[1], "int32")
        half = n // 2
        return x[:, :half] * 2.0


class Norm(keras.layers.Layer):
    def call(self, x):
        return x / K.cast(K.shape(x)[1], "float32")


class Shapes(keras.layers.Layer):
    def call(self, x):
        s = tf.shape(x)
        b = K.cast(s[0], "int32")
        m = tf.cast(tf.shape(x)[1], tf.int32)
        t = K.tile(K.expand_dims(x, 1), [1, 2, 1])
        r = K.reshape(t, (b, -1))[:, :m]
        o = tf.ones((b, m)) + tf.zeros((s[0], 1))
        return r * o + tf.reshape(x, [-1, K.shape(x)[1]])


LAYERS = [Half, Norm, Shapes]
"""

DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import LAYERS, keras

report = {}
for layer in LAYERS:
    inputs = keras.Input((None,))
    model = keras.Model(inputs, layer()(inputs))
    shapes = [(2, 4), (3, 6)]  # one traced model, two lengths
    report[layer.__name__] = {
        "predict_each": [
            np.asarray(model.predict(np.linspace(-1, 1, a * b, dtype="float32").reshape(a, b),
                                     verbose=0)).tolist()
            for a, b in shapes
        ],
        "eager": np.asarray(layer()(np.ones((2, 4), "float32") * 0.5)).tolist(),
    }
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    text, found = layer_runs(tmp_path_factory, LAYER, DRIVER)
    assert "tensorflow" not in text and "n = keras.ops.shape(x)[1]" in text, text
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
@pytest.mark.parametrize("layer", ["Half", "Norm", "Shapes"])
def test_shape_built_layers_match_keras2(runs, backend: str, layer: str) -> None:
    keys = ("predict_each", "eager")
    assert_same_report(runs[backend][layer], runs["reference"][layer], keys, rtol=1e-6)
