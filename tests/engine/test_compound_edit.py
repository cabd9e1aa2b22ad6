"""``ReplaceNode(kind="compound")``: a whole compound statement (a ``for`` loop and its
body) becomes new statements, the old body (as edited by the other edits) where the line
``{body}`` is, the comments around it kept, all or nothing; the splice editor gives the
whole-module editor's bytes."""

from __future__ import annotations

import ast

import pytest

from kmigrate.engine import editor, splice_editor
from kmigrate.engine.model import CallEdit, EditPlan, ReplaceNode, Span
from kmigrate.rules.context_spec import CONTEXT_SPEC

STYLE = CONTEXT_SPEC.import_style

SOURCE = """\
import tensorflow as tf


def f(x, n):
    h = x
    # the loop
    for i in tf.range(n):  # over time
        # first
        h = tf.tanh(h)
        y = h * 2.0  # trailing
        # closing comment
    return h
"""

LOOP = (
    "def step(h, i):\n"
    "    {body}\n"
    "    return h, y\n"
    "h, ys = {name:keras.ops.scan}(step, h, {name:keras.ops.arange}(n))"
)


def _span(text: str, node_type: type, index: int = 0) -> Span:
    node = [n for n in ast.walk(ast.parse(text)) if isinstance(n, node_type)][index]
    return Span(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _both(text: str, plans: list[EditPlan]) -> editor.EditResult:
    whole = editor.apply_plans(text, plans, STYLE)
    pieces = splice_editor.apply_plans(text, plans, STYLE)
    assert pieces.text == whole.text and pieces.failed == whole.failed
    return whole


def test_a_loop_becomes_a_function_and_a_call_keeping_its_body_and_comments() -> None:
    plan = EditPlan((ReplaceNode(_span(SOURCE, ast.For), LOOP, "compound"),))
    result = _both(SOURCE, [plan])
    assert result.applied == [0]
    assert result.text == (
        "import tensorflow as tf\n"
        "from keras import ops\n"
        "\n"
        "\n"
        "def f(x, n):\n"
        "    h = x\n"
        "    # the loop\n"
        "    def step(h, i):  # over time\n"
        "        # first\n"
        "        h = tf.tanh(h)\n"
        "        y = h * 2.0  # trailing\n"
        "        return h, y\n"
        "        # closing comment\n"
        "    h, ys = ops.scan(step, h, ops.arange(n))\n"
        "    return h\n"
    ), result.text


def test_edits_inside_the_body_are_kept() -> None:
    inner = EditPlan((CallEdit(_span(SOURCE, ast.Call, 1), callee="keras.ops.tanh"),))
    write = ReplaceNode(_span(SOURCE, ast.Assign, 2), "y = h * 3.0", "stmt")
    loop = EditPlan((ReplaceNode(_span(SOURCE, ast.For), LOOP, "compound"), write))
    result = _both(SOURCE, [inner, loop])
    assert result.applied == [0, 1]
    assert "        h = ops.tanh(h)\n        y = h * 3.0  # trailing\n" in result.text
    assert "tf." not in result.text and "import tensorflow" not in result.text, result.text


def test_the_body_keeps_its_own_indentation_style() -> None:
    text = SOURCE.replace("    ", "  ")
    plan = EditPlan((ReplaceNode(_span(text, ast.For), LOOP, "compound"),))
    out = _both(text, [plan]).text
    assert "  def step(h, i):  # over time\n    # first\n    h = tf.tanh(h)\n" in out, out
    assert "    return h, y\n    # closing comment\n  h, ys = ops.scan(" in out, out


@pytest.mark.parametrize(
    "text",
    [
        "{body}\n{body}",  # twice
        "x = 1  # {body}",  # not alone on its line
        "x = (\n    {body}\n)",  # not a statement of an indented block
    ],
)
def test_a_plan_it_cannot_make_exactly_is_dropped_whole(text: str) -> None:
    write = ReplaceNode(_span(SOURCE, ast.Assign, 2), "y = h * 3.0", "stmt")
    plan = EditPlan((ReplaceNode(_span(SOURCE, ast.For), text, "compound"), write))
    result = _both(SOURCE, [plan])
    assert result.applied == [] and 0 in result.failed
    assert result.text == SOURCE


def test_a_body_on_the_headers_line_is_refused() -> None:
    text = "def f(x, n):\n    for i in range(n): x = x + 1\n    return x\n"
    plan = EditPlan((ReplaceNode(_span(text, ast.For), "def g(x):\n    {body}", "compound"),))
    result = _both(text, [plan])
    assert result.applied == [] and "header" in result.failed[0]
    assert result.text == text


def test_without_a_body_line_the_statement_is_replaced_whole() -> None:
    text = SOURCE.replace("        # closing comment\n", "")
    plan = EditPlan((ReplaceNode(_span(text, ast.For), "h = h * 0.0", "compound"),))
    out = _both(text, [plan]).text
    assert "    h = x\n    # the loop\n    h = h * 0.0\n    return h\n" in out, out
