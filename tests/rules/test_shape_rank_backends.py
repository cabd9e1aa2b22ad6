"""KM204 on the real backends: ``x.shape.rank`` outside build's ``input_shape``, as
tensorflow/addons' ``WeightNormalization`` reads its kernel's rank in ``build``
(``list(range(kernel.shape.rank - 1))``). A Keras 3 variable's shape is a tuple, so the
``.rank`` left in place raises ``AttributeError`` on JAX and PyTorch (apply left it with
no finding before); ``len(kernel.shape)`` matches the Keras 2 original on TensorFlow, JAX
and PyTorch with the same weights."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import assert_matches_keras2, build_and_predict_worker, run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf


    class Normed(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight(
                name="kernel", shape=(int(input_shape[-1]), 3), initializer="ones"
            )
            self.axes = list(range(self.kernel.shape.rank - 1))

        def call(self, x):
            kernel = tf.nn.l2_normalize(self.kernel, axis=self.axes)
            return tf.matmul(x, kernel) * float(x.shape.ndims)


    def build():
        inputs = tf.keras.Input((4,))
        return tf.keras.Model(inputs, Normed(name="normed")(inputs))
    """
).lstrip("\n")

WORKER = build_and_predict_worker((3, 4))


def test_the_rank_becomes_len_and_matches_keras2(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert "len(self.kernel.shape) - 1" in converted and "float(len(x.shape))" in converted
    assert ".rank" not in converted and ".ndims" not in converted
    assert_matches_keras2(WORKER, LEGACY, converted, tmp_path)


def test_the_rank_left_in_place_raises_on_jax_and_torch(tmp_path) -> None:
    left = apply_to_text(LEGACY).replace("len(self.kernel.shape)", "self.kernel.shape.rank")
    assert "self.kernel.shape.rank" in left
    module = tmp_path / "converted.py"
    module.write_text(left)
    for backend in ("jax", "torch"):
        got = run_module_worker(WORKER, module, backend, tmp_path)
        assert got.get("error", "").startswith("AttributeError"), (backend, got)
        assert "rank" in got["error"], (backend, got)
