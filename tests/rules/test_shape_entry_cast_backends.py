"""Shapes and counts built from K.shape / tf.shape in layer code, converted by `kmigrate
apply`, against the Keras 2 original (tf_keras) on tensorflow, jax and torch, in a
functional model whose dimensions are unknown (a graph on tensorflow, jit on jax) and
called eagerly: a shape entry cast to int32 used to slice (which ops.cast broke on jax:
a traced value cannot bound a slice under jit), a float cast in arithmetic, entries in
reshape / tile / ones / zeros shapes, a shape bound to a name and indexed.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from tests.backend_run import original_and_migrated, run_on_backend

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
        "predict": [
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
    original, migrated = original_and_migrated(tmp_path_factory, textwrap.dedent(LAYER))
    text = (migrated / "layer.py").read_text()
    assert "tensorflow" not in text and "n = keras.ops.shape(x)[1]" in text, text
    argv = [sys.executable, "-c", DRIVER]
    found = {"reference": run_on_backend(argv, "tensorflow", original, legacy_keras=True)}
    for backend in ("tensorflow", "jax", "torch"):
        found[backend] = run_on_backend(argv, backend, migrated)
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
@pytest.mark.parametrize("layer", ["Half", "Norm", "Shapes"])
def test_shape_built_layers_match_keras2(runs, backend: str, layer: str) -> None:
    expected, found = runs["reference"][layer], runs[backend][layer]
    for got, want in zip(found["predict"], expected["predict"], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg="predict")
    np.testing.assert_allclose(found["eager"], expected["eager"], rtol=1e-6, err_msg="eager")
