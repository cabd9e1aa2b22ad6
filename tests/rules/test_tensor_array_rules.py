"""tf.TensorArray without backends: the static loop form becomes a list (KM201, every use
in one fix; proven in tests/rules/test_tensor_array_backends.py); every other form is refused
at the constructor (KM202) and reported at each use (KM207) with what to write instead."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def _layer(*lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        f"class L(keras.layers.Layer):\n    def call(self, x, n=3):\n{body}"
    )


STATIC = (
    "ta = tf.TensorArray(tf.float32, size=n)",
    "for i in range(n):",
    "    y = x[:, i] + 1.0",
    "    ta = ta.write(i, y)",
    "return ta.stack()",
)


def test_static_accumulation_becomes_a_list() -> None:
    out = apply_to_text(_layer(*STATIC))
    assert "ta = []\n" in out and "return keras.ops.stack(ta)" in out, out
    assert 'ta.append(keras.ops.convert_to_tensor(y, dtype="float32"))' in out, out
    assert "TensorArray" not in out and "tensorflow" not in out, out


def _replace(index: int, line: str) -> tuple[str, ...]:
    lines = list(STATIC)
    lines[index] = line
    return tuple(lines)


WHILE_LOOP = (
    "ta = tf.TensorArray(tf.float32, size=n)",
    "_, ta = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a.write(i, x)), [0, ta])",
    "return ta.stack()",
)


@pytest.mark.parametrize(
    ("lines", "why", "uses"),
    [
        (_replace(0, "ta = tf.TensorArray(tf.float32, size=n, dynamic_size=True)"), "symbolic", 2),
        (_replace(1, "for i in tf.range(n):"), "range(size)", 2),
        (_replace(1, "for i in range(n - 1):"), "range(size)", 2),
        (_replace(3, "    ta = ta.write(i, tf.nn.relu(y))"), "own statement", 2),
        (_replace(3, "    ta = ta.write(i, y) if i else ta"), "passed on", 3),
        (_replace(4, "return ta.read(0)"), "read with .read()", 2),
        (_replace(4, "return ta.unstack(x)"), "read with .unstack()", 2),
        (_replace(0, "ta = tf.TensorArray(self.dtype, size=n)"), "literal dtype", 2),
        ((*STATIC[:4], "    if i > 1:", "        break", "return ta.stack()"), "no break", 2),
        (WHILE_LOOP, "passed on", 2),
    ],
)
def test_other_forms_are_refused_and_each_use_reported(lines, why: str, uses: int) -> None:
    findings = scan_text(_layer(*lines))
    (constructor,) = [
        f for f in findings if f.rule in ("KM201", "KM202") and f.symbol == "tf.TensorArray"
    ]
    assert constructor.rule == "KM202" and constructor.fix is None
    assert why in constructor.message, constructor.message
    reported = [f for f in findings if f.rule == "KM207"]
    assert len(reported) == uses and all(f.fix is None for f in reported), [
        (f.span.line, f.message) for f in reported
    ]
    assert all("fori_loop" in f.message for f in reported)
    assert "TensorArray" in apply_to_text(_layer(*lines))
