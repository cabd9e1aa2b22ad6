"""A tf.TensorArray whose length is read from a tensor's shape at run time is not the
static form: `for i in range(n)` over it fails in a TensorFlow functional model with that
dimension unknown (Keras 2 ran it as a graph loop), so outside the keras.ops.scan shape
(tests/rules/test_tensor_array_scan_rules.py; here the value written is not a state) it
stays manual (KM202 at the constructor, KM207 at each use) with the keras.ops.scan form to
write, which
tests/rules/test_tensor_array_symbolic_backends.py runs."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def _layer(*lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return (
        "import tensorflow as tf\nfrom tensorflow import keras\nfrom tensorflow.keras import "
        "backend as K\n\n\n"
        f"class L(keras.layers.Layer):\n    def call(self, x, steps=3):\n{body}"
    )


def _loop(size: str, bound: str = "n", before: tuple[str, ...] = ()) -> tuple[str, ...]:
    return (
        *before,
        f"ta = tf.TensorArray(tf.float32, size={size})",
        f"for i in range({bound}):",
        "    y = x[:, i] * 2.0",
        "    ta = ta.write(i, y)",
        "return ta.stack()",
    )


SYMBOLIC = {
    "tf.shape entry": _loop("tf.shape(x)[1]", "tf.shape(x)[1]"),
    "name bound to tf.shape": _loop("n", before=("n = tf.shape(x)[1]",)),
    "name bound to K.shape": _loop("n", before=("n = K.shape(x)[1]",)),
    "through two names": _loop("n", before=("s = tf.shape(x)", "n = s[1]")),
    "a cast length": _loop("n", before=("n = K.cast(K.shape(x)[1], 'int32')",)),
}


@pytest.mark.parametrize("case", sorted(SYMBOLIC))
def test_symbolic_length_stays_manual_with_the_scan_form(case: str) -> None:
    source = _layer(*SYMBOLIC[case])
    findings = scan_text(source)
    (constructor,) = [f for f in findings if f.symbol == "tf.TensorArray"]
    assert constructor.rule == "KM202", constructor.message
    assert "is a tensor" in constructor.message and "functional model" in constructor.message
    assert "keras.ops.scan(step, carry, keras.ops.arange(n))" in constructor.message
    uses = [f for f in findings if f.rule == "KM207"]
    assert len(uses) == 2 and all("keras.ops.scan" in f.message for f in uses)
    assert "TensorArray" in apply_to_text(source)


def test_a_graph_range_loop_is_named() -> None:
    source = _layer(*_loop("steps", "steps"))
    source = source.replace("range(steps)", "tf.range(steps)")
    (constructor,) = [f for f in scan_text(source) if f.symbol == "tf.TensorArray"]
    assert "the loop runs over `tf.range(steps)`, a tensor" in constructor.message


@pytest.mark.parametrize(
    "lines",
    [
        _loop("steps", "steps"),  # a parameter: a Python value
        _loop("n", before=("n = 4",)),
        _loop("n", before=("n = K.int_shape(x)[1]",)),  # static (None fails in Keras 2 too)
        _loop("self.steps", "self.steps"),
    ],
)
def test_static_lengths_still_become_a_list(lines) -> None:
    out = apply_to_text(_layer(*lines))
    assert "TensorArray" not in out and "keras.ops.stack(ta)" in out, out


def test_a_for_loop_over_a_symbolic_range_stays_manual() -> None:
    source = _layer(
        "h = x[:, 0]",
        "for i in tf.range(tf.shape(x)[1]):",
        "    h = h * 0.5 + x[:, i]",
        "for i in tf.range(steps):",
        "    h = h + x[:, i]",
        "return h + tf.range(tf.shape(x)[1])",
    )
    ranges = [f for f in scan_text(source) if f.symbol == "tf.range"]
    assert [(f.rule, f.span.line) for f in ranges] == [
        ("KM202", 9),
        ("KM201", 11),
        ("KM201", 13),
    ], [(f.rule, f.span.line, f.message) for f in ranges]
    assert "iterator of a `for` loop and its bound is a tensor" in ranges[0].message
    assert "for i in tf.range(keras.ops.shape(x)[1]):" in apply_to_text(source)
