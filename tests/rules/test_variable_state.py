"""KM203 without backends: a layer's variables convert all or nothing, and the dtypes
TensorFlow fixes by how a value is written are read (and nothing else is guessed).
tests/rules/test_variable_all_or_nothing_backends.py proves the converted layer on backends."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def _layer(*statements: str, method: str = "build") -> str:
    body = "".join(f"        {s}\n" for s in statements)
    return (
        "import numpy as np\nimport tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        f"class L(keras.layers.Layer):\n    def {method}(self, input_shape):\n{body}"
    )


def _km203(code: str) -> list:
    return [f for f in scan_text(code, select=["KM203"]) if f.rule == "KM203"]


EASY = "self.gain = tf.Variable(tf.ones((4,)), name='gain')"


@pytest.mark.parametrize(
    "hard",
    [
        "self.table = tf.Variable(self.make(input_shape))",  # dtype unknown
        "self.table = tf.Variable(np.arange(4.0))",  # NumPy's float64, not written
        "table = tf.Variable(tf.zeros((4,)))",  # not an attribute: not the layer's
        "self.t = tf.Variable(tf.zeros((4,)), synchronization=s)",  # no add_weight form
    ],
)
def test_one_variable_that_stays_keeps_the_layers_others(hard: str) -> None:
    found = _km203(_layer(EASY, hard))
    assert len(found) == 2 and not any(f.fix for f in found), [f.message for f in found]
    easy = next(f for f in found if f.span.line == 8)
    assert "all or nothing" in easy.message and "line 9" in easy.message, easy.message
    assert "tf.Variable" in apply_to_text(_layer(EASY, hard), select=["KM203"])


def test_all_or_nothing_spans_init_and_build_and_stops_at_nested_classes() -> None:
    code = (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        "class L(keras.layers.Layer):\n"
        "    def __init__(self, **kwargs):\n"
        "        super().__init__(**kwargs)\n"
        "        self.count = tf.Variable(0.0, trainable=False)\n\n"
        "    def build(self, input_shape):\n"
        "        self.gain = tf.Variable(tf.ones((4,)))\n\n"
        "    class Inner(keras.layers.Layer):\n"
        "        def build(self, input_shape):\n"
        "            self.t = tf.Variable(self.make())\n"
    )
    found = {f.span.line: f for f in _km203(code)}
    assert found[8].fix is not None and found[11].fix is not None
    assert found[15].fix is None
    broken = code.replace("tf.Variable(tf.ones((4,)))", "tf.Variable(self.make())")
    found = {f.span.line: f for f in _km203(broken)}
    assert found[8].fix is None and "line 11" in found[8].message, found[8].message


@pytest.mark.parametrize(
    ("statement", "after"),
    [
        (
            "self.b = tf.Variable(tf.ones((input_shape[-1],)) * 1.5)",
            'keras.Variable(tf.ones((input_shape[-1],)) * 1.5, dtype="float32")',
        ),
        (
            "self.b = tf.Variable(2 * tf.zeros(self.shape, dtype=tf.float16) - 1)",
            'dtype="float16"',
        ),
        ("self.c = tf.Variable(tf.constant(3))", 'dtype="int32", trainable=False'),
        ("self.c = tf.Variable(tf.constant(3) * 2)", 'dtype="int32", trainable=False'),
        ("self.c = tf.Variable(tf.constant([1, 2.5]))", 'dtype="float32"'),
        ("self.c = tf.Variable([[1.0, 2.0], [3, 4]])", 'dtype="float32"'),
        ("self.c = tf.Variable([True, False])", 'dtype="bool", trainable=False'),
        ("self.c = tf.Variable(-tf.ones(self.shape))", 'dtype="float32"'),
        ("self.c = tf.Variable(tf.constant(self.t, dtype='int64'))", 'dtype="int64"'),
    ],
)
def test_evident_dtypes_are_written(statement: str, after: str) -> None:
    out = apply_to_text(_layer(statement), select=["KM203"])
    assert "keras.Variable(" in out and after in out, out


@pytest.mark.parametrize(
    "statement",
    [
        "self.c = tf.Variable(tf.constant(3) * 1.5)",  # TensorFlow raises: int32 * float
        "self.c = tf.Variable(tf.ones(self.shape) / self.n)",  # not a literal operand
        "self.c = tf.Variable(tf.ones(self.shape) * self.scale)",
        "self.c = tf.Variable(tf.constant(self.table))",  # the value's dtype is unknown
        "self.c = tf.Variable(tf.constant(2**40))",  # int64, not int32
        "self.c = tf.Variable([1, True])",  # TensorFlow refuses the mix
        "self.c = tf.Variable(tf.zeros(self.shape, dtype=self.kind))",
    ],
)
def test_dtypes_that_are_not_evident_stay(statement: str) -> None:
    (found,) = _km203(_layer(statement))
    assert found.fix is None and "dtype is not written" in found.message, found.message


@pytest.mark.parametrize(
    ("statement", "converts"),
    [
        ("self.step = tf.Variable(0)", False),  # Keras 2: trainable, listed first
        ("self.step = tf.Variable(tf.constant([1, 2]))", False),
        ("self.step = tf.Variable(0, trainable=False)", True),  # the same list in both
    ],
)
def test_integer_state_that_would_reorder_the_weights_stays(statement: str, converts) -> None:
    code = _layer(statement, "self.w = self.add_weight(name='w', shape=(2,))")
    (found,) = _km203(code)
    assert (found.fix is not None) is converts, found.message
    if not converts:
        assert "order of the layer's weights" in found.message, found.message
    (alone,) = _km203(_layer(statement))  # a layer's only weight has one order
    assert alone.fix is not None, alone.message
