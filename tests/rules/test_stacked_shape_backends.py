"""``name = tf.stack(values)`` read only as a shape (``rules/common/static_shapes.py``,
``stack_bound_as_tuple``) becomes ``name = tuple(values)``: a group normalisation in the
shape of tensorflow/addons's GroupNormalization (a list of ``tf.shape`` entries, edited,
stacked, given to ``tf.reshape`` and returned beside the reshaped tensor to a caller that
never reads it) converts and computes what tf_keras computes on tensorflow, jax and torch:
inside a functional model with the batch axis unknown (predict: a tf.function graph on
tensorflow, jit on jax), called eagerly, and after one training step; with groups that
reshape (8 channels in 4 groups) and the instance-norm path (8 groups: no reshape)."""

from __future__ import annotations

import pytest

from tests.backend_run import assert_same_report, layer_runs

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras


class Groups(keras.layers.Layer):
    def __init__(self, groups=2, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.groups = groups
        self.axis = axis

    def build(self, input_shape):
        self.gamma = self.add_weight(
            name="gamma", shape=(input_shape[-1],), initializer="random_normal"
        )

    def call(self, inputs):
        input_shape = tf.keras.backend.int_shape(inputs)
        tensor_input_shape = tf.shape(inputs)
        reshaped, group_shape = self._reshape_into_groups(inputs, input_shape, tensor_input_shape)
        mean, variance = tf.nn.moments(reshaped, [1, 2, 4], keepdims=True)
        normalized = (reshaped - mean) * tf.math.rsqrt(variance + 1e-3)
        return tf.reshape(normalized, tensor_input_shape) * self.gamma

    def _reshape_into_groups(self, inputs, input_shape, tensor_input_shape):
        group_shape = [tensor_input_shape[i] for i in range(len(input_shape))]
        is_instance_norm = (input_shape[self.axis] // self.groups) == 1
        if not is_instance_norm:
            group_shape[self.axis] = input_shape[self.axis] // self.groups
            group_shape.insert(self.axis, self.groups)
            group_shape = tf.stack(group_shape)
            reshaped_inputs = tf.reshape(inputs, group_shape)
            return reshaped_inputs, group_shape
        else:
            return inputs[..., None], group_shape
"""

DRIVER = """
import json
import numpy as np
import tensorflow as tf
from layer import Groups, keras

x = np.random.RandomState(0).normal(size=(3, 5, 5, 8)).astype("float32")
report = {}


def numbers(y):
    return np.asarray(y.detach() if hasattr(y, "detach") else y).tolist()


for groups in (4, 8):
    keras.utils.set_random_seed(1)
    inputs = keras.Input((5, 5, 8))  # the batch axis unknown while the model is built
    layer = Groups(groups)
    model = keras.Model(inputs, layer(inputs))
    model.set_weights([np.linspace(0.5, 1.5, 8, dtype="float32")])
    report[f"predict_{groups}"] = np.asarray(model.predict(x, verbose=0)).tolist()
    report[f"eager_{groups}"] = numbers(layer(x))
    model.compile(loss="mse", optimizer=keras.optimizers.SGD(0.1))
    model.fit(x, x * 0.5, epochs=1, batch_size=3, verbose=0)
    report[f"fit_{groups}"] = np.asarray(model.predict(x, verbose=0)).tolist()
print("REPORT" + json.dumps(report))
"""

KEYS = tuple(f"{how}_{groups}" for how in ("predict", "eager", "fit") for groups in (4, 8))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    text, found = layer_runs(tmp_path_factory, LAYER, DRIVER)
    assert "group_shape = tuple(group_shape)" in text, text
    assert "tf." not in text.replace("tensorflow", ""), text
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_a_stacked_shape_read_only_as_a_shape_runs_as_keras2(runs, backend: str) -> None:
    assert_same_report(runs[backend], runs["reference"], KEYS, rtol=1e-5, atol=1e-5)
