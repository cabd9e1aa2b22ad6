"""KM531 on the real backends: an octave-convolution block in the shape of titu1994's
keras-octconv builds ``AveragePooling2D()`` with Keras 2's default pool size. Keras 3
requires ``pool_size``, so with only the imports ported the model does not build (TypeError
on every backend); after ``kmigrate apply`` (``pool_size=(2, 2)`` written out) it predicts
what the Keras 2 original (tf_keras) does on TensorFlow, JAX and PyTorch.

Each side runs in its own subprocess: ``KERAS_BACKEND`` (and tf_keras versus Keras 3) is
chosen at import.
"""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import (
    assert_fails_on_every_backend,
    assert_matches_keras2,
    build_and_predict_worker,
)

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    from tensorflow.keras.layers import AveragePooling1D, AveragePooling2D, Conv2D, Input
    from tensorflow.keras.layers import Reshape, UpSampling2D, add
    from tensorflow.keras.models import Model


    def build():
        inputs = Input((8, 8, 3))
        high = Conv2D(4, 3, padding="same", use_bias=False)(inputs)
        low = Conv2D(4, 3, padding="same", use_bias=False)(AveragePooling2D()(inputs))
        merged = add([high, UpSampling2D()(low)])
        rows = Reshape((64, 4))(merged)
        return Model(inputs, AveragePooling1D(padding="same")(rows))
    """
).lstrip("\n")

WORKER = build_and_predict_worker((2, 8, 8, 3))


def test_the_pooled_block_matches_keras2_on_every_backend(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert "AveragePooling2D(pool_size=(2, 2))(inputs)" in converted
    assert 'AveragePooling1D(pool_size=2, padding="same")(rows)' in converted
    assert_matches_keras2(WORKER, LEGACY, converted, tmp_path, atol=1e-5)


def test_without_pool_size_keras3_does_not_build(tmp_path) -> None:
    """The reason for the rule: with only the imports ported, Keras 3 raises."""
    imports_only = LEGACY.replace("tensorflow.keras", "keras")
    assert_fails_on_every_backend(WORKER, imports_only, "TypeError", "pool_size", tmp_path)
