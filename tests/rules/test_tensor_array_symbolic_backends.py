"""Why a tf.TensorArray of symbolic length outside the shape apply turns into keras.ops.scan
(here: the value written is not a state; tests/rules/test_tensor_array_scan_backends.py
proves that shape) stays manual, and that the form KM202 tells the user to write instead
is right: against the Keras 2 original (tf_keras), a recurrent
accumulation over `tf.range(tf.shape(x)[1])` written as `keras.ops.scan(step, carry,
keras.ops.arange(n))` gives the same values on tensorflow, jax and torch, in a functional
model whose batch and time dimensions are unknown (a graph on tensorflow, jit on jax) and
called eagerly; the list form the static rewrite writes fails there on tensorflow.
"""

from __future__ import annotations

import sys

import pytest

from tests.backend_run import assert_same_report, run_on_backend

pytestmark = pytest.mark.backends

ORIGINAL = """
import tensorflow as tf
from tensorflow import keras


class Accumulate(keras.layers.Layer):
    def call(self, x):
        n = tf.shape(x)[1]
        ta = tf.TensorArray(tf.float32, size=n)
        h = tf.zeros_like(x[:, 0])
        for i in tf.range(n):
            h = h * 0.5 + x[:, i]
            ta = ta.write(i, h * 2.0)
        return tf.transpose(ta.stack(), [1, 0])
"""

SUGGESTED = """
import keras


class Accumulate(keras.layers.Layer):
    def call(self, x):
        def step(h, i):
            h = h * 0.5 + x[:, i]
            return h, h * 2.0

        n = keras.ops.shape(x)[1]
        _, stacked = keras.ops.scan(step, keras.ops.zeros_like(x[:, 0]), keras.ops.arange(n))
        return keras.ops.transpose(stacked, [1, 0])
"""

# What the static rewrite writes (a list over `range(n)`), had it taken this length.
LIST_FORM = """
import keras


class Accumulate(keras.layers.Layer):
    def call(self, x):
        n = keras.ops.shape(x)[1]
        ta = []
        h = keras.ops.zeros_like(x[:, 0])
        for i in range(n):
            h = h * 0.5 + x[:, i]
            ta.append(h * 2.0)
        return keras.ops.transpose(keras.ops.stack(ta), [1, 0])
"""

DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import Accumulate, keras

report = {}
try:
    inputs = keras.Input((None,))
    model = keras.Model(inputs, Accumulate()(inputs))
    report["predict_each"] = [
        np.asarray(model.predict(x, verbose=0)).tolist()
        for x in (np.linspace(-1, 1, 10, dtype="float32").reshape(2, 5),
                  np.linspace(0, 2, 21, dtype="float32").reshape(3, 7))
    ]
except Exception as error:  # the list form on tensorflow
    report["predict_each"] = type(error).__name__
x = np.linspace(-1, 1, 8, dtype="float32").reshape(2, 4)
report["eager"] = np.asarray(Accumulate()(x)).tolist()
print("REPORT" + json.dumps(report))
"""


def _run(tmp_path_factory, source: str, backend: str, legacy: bool = False) -> dict:
    folder = tmp_path_factory.mktemp("layer")
    (folder / "layer.py").write_text(source)
    return run_on_backend([sys.executable, "-c", DRIVER], backend, folder, legacy_keras=legacy)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    return _run(tmp_path_factory, ORIGINAL, "tensorflow", legacy=True)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_suggested_scan_matches_keras2(tmp_path_factory, reference, backend: str) -> None:
    found = _run(tmp_path_factory, SUGGESTED, backend)
    assert_same_report(found, reference, ("predict_each", "eager"), rtol=1e-6)


def test_the_list_form_fails_with_an_unknown_length_on_tensorflow(tmp_path_factory) -> None:
    found = _run(tmp_path_factory, LIST_FORM, "tensorflow")
    assert isinstance(found["predict_each"], str), found
