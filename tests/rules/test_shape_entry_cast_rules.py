"""`K.cast(K.shape(x)[i], "int32")` (int32 already in Keras 2) becomes the shape entry,
which keras.ops.shape keeps a Python int where it can: ops.cast made it a traced value
that could not slice or shape under jit on JAX (tests/rules/test_shape_entry_cast_backends.py).
Every other cast stays ops.cast; a shape argument built from such a cast is rewritten."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def _apply(*lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    source = (
        "import tensorflow as tf\nfrom tensorflow import keras\nfrom tensorflow.keras import "
        f"backend as K\n\n\nclass L(keras.layers.Layer):\n    def call(self, x):\n{body}"
    )
    return apply_to_text(source)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('n = K.cast(K.shape(x)[0], "int32")', "n = keras.ops.shape(x)[0]"),
        ("n = tf.cast(tf.shape(x)[-1], tf.int32)", "n = keras.ops.shape(x)[-1]"),
        ("n = tf.cast(tf.shape(x)[1], dtype='int32')", "n = keras.ops.shape(x)[1]"),
        (
            'n = K.cast(K.shape(x)[1], "float32")',
            'keras.ops.cast(keras.ops.shape(x)[1], "float32")',
        ),
        ('n = K.cast(K.shape(x)[1:], "int32")', 'keras.ops.cast(keras.ops.shape(x)[1:], "int32")'),
        ('n = K.cast(x[0], "int32")', 'n = keras.ops.cast(x[0], "int32")'),
        ("n = tf.cast(tf.shape(x)[1], tf.int64)", 'keras.ops.cast(keras.ops.shape(x)[1], "int64")'),
    ],
)
def test_only_an_int32_cast_of_a_shape_entry_goes(line: str, expected: str) -> None:
    out = _apply(line, "return x")
    assert expected in out, out


def test_through_a_shape_name_and_into_shape_arguments() -> None:
    out = _apply(
        "s = tf.shape(x)",
        'n = K.cast(s[0], "int32")',
        'm = K.cast(K.shape(x)[1], "int32")',
        "return tf.ones((n, m)) + tf.reshape(x, (n, -1))[:, :m]",
    )
    assert "n = s[0]" in out and "m = keras.ops.shape(x)[1]" in out, out
    assert "keras.ops.ones((n, m))" in out and "keras.ops.reshape(x, (n, -1))" in out, out
    assert "tensorflow" not in out, out


@pytest.mark.parametrize(
    "source",
    [
        "pos = keras.layers.Lambda(lambda x: tf.shape(x)[1])(keras.Input((None, 4)))\n",
        "pos = keras.layers.Lambda(lambda x: K.shape(x)[-1], name='n')(keras.Input((4,)))\n",
    ],
)
def test_a_returned_shape_entry_is_refused_with_the_tensor_form(source: str) -> None:
    header = "import tensorflow as tf\nfrom tensorflow import keras\n"
    header += "from tensorflow.keras import backend as K\n\n"
    findings = [f for f in scan_text(header + source) if f.symbol in ("tf.shape", "K.shape")]
    assert [(f.rule, f.fix is None) for f in findings] == [("KM202", True)], findings
    assert "ops.convert_to_tensor(ops.shape(x)[i]" in findings[0].message


def test_a_helper_returning_a_shape_entry_still_converts() -> None:
    out = apply_to_text(
        "from tensorflow.keras import backend as K\n\n\ndef length(x):\n    return K.shape(x)[1]\n"
    )
    # x may be a Python number or list here: the helper reads its shape as Keras 2 did
    assert "return shape_of(x)[1]" in out, out
