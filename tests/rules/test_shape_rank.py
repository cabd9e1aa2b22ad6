"""KM204's ``x.shape.rank`` / ``.ndims`` -> ``len(x.shape)`` without a backend: once per
use (a function nested in ``call`` is not read twice), and not where the code compares
the rank with None (it expects an unknown rank, which ``len`` of a TensorFlow shape
raises on): reported there, left as written."""

from __future__ import annotations

import textwrap

from kmigrate.api import apply_to_text, scan_text

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf


    class Norm(tf.keras.layers.Layer):
        def call(self, x):
            def inner(y):
                return y.shape.ndims

            if x.shape.rank is None:
                return x
            return x * inner(x) + x.shape.rank
    """
)


def test_each_use_once_and_none_comparisons_stay() -> None:
    findings = [f for f in scan_text(LEGACY) if f["rule"] == "KM204"]
    assert sorted((f["line"], f["fixable"]) for f in findings) == [
        (8, True),
        (10, False),
        (12, True),
    ]
    converted = apply_to_text(LEGACY)
    assert "return len(y.shape)" in converted and "x * inner(x) + len(x.shape)" in converted
    assert "if x.shape.rank is None:" in converted
