"""``K.in_train_phase`` in a layer's ``call``: rewritten to a conditional expression only
where the code shows both the choice (``call``'s own ``training``) and what each branch
is (a tensor, a lambda, a nested function: in_train_phase calls callables)."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text

HEADER = "import keras\nfrom keras import backend as K\n\n\nclass L(keras.layers.Layer):\n"


def _layer(body: str, params: str = "self, inputs, training=None") -> str:
    lines = "".join(f"        {line}\n" for line in body.strip().splitlines())
    return HEADER + f"    def call({params}):\n" + lines


def _finding(code: str):
    (finding,) = [f for f in scan_text(code) if f.symbol in ("K.in_train_phase", "K.in_test_phase")]
    return finding


@pytest.mark.parametrize(
    ("body", "written"),
    [
        (
            "x = keras.ops.multiply(inputs, 2.0)\nreturn K.in_train_phase(x, inputs, training)",
            "(x if training else inputs)",
        ),
        (
            "def drop():\n    return inputs * 0.5\n"
            "return K.in_train_phase(drop, inputs, training=training)",
            "(drop() if training else inputs)",
        ),
        (
            "return K.in_test_phase(lambda: inputs - 1.0, inputs * 2.0, training=training)",
            "((inputs * 2.0) if training else (inputs - 1.0))",
        ),
    ],
)
def test_the_choice_becomes_a_conditional_expression(body: str, written: str) -> None:
    code = _layer(body)
    assert _finding(code).fixable
    assert written in apply_to_text(code)


@pytest.mark.parametrize(
    ("body", "params", "why"),
    [
        ("return K.in_train_phase(inputs * 2.0, inputs)", None, "`training` is not passed"),
        ("return K.in_train_phase(self.f, inputs, training=training)", None, "`self.f` may be"),
        (
            "f = make()\nreturn K.in_train_phase(f, inputs, training=training)",
            None,
            "`f` may be",
        ),
        (
            "training = K.learning_phase()\n"
            "return K.in_train_phase(inputs * 2.0, inputs, training)",
            None,
            "assigns `training`",
        ),
        (
            "return K.in_train_phase(inputs * 2.0, inputs, training=flag)",
            "self, inputs, flag=None",
            "not passed as the `training` parameter",
        ),
        (
            "return K.in_train_phase(lambda t: t, inputs, training=training)",
            None,
            "takes arguments",
        ),
    ],
)
def test_what_the_code_does_not_show_stays_manual(body: str, params, why: str) -> None:
    code = _layer(body, params or "self, inputs, training=None")
    finding = _finding(code)
    assert not finding.fixable and why in finding.message, finding.message
    assert "in_train_phase" in apply_to_text(code)


def test_outside_call_it_stays_manual() -> None:
    code = HEADER + (
        "    def helper(self, inputs, training=None):\n"
        "        return K.in_train_phase(inputs * 2.0, inputs, training=training)\n"
    )
    finding = _finding(code)
    assert not finding.fixable and "not directly in a layer's `call`" in finding.message
