"""A tf.TensorArray loop of run-time length becomes keras.ops.scan only in the shape where
that is exact (rules/common/catalog/tensor_array_scan.py; proven on tensorflow, jax and
torch against tf_keras in tests/rules/test_tensor_array_scan_backends.py); every other
shape stays refused, KM202 at the constructor and KM207 at each use, with the scan form
to write and the reason."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def _layer(*lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        f"class L(keras.layers.Layer):\n    def call(self, x):\n{body}"
    )


LOOP = (
    "n = tf.shape(x)[1]",
    "ta = tf.TensorArray(tf.float32, size=n)",
    "h = x[:, 0] * 0.0",
    "for i in tf.range(n):",
    "    h = h * 0.5 + x[:, i]",
    "    ta = ta.write(i, h)",
    "return ta.stack() + h[None]",
)


def _with(index: int, *lines: str) -> tuple[str, ...]:
    return (*LOOP[:index], *lines, *LOOP[index + 1 :])


def test_one_state_written_becomes_a_scan() -> None:
    out = apply_to_text(_layer(*LOOP))
    assert (  # with the blank lines ruff and black put around a nested def
        "        h = x[:, 0] * 0.0\n"
        "\n"
        "        def step(h, i):\n"
        "            h = h * 0.5 + x[:, i]\n"
        '            ta = keras.ops.convert_to_tensor(h, dtype="float32")\n'
        "            return h, ta\n"
        "\n"
        "        h, ta = keras.ops.scan(step, h, keras.ops.arange(n))\n"
        "        return ta + h[None]\n"
    ) in out, out
    assert "TensorArray" not in out and "tensorflow" not in out, out
    assert not [f for f in scan_text(out) if f.rule.startswith("KM2")]


def test_no_blank_line_opens_the_function_body() -> None:
    out = apply_to_text(
        _layer(
            "ta = tf.TensorArray(tf.float32, size=tf.shape(x)[1])",
            "for i in tf.range(tf.shape(x)[1]):",
            "    x = x * 0.5",
            "    ta = ta.write(i, x)",
            "return ta.stack()",
        )
    )
    assert "    def call(self, x):\n        def step(x, i):\n" in out, out
    out = apply_to_text(_layer("n = tf.shape(x)[1]", "h = x[:, 0] * 0.0", *LOOP[1:2], *LOOP[3:]))
    assert "        h = x[:, 0] * 0.0\n\n        def step(h, i):\n" in out, out


def test_a_python_range_over_a_symbolic_size_becomes_a_scan() -> None:
    out = apply_to_text(_layer(*_with(3, "for i in range(n):")))
    assert "keras.ops.scan(step, h, keras.ops.arange(n))" in out, out


def test_a_name_called_step_is_not_taken() -> None:
    out = apply_to_text(_layer(*_with(0, "step = 1", "n = tf.shape(x)[1]")))
    assert "def step_2(h, i):" in out and "keras.ops.scan(step_2, h," in out, out


REFUSED = {
    "a value that is not a state": (
        _with(5, "    y = h * 2.0", "    ta = ta.write(i, y)"),
        "not one of the loop's state names",
    ),
    "the loop variable in arithmetic": (
        _with(4, "    h = h * 0.5 + x[:, i] + tf.cast(i, tf.float32)"),
        "used at line",
    ),
    "the loop variable in a slice": (_with(4, "    h = h + x[:, i:i + 1][:, 0]"), "used at line"),
    "a call statement": (_with(4, "    h = h * 0.5 + x[:, i]", "    tf.print(h)"), "line 12"),
    "an attribute assignment": (
        _with(4, "    h = h * 0.5 + x[:, i]", "    self.last = h"),
        "not an assignment to names",
    ),
    "an if": (_with(4, "    if True:", "        h = h * 0.5 + x[:, i]"), "line 11"),
    "a break": (_with(5, "    ta = ta.write(i, h)", "    break"), "line 13"),
    "a nested scope": (_with(4, "    h = (lambda v: v * 0.5)(h) + x[:, i]"), "nested scope"),
    "a state unbound before the loop": (
        _with(2, "h0 = x[:, 0]"),
        "not bound by a statement before the loop",
    ),
    "the loop variable read after the loop": (
        _with(6, "return ta.stack() + h[None] + tf.cast(i, tf.float32)"),
        "read after the loop",
    ),
    "a loop around them": (
        (
            "n = tf.shape(x)[1]",
            "h = x[:, 0] * 0.0",
            "for _ in range(2):",
            "    ta = tf.TensorArray(tf.float32, size=n)",
            "    for i in tf.range(n):",
            "        h = h * 0.5 + x[:, i]",
            "        ta = ta.write(i, h)",
            "    x = tf.transpose(ta.stack(), [1, 0])",
            "return x",
        ),
        "function's own body",
    ),
    "an index into a name the body assigns": (
        _with(4, "    x = x * 1.0", "    h = h * 0.5 + x[:, i]"),
        "used at line",
    ),
    "a global state": (_with(0, "global h", "n = tf.shape(x)[1]"), "global"),
    "a loop with an else": (_with(6, "else:", "    h = h * 1.0", LOOP[6]), "no else"),
    "a bound other than the size": (_with(3, "for i in tf.range(n - 1):"), "tf.range(size)"),
    "a stack inside the loop": (_with(5, LOOP[5], "    y = ta.stack()"), "before the loop ends"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_other_shapes_stay_refused_with_the_reason(case: str) -> None:
    lines, why = REFUSED[case]
    source = _layer(*lines)
    findings = scan_text(source)
    (constructor,) = [f for f in findings if f.symbol == "tf.TensorArray"]
    assert constructor.rule == "KM202", constructor.message
    assert "does not become keras.ops.scan because" in constructor.message, constructor.message
    assert why in constructor.message, constructor.message
    assert any(f.rule == "KM207" for f in findings)
    assert "TensorArray" in apply_to_text(source)


def _manual_ranges(source: str) -> list:
    return [f for f in scan_text(source) if f.symbol == "tf.range" and f.fix is None]


def test_scan_reports_no_manual_range_where_the_scan_fix_rewrites_the_loop() -> None:
    # the scan fix (KM201 at the constructor) rewrites the loop's header, tf.range
    # included: scan agrees with apply and reports nothing manual there
    source = _layer(*LOOP)
    assert "tf.range" not in apply_to_text(source)
    assert _manual_ranges(source) == []
    (constructor,) = [f for f in scan_text(source) if f.symbol == "tf.TensorArray"]
    assert constructor.rule == "KM201" and constructor.fix is not None


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_range_loop_that_stays_is_still_reported(case: str) -> None:
    # where the loop stays (the array refused), its tf.range over a tensor stays manual
    lines, _ = REFUSED[case]
    source = _layer(*lines)
    if "tf.range(n" in "".join(lines) and "tf.range" in apply_to_text(source):
        assert _manual_ranges(source), case
