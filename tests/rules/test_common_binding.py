"""The one argument binder shared by KM2xx and KM3xx (rules/common/binding.py)."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest

from kmigrate.rules.common.binding import BindError, BoundArg, bind_call


def call(text: str) -> SimpleNamespace:
    """What the binder reads of a call site: its arguments, keywords and star flag."""
    node = ast.parse(text, mode="eval").body
    assert isinstance(node, ast.Call)
    return SimpleNamespace(
        args=[a for a in node.args if not isinstance(a, ast.Starred)],
        keywords={k.arg: k.value for k in node.keywords if k.arg is not None},
        has_star_args=any(isinstance(a, ast.Starred) for a in node.args)
        or any(k.arg is None for k in node.keywords),
    )


def test_positional_then_keywords_in_call_order() -> None:
    bound, star = bind_call(call("f(1, 2, c=3)"), ["a", "b", "c"], {"a", "b", "c"})
    assert list(bound) == ["a", "b", "c"]
    assert [arg.source for arg in bound.values()] == [0, 1, "c"]
    assert [arg.positional for arg in bound.values()] == [True, True, False]
    assert star == []


def test_extra_positionals_go_to_varargs() -> None:
    bound, star = bind_call(call("f(1, 2, 3)"), ["a"], {"a"}, varargs=True)
    assert list(bound) == ["a"] and star == [1, 2]


def test_legacy_keyword_is_renamed() -> None:
    bound, _ = bind_call(
        call("f(x, keep_dims=True)"), ["x"], {"x", "keepdims"}, renames={"keep_dims": "keepdims"}
    )
    assert bound["keepdims"] == BoundArg("keep_dims", bound["keepdims"].node)


@pytest.mark.parametrize(
    ("text", "kind", "name"),
    [
        ("f(*xs)", BindError.STAR_ARGS, ""),
        ("f(**kw)", BindError.STAR_ARGS, ""),
        ("f(1, 2)", BindError.TOO_MANY, ""),
        ("f(z=1)", BindError.UNKNOWN, "z"),
        ("f(1, a=2)", BindError.TWICE, "a"),
    ],
)
def test_refusals_say_what_went_wrong(text: str, kind: str, name: str) -> None:
    with pytest.raises(BindError) as raised:
        bind_call(call(text), ["a"], {"a"})
    assert (raised.value.kind, raised.value.name) == (kind, name)


def test_repeat_ok_lets_the_keyword_replace_the_positional() -> None:
    bound, _ = bind_call(call("f(1, a=2)"), ["a"], {"a"}, repeat_ok=True)
    assert bound["a"].source == "a"
