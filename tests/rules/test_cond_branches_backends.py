"""A ``tf.cond`` whose predicate is a boolean Keras weight of the layer (a flag made with
``add_weight``, or a ``tf.Variable`` in ``build`` that apply turns into one) becomes
``keras.ops.cond(self.flag.value, ...)``: on tensorflow, jax and torch it takes the branch
Keras 2 (tf_keras) takes, with the flag False and True, called eagerly, in a functional
model's predict (a graph on tensorflow, jit on jax) and after one training step. Given the
variable itself, keras.ops.cond raises on all three (rules/common/catalog/cond_branches.py);
calls whose branches change state stay manual (tests/rules/test_cond_branches_rules.py).
"""

from __future__ import annotations

import pytest

from tests.backend_run import assert_same_report, layer_runs

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras


class FlagCond(keras.layers.Layer):
    def build(self, input_shape):
        self.g = self.add_weight(name="g", shape=(input_shape[-1],), initializer="ones")
        self.flag = self.add_weight(
            name="flag", shape=(), initializer="zeros", dtype=tf.bool, trainable=False
        )

    def call(self, x):
        return x * tf.cond(self.flag, lambda: self.g * 2.0, lambda: self.g - 3.0)


class VariableCond(keras.layers.Layer):
    def build(self, input_shape):
        self.flag = tf.Variable(False, trainable=False)

    def call(self, x):
        return tf.cond(self.flag, lambda: x * 2.0, lambda: x - 3.0)
"""

DRIVER = """
import json
import numpy as np
from layer import FlagCond, VariableCond, keras



def numbers(y):  # a torch tensor that requires grad has no plain numpy()
    return np.asarray(y.detach() if hasattr(y, "detach") else y).tolist()


x = (np.arange(12, dtype="float32").reshape(4, 3) - 5.0) / 10
report = {}
for kind in (FlagCond, VariableCond):
    for flag in (False, True):
        key = f"{kind.__name__}_{flag}"
        layer = kind()
        layer(x)  # built by its first call (tf_keras builds again a layer built by hand)
        layer.flag.assign(flag)
        report[key + "_eager"] = numbers(layer(x))
        inputs = keras.Input((3,))
        model = keras.Model(inputs, layer(inputs))
        report[key + "_predict"] = np.asarray(model.predict(x, verbose=0)).tolist()
        model.compile(loss="mse", optimizer=keras.optimizers.SGD(0.1))
        model.fit(x, x * 0.5, epochs=1, batch_size=4, verbose=0)
        report[key + "_fit"] = np.asarray(model.predict(x, verbose=0)).tolist()
print("REPORT" + json.dumps(report))
"""

KEYS = tuple(
    f"{kind}_{flag}_{how}"
    for kind in ("FlagCond", "VariableCond")
    for flag in (False, True)
    for how in ("eager", "predict", "fit")
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    text, found = layer_runs(tmp_path_factory, LAYER, DRIVER)
    assert "tf.cond" not in text and "tf.Variable" not in text, text
    assert text.count("cond(self.flag.value, lambda:") == 2, text
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_a_weight_predicate_takes_the_keras2_branch(runs, backend: str) -> None:
    assert_same_report(runs[backend], runs["reference"], KEYS, rtol=1e-6, atol=1e-6)
