"""KM509 on the real backends, two shapes found on held-out repositories.

A Keras 2.0-era squeeze-excite block reads its input's
static shape from the private ``_shape_val`` (TensorFlow 2.0-2.3) or ``_keras_shape``
(Keras 2.0-2.2), as titu1994's keras-squeeze-excite-network and keras-contrib's
applications do. No Keras 3 tensor has either: after ``kmigrate apply`` the block raises
AttributeError on TensorFlow, JAX and PyTorch, which is why KM509 reports it as an error;
written as the finding advises (``tuple(x.shape)``), the converted block predicts what the
Keras 2 original (tf_keras) does on every backend.

An attention layer (uzaymacar/attention-mechanisms' shape) builds a ``Dense`` kept as an
attribute and adds its weights by hand, ``self._trainable_weights += ...``: no Keras 3
layer has ``_trainable_weights``, so the converted layer raises while the model is built;
with the line deleted, as the finding says (Keras 3 tracks the attribute's weights), it
matches the Keras 2 original.

Each side runs in its own subprocess: ``KERAS_BACKEND`` (and tf_keras versus Keras 3) is
chosen at import.
"""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text
from tests.backend_run import (
    assert_fails_on_every_backend,
    assert_matches_keras2,
    build_and_predict_worker,
)

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    from tensorflow.keras import layers, models


    def _tensor_shape(tensor):
        return getattr(tensor, "_shape_val")


    def build():
        inputs = layers.Input((3, 3, 8))
        filters = _tensor_shape(inputs)[-1]
        se = layers.GlobalAveragePooling2D()(inputs)
        se = layers.Reshape((1, 1, filters))(se)
        se = layers.Dense(filters // 4, activation="relu", use_bias=False)(se)
        se = layers.Dense(filters, activation="sigmoid", use_bias=False)(se)
        return models.Model(inputs, layers.multiply([inputs, se]))
    """
).lstrip("\n")
# The same block written as the finding says.
ADVISED = LEGACY.replace('getattr(tensor, "_shape_val")', "tuple(tensor.shape)")

LAYER_LEGACY = textwrap.dedent(
    """
    import tensorflow as tf
    from tensorflow.keras.layers import Dense, Input, Layer
    from tensorflow.keras.models import Model


    class Score(Layer):
        def build(self, input_shape):
            self.proj = Dense(units=input_shape[-1], use_bias=False)
            self.proj.build(input_shape=(None, None, input_shape[-1]))
            self._trainable_weights += self.proj.trainable_weights
            super(Score, self).build(input_shape)

        def call(self, inputs):
            return tf.nn.softmax(tf.reduce_sum(self.proj(inputs) * inputs, axis=-1))


    def build():
        inputs = Input((3, 3, 8))
        return Model(inputs, Score()(inputs))
    """
).lstrip("\n")
LAYER_ADVISED = LAYER_LEGACY.replace(
    "        self._trainable_weights += self.proj.trainable_weights\n", ""
)

WORKER = build_and_predict_worker((2, 3, 3, 8))


def test_the_private_shape_is_an_error_finding_apply_leaves() -> None:
    findings = [f for f in scan_text(LEGACY, select=["KM509"]) if f.rule == "KM509"]
    assert [(f.span.line, f.severity.value) for f in findings] == [(5, "error")]
    assert "tuple(x.shape)" in findings[0].message
    assert 'getattr(tensor, "_shape_val")' in apply_to_text(LEGACY)


def test_the_converted_block_fails_on_every_backend(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert_fails_on_every_backend(WORKER, converted, "AttributeError", "_shape_val", tmp_path)


def test_the_advised_form_matches_keras2_on_every_backend(tmp_path) -> None:
    assert_matches_keras2(WORKER, ADVISED, apply_to_text(ADVISED), tmp_path)


def test_trainable_weights_update_is_an_error_apply_leaves(tmp_path) -> None:
    findings = [f for f in scan_text(LAYER_LEGACY, select=["KM509"]) if f.rule == "KM509"]
    assert [(f.span.line, f.severity.value) for f in findings] == [(10, "error")]
    assert "deleted, not ported" in findings[0].message
    converted = apply_to_text(LAYER_LEGACY)
    assert_fails_on_every_backend(
        WORKER, converted, "AttributeError", "_trainable_weights", tmp_path
    )


def test_the_layer_without_the_update_matches_keras2_on_every_backend(tmp_path) -> None:
    assert "_trainable_weights" not in LAYER_ADVISED
    assert_matches_keras2(WORKER, LAYER_LEGACY, apply_to_text(LAYER_ADVISED), tmp_path)
