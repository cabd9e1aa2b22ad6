"""KM511 on the real backends: a ``Lambda`` whose ``output_shape`` Keras 2 never read.

Keras 2 built a functional model by tracing a ``Lambda``'s function, so an
``output_shape`` with ``None`` where the traced shape has sizes (a transformer's
classification slice ``Lambda(lambda x: x[:, 0], output_shape=(None,))``, a pooled
``lambda s: (s[0], None)``) or one written as a list did no harm there. Keras 3 takes it
as written: the ``Dense`` after it cannot build (a ``None`` input size) and a list raises
TypeError, on tensorflow, jax and torch alike. ``kmigrate apply`` removes it; the
converted model then predicts what the Keras 2 original predicts on every backend.
"""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import (
    assert_fails_on_every_backend,
    assert_matches_keras2,
    build_and_predict_worker,
)

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf
    from tensorflow import keras
    from tensorflow.keras import backend as K


    def build():
        tokens = keras.Input((6, 8))
        x = keras.layers.Dense(8, activation="tanh", name="encode")(tokens)
        cls = keras.layers.Lambda(lambda t: t[:, 0], output_shape=(None,), name="cls")(x)
        pooled = keras.layers.Lambda(
            lambda t: K.sum(t, axis=1), lambda s: (s[0], None), name="pooled"
        )(x)
        last = keras.layers.Lambda(lambda t: t[:, -1], output_shape=[8], name="last")(x)
        joined = keras.layers.Concatenate()([cls, pooled, last])
        return keras.Model(tokens, keras.layers.Dense(2, name="head")(joined))
    """
).lstrip("\n")


def test_the_output_shapes_keras2_never_read_are_removed() -> None:
    converted = apply_to_text(LEGACY)
    assert "output_shape" not in converted and "lambda s:" not in converted, converted
    assert 'keras.layers.Lambda(lambda t: t[:, 0], name="cls")' in converted
    found = [f for f in scan_text(LEGACY) if f["rule"] == "KM511"]
    assert [(f["line"], f["severity"], f["fixable"]) for f in found] == [
        (9, "error", True),
        (10, "error", True),
        (13, "error", True),
    ]


def test_the_converted_model_predicts_keras2_values_on_every_backend(tmp_path) -> None:
    worker = build_and_predict_worker((3, 6, 8))
    assert_matches_keras2(worker, LEGACY, apply_to_text(LEGACY), tmp_path)


def test_kept_output_shapes_do_not_build_on_any_backend(tmp_path) -> None:
    # the same conversion with the output shapes left as written: what the finding prevents
    kept = apply_to_text(LEGACY, select=["KM1", "KM2"])
    assert "output_shape=(None,)" in kept
    worker = build_and_predict_worker((3, 6, 8))
    # the list first (the Lambda's own call raises), then, without it, the None sizes
    without_list = kept.replace(", output_shape=[8]", "")
    assert without_list != kept
    for name, text, error, needle in (
        ("list", kept, "TypeError", "TrackedList"),
        ("none", without_list, "ValueError", "must be fully-defined"),
    ):
        (tmp_path / name).mkdir()
        assert_fails_on_every_backend(worker, text, error, needle, tmp_path / name)
