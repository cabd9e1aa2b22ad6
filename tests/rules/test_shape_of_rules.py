"""``K.shape(x)`` / ``tf.shape(x)``: ``keras.ops.shape(x)`` where the code shows ``x`` is a
tensor, else the ``shape_of`` helper (rules/common/known_tensors.py). Keras 2 converts a
Python number or list before reading its shape; ``keras.ops.shape`` reads ``x.shape``,
which they do not have on JAX and PyTorch (tests/rules/test_shape_of_backends.py)."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text

HEADER = """\
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K
"""


def _layer(*lines: str, signature: str = "self, inputs") -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return f"{HEADER}\n\nclass L(keras.layers.Layer):\n    def call({signature}):\n{body}"


# (source, the rewritten shape call)
TENSORS = [
    (_layer("return K.reshape(inputs, (K.shape(inputs)[0], -1))"), "keras.ops.shape(inputs)"),
    (_layer("a, b = inputs", "return K.reshape(a, (K.shape(a)[0], -1)) + b"), "keras.ops.shape(a)"),
    (_layer("return K.reshape(inputs[1], (K.shape(inputs[0])[0], -1))"), "ops.shape(inputs[0])"),
    (
        _layer("h = K.dot(inputs, inputs) * 2.0", "return K.reshape(h, (K.shape(h)[0], -1))"),
        "keras.ops.shape(h)",
    ),
    (
        _layer("if inputs is None:", "    return inputs", "return tf.ones(tf.shape(-inputs))"),
        "keras.ops.shape(-inputs)",
    ),
    (
        f"{HEADER}\nflat = keras.layers.Lambda(lambda t: K.reshape(t, (K.shape(t)[0], -1)))\n",
        "keras.ops.shape(t)",
    ),
    (
        f"{HEADER}\n\ndef flatten(t):\n    return K.reshape(t, (K.shape(t)[0], -1))\n\n\n"
        "flat = keras.layers.Lambda(flatten)\n",
        "keras.ops.shape(t)",
    ),
]

# an earlier operand of the same `or` read `x.shape`: x has one (shape_read_before)
SHAPE_READ = [
    (f"{HEADER}\n\ndef f(x):\n    return x.shape[0] or tf.shape(x)[0]\n", "ops.shape(x)[0]"),
    (
        f"{HEADER}\n\ndef f(o):\n    return o.keys.shape[-1] or K.shape(o.keys)[-1]\n",
        "ops.shape(o.keys)[-1]",
    ),
    (
        f"{HEADER}\n\ndef f(z):\n    return [x.shape[1:] and tf.shape(x)[1] for x in z]\n",
        "ops.shape(x)[1]",
    ),
]

NOT_SHOWN = [
    # the shape read of another value, or after the call, or in a lambda of its own
    (f"{HEADER}\n\ndef f(y, z):\n    return y.shape[1] or K.shape(z)[1]\n", "shape_of(z)"),
    (f"{HEADER}\n\ndef f(z):\n    return tf.shape(z)[0] or z.shape[0]\n", "shape_of(z)"),
    (
        f"{HEADER}\n\ndef f(x, y):\n    return x.shape[0] or ((x := y) is None) + tf.shape(x)[0]\n",
        "shape_of(x)",
    ),
    (
        f"{HEADER}\n\ndef f(x):\n    return x.shape[0] or (lambda x: tf.shape(x)[0])(1)\n",
        "shape_of(x)",
    ),
    # a free function's parameter: any value
    (f"{HEADER}\n\ndef ones_like(x):\n    return tf.ones(K.shape(x))\n", "shape_of(x)"),
    # call's second argument: Keras passes it as it is (a number stays a number)
    (_layer("return tf.ones(K.shape(y))", signature="self, inputs, y"), "shape_of(y)"),
    # the input, where call treats it as a list: a list of tensors is no tensor
    (
        _layer(
            "if isinstance(inputs, list):",
            "    inputs = inputs[0]",
            "return tf.ones(tf.shape(inputs))",
        ),
        "shape_of(inputs)",
    ),
    (_layer("n = len(inputs)", "return tf.ones(tf.shape(inputs)) * n"), "shape_of(inputs)"),
    # ... or gives it to a function that takes a list of tensors
    (
        _layer("h = K.concatenate(inputs)", "return h * K.cast(K.shape(inputs)[0], 'float32')"),
        "shape_of(inputs)",
    ),
    (
        _layer("h = keras.layers.add(inputs)", "return tf.ones(tf.shape(inputs)) + h"),
        "shape_of(inputs)",
    ),
    (
        _layer("for a, b in zip(inputs, inputs):", "    pass", "return tf.ones(K.shape(inputs))"),
        "shape_of(inputs)",
    ),
    # a cast of a shape entry becomes the entry itself (a Python int)
    (
        _layer(
            'n = K.cast(K.shape(inputs)[0], "int32")',
            "return inputs * K.cast(K.shape(n), 'float32')",
        ),
        "shape_of(n)",
    ),
    # a name bound to the input in one branch and to something else in the other
    (
        _layer(
            "if inputs is None:",
            "    v = 0.0",
            "else:",
            "    v = inputs",
            "return tf.ones(tf.shape(v))",
        ),
        "shape_of(v)",
    ),
    # a function given to a Lambda layer, and also called on something else
    (
        f"{HEADER}\n\ndef flatten(t):\n    return K.reshape(t, (K.shape(t)[0], -1))\n\n\n"
        "flat = keras.layers.Lambda(flatten)\nflatten([[1.0]])\n",
        "shape_of(t)",
    ),
    # a method's input that is not call's
    (
        _layer("return tf.ones(tf.shape(inputs))", signature="self, inputs").replace(
            "def call", "def step"
        ),
        "shape_of(inputs)",
    ),
]


@pytest.mark.parametrize(("source", "expected"), TENSORS)
def test_a_tensor_keeps_ops_shape(source: str, expected: str) -> None:
    out = apply_to_text(textwrap.dedent(source))
    assert expected in out and "shape_of" not in out, out


@pytest.mark.parametrize(("source", "expected"), SHAPE_READ)
def test_a_value_whose_shape_was_just_read_keeps_ops_shape(source: str, expected: str) -> None:
    out = apply_to_text(textwrap.dedent(source))
    assert expected in out and "shape_of" not in out, out


@pytest.mark.parametrize(("source", "expected"), NOT_SHOWN)
def test_a_value_not_shown_to_be_a_tensor_takes_the_helper(source: str, expected: str) -> None:
    out = apply_to_text(textwrap.dedent(source))
    assert expected in out and "import shape_of" in out, out
    assert "K.shape" not in out and "tf.shape" not in out, out
