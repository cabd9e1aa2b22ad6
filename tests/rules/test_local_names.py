"""Which assignment a local name's read sees (rules/common/local_names.py): the shape
rules rewrite ``tf.shape`` only where every read of it is known, so each ambiguous case
(a branch, a loop, a closure, ``global``, ``+=``) must come back as unknown."""

from __future__ import annotations

import ast
import textwrap

from kmigrate.engine.module_info import ModuleInfo
from kmigrate.rules.common.local_names import (
    bound_value,
    parameter_reads,
    possible_values,
    reads_of,
)
from kmigrate.rules.context_spec import CONTEXT_SPEC


def _module(text: str) -> ModuleInfo:
    text = textwrap.dedent(text)
    return ModuleInfo("m.py", text, ast.parse(text), canonical=CONTEXT_SPEC.canonical)


def _reads(module: ModuleInfo, name: str) -> list[ast.Name]:
    return [
        n
        for n in ast.walk(module.tree)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]


def _seen(text: str, name: str = "s") -> list[str | None]:
    """What each read of ``name`` sees, in source order (the value's text)."""
    module = _module(text)
    reads = sorted(_reads(module, name), key=lambda n: (n.lineno, n.col_offset))
    values = [bound_value(module, r) for r in reads]
    return [None if v is None else ast.unparse(v) for v in values]


def test_a_rebound_name_is_followed_statement_by_statement() -> None:
    text = """
    def f(x):
        s = shape(x)
        s = [d or s[i] for i, d in enumerate(x)]
        s = s[:1] + s[2:]
        return s
    """
    first, second = "shape(x)", "[d or s[i] for i, d in enumerate(x)]"
    assert _seen(text) == [first, second, second, "s[:1] + s[2:]"]


def test_a_binding_in_a_branch_or_a_try_is_not_certain() -> None:
    assert _seen("def f(x):\n s = a(x)\n if x:\n  s = b(x)\n return s\n") == [None]
    assert _seen("def f(x):\n try:\n  s = a(x)\n except E:\n  pass\n return s\n") == [None]
    # inside the branch, after the rebinding: certain
    assert _seen("def f(x):\n s = a(x)\n if x:\n  s = b(x)\n  return s\n") == ["b(x)"]


def test_a_binding_in_one_branch_is_not_seen_from_the_other() -> None:
    """The `else` reads the binding before the `if` (GroupNormalization's
    `_reshape_into_groups`), unless a loop runs the `if` again."""
    text = "def f(x):\n s = a(x)\n if x:\n  s = b(s)\n  return s\n else:\n  return s\n"
    assert _seen(text) == ["a(x)", "b(s)", "a(x)"]
    elif_text = "def f(x):\n s = a(x)\n if x:\n  s = b(x)\n elif y:\n  return s\n"
    assert _seen(elif_text) == ["a(x)"]
    looped = "def f(x):\n s = a(x)\n for i in x:\n  if i:\n   s = b(x)\n  else:\n   g(s)\n"
    assert _seen(looped) == [None]
    module = _module(text)
    stack = next(
        n
        for n in ast.walk(module.tree)
        if isinstance(n, ast.Name) and n.id == "s" and n.lineno == 4
    )
    assert [r.lineno for r in reads_of(module, stack) or []] == [5]


def test_a_loop_that_rebinds_the_name_later_makes_earlier_reads_unknown() -> None:
    text = "def f(x):\n s = a(x)\n for i in x:\n  g(s)\n  s = b(s)\n return s\n"
    assert _seen(text) == [None, None, None]


def test_closures_global_and_augmented_assignment_are_unknown() -> None:
    assert _seen("def f(x):\n s = a(x)\n return lambda: s\n") == [None]
    assert _seen("def f(x):\n global s\n s = a(x)\n return s\n") == [None]
    assert _seen("def f(x):\n s = a(x)\n s += [1]\n return s\n") == [None]
    text = "def f(x):\n s = a(x)\n try:\n  g()\n except E as s:\n  pass\n return s\n"
    assert _seen(text) == [None]


def test_reads_of_a_binding_stop_at_the_next_one() -> None:
    module = _module("def f(x):\n s = a(x)\n t = s[0]\n s = b(s)\n return s, t\n")
    target = next(n for n in ast.walk(module.tree) if isinstance(n, ast.Name) and n.id == "s")
    reads = reads_of(module, target)
    assert reads is not None
    reads.sort(key=lambda r: r.lineno)
    assert [ast.unparse(module.parent_of(r)) for r in reads] == [
        "s[0]",
        "b(s)",
    ]


def test_reads_of_a_binding_inside_a_loop_it_may_reach_again_are_unknown() -> None:
    module = _module("def f(x):\n for i in x:\n  g(s)\n  s = a(x)\n")
    target = next(
        n
        for n in ast.walk(module.tree)
        if isinstance(n, ast.Name) and n.id == "s" and isinstance(n.ctx, ast.Store)
    )
    assert reads_of(module, target) is None


def test_parameter_reads_and_possible_values() -> None:
    module = _module("def f(self, s):\n return s[0], s[1]\ndef g(s):\n s = h(s)\n return s\n")
    f, g = module.tree.body
    reads = parameter_reads(module, f, "s")
    assert reads is not None and len(reads) == 2
    assert parameter_reads(module, g, "s") is None  # rebound
    branches = _module("def f(x):\n s = a(x)\n if x:\n  s = b(x)\n return s\n")
    last = sorted(_reads(branches, "s"), key=lambda n: n.lineno)[-1]
    assert [ast.unparse(v) for v in possible_values(branches, last)] == ["a(x)", "b(x)"]
