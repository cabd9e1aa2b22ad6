"""Layers that read shapes as real Keras 2 models do (bert4keras, tf-addons: written
here in their shape, not copied), converted by ``kmigrate apply`` with no finding left,
predicting what Keras 2 predicts on tensorflow, jax and torch.

1. a shape followed through local names: ``shape = K.shape(x)`` unpacked by index,
   rebound (``shape = [s or shape[i] for i, s in enumerate(K.int_shape(x))]``);
2. the product of a shape's dimensions, ``K.prod(K.shape(x)[1:3])`` and ``K.prod`` of a
   slice of such a list: the ``shape_prod`` helper, a Python int where known;
3. ``tf.split`` with a count and sizes held by the layer (one of them -1): the ``split``
   helper;
4. a group normalization in tf-addons' shape: ``tf.shape(x)`` passed to a method that
   indexes it in a ``range`` loop, the list then a reshape's shape.

Every input has dimensions the model does not know while it is built (a graph on
tensorflow, symbolic dimensions on JAX, stand-in sizes on PyTorch), so shape entries are
tensors there; ``predict`` runs under jit on JAX. The model is also called eagerly.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend_run import project_runs_on_backends

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

LAYERS = '''
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K


def flatten(tensor, start=None, end=None):
    """Axes start..end merged into one."""
    start, end = start or 0, end or K.ndim(tensor)
    shape = K.shape(tensor)
    shape = [s or shape[i] for i, s in enumerate(K.int_shape(tensor))]
    shape = shape[:start] + [K.prod(shape[start:end])] + shape[end:]
    return K.reshape(tensor, shape)


class PositionAdd(keras.layers.Layer):
    def build(self, input_shape):
        self.table = self.add_weight(
            name="table", shape=(16, input_shape[-1]), initializer="zeros"
        )
        super().build(input_shape)

    def call(self, inputs):
        input_shape = K.shape(inputs)
        batch_size, seq_len = input_shape[0], input_shape[1]
        positions = K.tile(self.table[None, :seq_len], [batch_size, 1, 1])
        return inputs + positions

    def compute_output_shape(self, input_shape):
        return input_shape


class MergeAxes(keras.layers.Layer):
    def call(self, x):
        n = K.prod(K.shape(x)[1:3])
        merged = K.reshape(x, (-1, n, K.shape(x)[-1]))
        return merged * 2.0 + K.reshape(flatten(x, 1), (-1, n, K.shape(x)[-1]))


class Heads(keras.layers.Layer):
    def __init__(self, heads, units, **kwargs):
        super().__init__(**kwargs)
        self.heads = heads
        self.units = units

    def call(self, x):
        parts = tf.split(x, self.heads, axis=-1)
        u, v = tf.split(x, [self.units, -1], axis=-1)
        pooled = K.sum(K.stack(parts, axis=-2), axis=-2)
        return K.concatenate([pooled, u * 2.0, v])


class GroupNorm(keras.layers.Layer):
    def __init__(self, groups, **kwargs):
        super().__init__(**kwargs)
        self.groups = groups

    def call(self, inputs):
        input_shape = K.int_shape(inputs)
        tensor_input_shape = tf.shape(inputs)
        grouped = self._reshape_into_groups(inputs, input_shape, tensor_input_shape)
        mean = K.mean(grouped, axis=[1, 2, 4], keepdims=True)
        variance = K.var(grouped, axis=[1, 2, 4], keepdims=True)
        normalized = (grouped - mean) / K.sqrt(variance + 1e-3)
        return tf.reshape(normalized, tensor_input_shape)

    def _reshape_into_groups(self, inputs, input_shape, tensor_input_shape):
        group_shape = [tensor_input_shape[i] for i in range(len(input_shape))]
        group_shape[-1] = input_shape[-1] // self.groups
        group_shape.insert(-1, self.groups)
        return tf.reshape(inputs, group_shape)
'''

DRIVER = """
import json, os
import numpy as np
from tensorflow import keras
to_numpy = np.asarray
if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
    import keras
    to_numpy = keras.ops.convert_to_numpy
from model.layers import GroupNorm, Heads, MergeAxes, PositionAdd

rng = np.random.default_rng(3)
seq = rng.standard_normal((2, 5, 8)).astype("float32")
image = rng.standard_normal((2, 3, 4, 6)).astype("float32")
a = keras.Input(shape=(None, 8))
b = keras.Input(shape=(None, None, 6))
position = PositionAdd()
outputs = [Heads(2, 3)(position(a)), MergeAxes()(b), GroupNorm(3)(b)]
model = keras.Model([a, b], outputs)
position.set_weights([np.linspace(-1, 1, 16 * 8).reshape(16, 8).astype("float32")])
report = {
    "predict": [np.asarray(o).tolist() for o in model.predict([seq, image], verbose=0)],
    "call": [np.asarray(to_numpy(o)).tolist() for o in model([seq, image])],
}
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def project_runs(tmp_path_factory):
    files = {"model/__init__.py": "", "model/layers.py": LAYERS, "driver.py": DRIVER}
    return project_runs_on_backends(tmp_path_factory, files, BACKENDS)


def test_apply_leaves_no_shape_finding(project_runs) -> None:
    from kmigrate.api import scan_text

    written, _ = project_runs
    layer = next(text for path, text in written.items() if path.endswith("layers.py"))
    helpers = next(text for path, text in written.items() if path.endswith("_keras2_compat.py"))
    imports = [line for line in layer.splitlines() if "_keras2_compat import" in line]
    assert len(imports) == 1 and "shape_prod" in imports[0] and "split" in imports[0], imports
    assert "def shape_prod(" in helpers and "def split(" in helpers
    assert "tf." not in layer and "K." not in layer, layer
    assert [f for f in scan_text(layer) if f["rule"].startswith("KM2")] == []


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["predict", "call"])
def test_converted_layers_compute_what_keras2_computes(project_runs, backend: str, how) -> None:
    _, runs = project_runs
    for index, (expected, got) in enumerate(zip(runs["reference"][how], runs[backend][how])):
        expected, got = np.asarray(expected, "float32"), np.asarray(got, "float32")
        assert got.shape == expected.shape, f"output {index} ({how}) on {backend}"
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=f"{index} {how}")
