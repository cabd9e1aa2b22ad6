"""tf.TensorArray accumulation in a Python loop of static length, converted by `kmigrate
apply` to a list and keras.ops.stack (KM201), against the Keras 2 original (tf_keras) on
tensorflow, jax and torch: the values written (a tensor per step, and Python ints into an
int32 array and into a float32 one, which `write` converts to the array's dtype), in a
functional model's predict (a graph on tensorflow, jit on jax) and called eagerly.
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


def scale_table():
    table = tf.TensorArray(tf.float32, size=2)
    for t in range(2):
        table = table.write(t, t + 1)
    return table.stack()


class Accumulate(keras.layers.Layer):
    def call(self, x):
        steps = 3
        outputs = tf.TensorArray(tf.float32, size=steps)
        for t in range(steps):
            step = x[:, t] * 2.0 + 1.0
            outputs = outputs.write(t, step)
        counts = tf.TensorArray(tf.int32, size=steps)
        for t in range(steps):
            counts = counts.write(t, t * 2)
        scales = tf.TensorArray(tf.float32, size=2)
        for t in range(2):
            scales = scales.write(t, t + 1)
        stacked = tf.transpose(outputs.stack(), [1, 0, 2])
        total = tf.cast(tf.reduce_sum(counts.stack()), "float32")
        return stacked * total * tf.reduce_sum(scales.stack())
"""

DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import Accumulate, keras, scale_table

x = np.arange(24, dtype="float32").reshape(2, 3, 4) / 10
inputs = keras.Input((3, 4))
model = keras.Model(inputs, Accumulate()(inputs))
report = {
    "predict": np.asarray(model.predict(x, verbose=0)).tolist(),
    "eager": np.asarray(Accumulate()(x)).tolist(),
    # a Python int written into a float32 array is a float32 element
    "table": str(np.asarray(scale_table()).dtype),
}
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    original, migrated = original_and_migrated(tmp_path_factory, textwrap.dedent(LAYER))
    text = (migrated / "layer.py").read_text()
    assert "TensorArray" not in text and "tensorflow" not in text, text
    assert 'convert_to_tensor(t * 2, dtype="int32")' in text, text
    argv = [sys.executable, "-c", DRIVER]
    found = {"reference": run_on_backend(argv, "tensorflow", original, legacy_keras=True)}
    for backend in ("tensorflow", "jax", "torch"):
        found[backend] = run_on_backend(argv, backend, migrated)
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_list_accumulation_matches_the_tensor_array(runs, backend: str) -> None:
    expected = runs["reference"]
    assert runs[backend]["table"] == expected["table"] == "float32"
    for key in ("predict", "eager"):
        np.testing.assert_allclose(
            runs[backend][key], expected[key], rtol=1e-6, atol=1e-6, err_msg=key
        )
