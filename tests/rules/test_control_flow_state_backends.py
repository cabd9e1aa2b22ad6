"""The control-flow rewrites KM201 still makes (loops, branches, maps and scans over
tensors only, with their functions defined beside the call, in the module, or as
methods) run on tensorflow, jax and torch as the Keras 2 original does (tf_keras), in a
functional model's predict (a graph on tensorflow, jit on jax) and called eagerly; the
loop given a tf.TensorArray is left on TensorFlow (tests/rules/test_control_flow_state_rules.py).
"""

from __future__ import annotations

import pytest

from tests.backend_run import assert_same_report, layer_runs

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras


def halve(r):
    return r * 0.5


class Flow(keras.layers.Layer):
    def grow(self, i, s):
        return i + 1, s * 1.5 + 0.1

    def call(self, x):
        n = tf.shape(x)[1]

        def more(i, s):
            return i < n

        _, grown = tf.while_loop(more, self.grow, [0, x])
        signed = tf.cond(tf.reduce_sum(x) > 0, lambda: grown, lambda: -grown)
        mapped = tf.map_fn(halve, signed)
        summed = tf.scan(lambda acc, r: acc + r, mapped, initializer=tf.zeros_like(x[0]))
        return summed + tf.vectorized_map(lambda r: r * 2.0, x)


class Kept(keras.layers.Layer):
    def call(self, x):
        ta = tf.TensorArray(tf.float32, size=tf.shape(x)[1])
        _, ta = tf.while_loop(
            lambda i, a: i < tf.shape(x)[1], lambda i, a: (i + 1, a.write(i, x[:, i])), [0, ta]
        )
        return ta.stack()
"""

DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import Flow, keras

x = (np.arange(24, dtype="float32").reshape(4, 6) - 9.0) / 10
inputs = keras.Input((6,))
model = keras.Model(inputs, Flow()(inputs))
report = {
    "predict": np.asarray(model.predict(x, verbose=0)).tolist(),
    "eager": np.asarray(Flow()(x)).tolist(),
    "negative": np.asarray(Flow()(-x)).tolist(),
}
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    text, found = layer_runs(tmp_path_factory, LAYER, DRIVER)
    flow, kept = text.split("class Kept")
    assert "tf." not in flow and "keras.ops.while_loop(more, self.grow" in flow, text
    assert "tf.while_loop(" in kept, text
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_rewritten_control_flow_matches_keras2(runs, backend: str) -> None:
    keys = ("predict", "eager", "negative")
    assert_same_report(runs[backend], runs["reference"], keys, rtol=1e-5, atol=1e-5)
