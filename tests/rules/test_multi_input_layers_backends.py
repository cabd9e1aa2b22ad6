"""Multi-input layers called on one flat list of tensors, converted by `kmigrate apply`,
against the Keras 2 original (tf_keras) on tensorflow, jax and torch in a functional
model with two inputs: `call(inputs)` unpacking the list, `build` reading the list of
shapes (by index, and with `input_shape[0].as_list()`, `.rank` and `.is_fully_defined()`,
which KM204 rewrites), a
`compute_output_shape` on the list, a mask list (`compute_mask`), and a one-element list.
"""

from __future__ import annotations

import pytest

from tests.backend_run import assert_same_report, layer_runs

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras


class Combine(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(
            name="w", shape=(int(input_shape[0][-1]), int(input_shape[1][-1])), initializer="ones"
        )
        super().build(input_shape)

    def call(self, inputs):
        a, b = inputs
        return tf.matmul(a, self.w) * b

    def compute_output_shape(self, input_shape):
        return input_shape[1]


class ListShape(keras.layers.Layer):
    def build(self, input_shape):
        dims = input_shape[0].as_list()
        if input_shape[1].rank != 3 or input_shape[0].is_fully_defined():
            raise ValueError("a batch of sequences, batch size unknown")
        self.w = self.add_weight(name="w", shape=(dims[-1],), initializer="ones")

    def call(self, inputs):
        return inputs[0] * self.w + inputs[1]

    def compute_output_shape(self, input_shape):
        return input_shape[0].as_list()


class Masked(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        x, y = inputs
        if mask is not None and mask[0] is not None:
            x = x * tf.cast(tf.expand_dims(mask[0], -1), x.dtype)
        return tf.concat([x, y], axis=-1)

    def compute_mask(self, inputs, mask=None):
        return None if mask is None else mask[0]


class Single(keras.layers.Layer):
    def call(self, inputs):
        return inputs[0] * 2.0
"""

DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
import layer
keras = layer.keras

a_ = np.linspace(-1, 1, 24, dtype="float32").reshape(2, 3, 4)
a_[0, 1] = 0.0  # a masked step
b_ = np.linspace(0, 2, 24, dtype="float32").reshape(2, 3, 4)
report = {}
for name in ("Combine", "ListShape", "Masked", "Single"):
    a, b = keras.Input((3, 4)), keras.Input((3, 4))
    if name == "Masked":
        out = keras.layers.GlobalAveragePooling1D()(
            layer.Masked()([keras.layers.Masking(0.0)(a), b])
        )
    elif name == "Single":
        out = layer.Single()([a])
    else:
        out = getattr(layer, name)()([a, b])
    model = keras.Model([a, b], out)
    report[name] = np.asarray(model.predict([a_, b_], verbose=0)).tolist()
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    text, found = layer_runs(tmp_path_factory, LAYER, DRIVER)
    assert "as_list" not in text and "rank" not in text and "tensorflow" not in text, text
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
@pytest.mark.parametrize("name", ["Combine", "ListShape", "Masked", "Single"])
def test_multi_input_layers_match_keras2(runs, backend: str, name: str) -> None:
    assert_same_report(runs[backend], runs["reference"], (name,), rtol=1e-6, atol=1e-6)
