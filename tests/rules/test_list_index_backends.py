"""KM209 on the real backends: bert4keras' ``align`` (a batched expand_dims that indexes
a tensor with a list of ``None`` / ``slice(None)`` built per axis), as GlobalPointer and
the rotary embeddings use it. TensorFlow reads the list as a tuple; JAX refuses it, so
without the rewrite the converted model does not predict there. After ``kmigrate apply``
every backend predicts what tf_keras predicts."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import assert_matches_keras2, build_and_predict_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf
    from tensorflow.keras import backend as K


    def align(tensor, axes, ndim=None):
        assert len(axes) == K.ndim(tensor)
        assert ndim or min(axes) >= 0
        ndim = ndim or max(axes) + 1
        indices = [None] * ndim
        for i in axes:
            indices[i] = slice(None)
        return tensor[indices]


    class PairScores(tf.keras.layers.Layer):
        def call(self, x):
            scores = tf.einsum("bmd,bnd->bmn", x, x)[:, None]
            rows = align(x[..., 0], [0, 2], K.ndim(scores))
            columns = align(x[..., 1], [0, -1], 4)
            heads = align(x[:, 0], [0, 1])
            first = x[[slice(None), None]][:, :, :1, :1]
            return scores * rows + columns + heads[:, :2, None, None] + first

        def compute_output_shape(self, input_shape):
            return (input_shape[0], 1, input_shape[1], input_shape[1])


    def build():
        inputs = tf.keras.Input((5, 3))
        return tf.keras.Model(inputs, PairScores()(inputs))
    """
).lstrip("\n")


def test_the_list_indices_become_tuples():
    converted = apply_to_text(LEGACY)
    assert "return tensor[tuple(indices)]" in converted
    assert "x[(slice(None), None)]" in converted
    found = [f for f in scan_text(LEGACY) if f["rule"] == "KM209"]
    assert [(f["line"], f["severity"], f["fixable"]) for f in found] == [
        (12, "error", True),
        (21, "error", True),
    ]


def test_the_converted_layer_predicts_keras2_values_on_every_backend(tmp_path):
    worker = build_and_predict_worker((2, 5, 3))
    assert_matches_keras2(worker, LEGACY, apply_to_text(LEGACY), tmp_path)
