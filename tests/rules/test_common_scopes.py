"""What a scope binds (rules/common/scopes.py): the single value a name is assigned,
which the KM4xx path rules, KM514 and KM602 follow. Its table is made once per scope,
so these cases pin what a name counts as: assigned once, assigned again, bound some
other way."""

from __future__ import annotations

import ast
import textwrap

import pytest

from kmigrate.rules.common.scopes import single_assignment

_FUNCTION = """
def f(param, *rest, key=1):
    once = "m.h5"
    twice = "a"
    twice = "b"
    a, unpacked = 1, 2
    box[index] = 3
    counted = 0
    counted += 1
    for looped in range(3):
        pass
    with open(once) as handle:
        pass
    if (walrus := 4):
        pass
    typed: str = "t.h5"
    bare: int

    def inner():
        hidden = "x"
    hidden_twice = 1
"""


def _value(name: str) -> object:
    scope = ast.parse(textwrap.dedent(_FUNCTION)).body[0]
    value = single_assignment(scope, name)
    return value.value if isinstance(value, ast.Constant) else value


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("once", "m.h5"),
        ("typed", "t.h5"),
        ("hidden_twice", 1),  # the nested function's names are its own
        ("twice", None),
        ("param", None),
        ("rest", None),
        ("key", None),
        ("unpacked", None),
        ("a", None),
        ("box", None),
        ("index", None),
        ("counted", None),
        ("looped", None),
        ("handle", None),
        ("walrus", None),
        ("bare", None),
        ("hidden", None),
        ("missing", None),
    ],
)
def test_single_assignment(name: str, expected: object) -> None:
    assert _value(name) == expected


def test_asking_twice_gives_the_same_node() -> None:
    scope = ast.parse(textwrap.dedent(_FUNCTION)).body[0]
    assert single_assignment(scope, "once") is single_assignment(scope, "once")
