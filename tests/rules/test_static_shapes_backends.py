"""Shape and count arguments given as tensors (``rules/static_shapes.py``), on the real
backends: a Keras 2 layer passing ``K.stack([...])`` shapes to ``K.tile`` / ``K.reshape``
/ ``tf.ones`` / ``tf.broadcast_to`` converts (the stack becomes a tuple) and predicts what
tf_keras predicts inside a functional model (the batch axis unknown while it is built) on
tensorflow, jax (predict runs under jit) and torch; the form the rewrite used to write
(``ops.tile(x, ops.stack(...))``, a cast shape entry) cannot be built there, which is
why such a call is refused when its shape stays a tensor."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import original_and_migrated, run_driver, run_on_backend

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K


class Shapes(keras.layers.Layer):
    def call(self, x):
        steps = K.shape(x)[1]
        tiled = K.tile(x, K.stack([1, steps, 1]))
        flat = K.reshape(tiled, K.stack([K.shape(x)[0], -1]))
        ones = tf.ones(tf.stack([K.shape(x)[0], 3]))
        wide = tf.broadcast_to(K.sum(x, axis=-1, keepdims=True), tf.stack([K.shape(x)[0], 4, 3]))
        return K.sum(flat, axis=-1, keepdims=True) * ones + K.sum(wide, axis=[1, 2])[:, None]
"""

DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import Shapes, keras

x = np.arange(24, dtype="float32").reshape(2, 4, 3) / 10
inputs = keras.Input((4, 3))
model = keras.Model(inputs, Shapes()(inputs))
print("REPORT" + json.dumps(np.asarray(model.predict(x, verbose=0)).tolist()))
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return original_and_migrated(tmp_path_factory, textwrap.dedent(LAYER), driver=DRIVER)


def test_the_stacks_become_tuples(folders) -> None:
    text = (folders[1] / "layer.py").read_text()
    assert "stack" not in text and "tensorflow" not in text, text
    assert "ops.tile(x, (1, steps, 1))" in text


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_converted_shapes_predict_what_keras2_did(folders, backend: str) -> None:
    reference = run_driver(folders[0], "tensorflow", legacy_keras=True)
    got = run_driver(folders[1], backend)
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-6)


def test_a_cast_shape_entry_is_refused() -> None:
    code = textwrap.dedent(LAYER).replace(
        "steps = K.shape(x)[1]", "steps = K.cast(K.shape(x)[1], 'int32')"
    )
    (found,) = [f for f in scan_text(code) if f["symbol"] == "K.tile"]
    assert not found["fixable"] and "holds a tensor" in found["message"], found
    assert "K.tile(x, (1, steps, 1))" in apply_to_text(code)  # the stack is a tuple already


WORKER = """
import json
import numpy as np
import keras
from keras import ops

forms = {
    "tile_stack": lambda x: ops.tile(x, ops.stack([1, ops.shape(x)[1], 1])),
    "ones_stack": lambda x: ops.ones(ops.stack([ops.shape(x)[0], 3])) + ops.sum(x),
    "ones_cast": lambda x: ops.ones((ops.cast(ops.shape(x)[0], "int32"), 3)) + ops.sum(x),
}
out = {}
for name, form in forms.items():
    try:
        inputs = keras.Input((4, 3))
        model = keras.Model(inputs, keras.layers.Lambda(form)(inputs))
        model.predict(np.zeros((2, 4, 3), "float32"), verbose=0)
        out[name] = "built"
    except Exception as error:
        out[name] = type(error).__name__
print("REPORT" + json.dumps(out))
"""


def test_the_tensor_forms_cannot_be_built_on_jax(tmp_path) -> None:
    """What a rewrite to ops.stack / ops.cast would give: none builds on jax."""
    got = run_on_backend([sys.executable, "-c", WORKER], "jax", tmp_path)
    assert "built" not in got.values(), got
