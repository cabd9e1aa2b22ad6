"""The vocabulary of the ops catalog (statuses, parameters, entries) and the parser of the
three strings an entry is written with.
"""

from __future__ import annotations

import ast
import enum
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kmigrate.rules.ops_catalog._translators import REFUSING_TRANSLATORS


class Status(str, enum.Enum):
    """How a catalog entry converts.

    ``exact``: always rewritten, for every call whose arguments can be bound.
    ``conditional``: rewritten when the call's arguments meet the entry's conditions
    (literal flags, arguments that must be absent ...); otherwise reported as manual.
    ``manual``: never rewritten; the finding gives the reason and a suggestion.
    """

    EXACT = "exact"
    CONDITIONAL = "conditional"
    MANUAL = "manual"


@dataclass(frozen=True)
class Param:
    """One TF parameter: its name and its default as source text (None = required)."""

    name: str
    default: str | None = None
    varargs: bool = False

    @property
    def default_value(self) -> Any:
        if self.default is None:
            return _NO_DEFAULT
        try:
            return ast.literal_eval(self.default)
        except (ValueError, SyntaxError):
            return self.default  # tf.float32 and other non-literals: compared as text


_NO_DEFAULT = object()


@dataclass(frozen=True)
class OutArg:
    """One argument of the Keras call (see the module docstring for the syntax)."""

    keyword: str | None  # None: positional
    param: str | None = None  # TF parameter it comes from; None: a new literal argument
    translator: str | None = None  # name of a value translator (km2_ops._translators.TRANSLATORS)
    translator_args: tuple[Any, ...] = ()
    default: str | None = None  # text written when the TF argument is absent
    literal: str | None = None  # text of a new argument (param None)
    star: bool = False  # a *args parameter


@dataclass(frozen=True)
class OpEntry:
    """One TF symbol (with its aliases) and how it converts."""

    symbols: tuple[str, ...]
    sig: str = ""  # the TF signature as written: see ``params``
    target: str | None = None  # "keras.ops.mean"; None for manual entries and templates
    out_text: str | None = None  # the Keras arguments as written: see ``out``
    template: str | None = None
    builder: str | None = None
    legacy: Mapping[str, str] = field(default_factory=dict)  # old keyword -> parameter
    accept: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    drop: frozenset[str] = frozenset({"name"})
    needs: tuple[str, ...] = ()  # parameters the automatic rewrite needs given
    when: str = ""  # the conditions, in words (builders; extra conditions)
    note: str = ""  # what a user should know about an automatic rewrite
    reason: str = ""  # manual entries: why there is no rewrite
    suggestion: str = ""  # manual entries: what to write instead
    section: str = ""

    @property
    def symbol(self) -> str:
        return self.symbols[0]

    # ``sig`` and ``out_text`` are parsed when an entry is first used, not when the
    # catalog is imported: a run looks up a few entries of three hundred, and parsing
    # them all was half of the catalog's import (every run that analyses a file).
    @functools.cached_property
    def params(self) -> tuple[Param, ...]:
        return _parse_sig(self.sig) if self.sig else ()

    @functools.cached_property
    def out(self) -> tuple[OutArg, ...]:
        text = self.out_text
        if self.target is not None and text is None:  # the required parameters, in order
            text = ", ".join(p.name for p in self.params if p.default is None and not p.varargs)
        return _parse_out(text, self.params) if text else ()

    @functools.cached_property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @functools.cached_property
    def mentioned(self) -> frozenset[str]:
        """TF parameters the rewrite uses (``out``, the template or the builder)."""
        names = {o.param for o in self.out if o.param}
        if self.template:
            names |= {p.name for p in self.params if _mentions(self.template, p.name)}
        return frozenset(names)

    @functools.cached_property
    def checked(self) -> tuple[Param, ...]:
        """Parameters the rewrite drops but only when absent or at an accepted value."""
        if self.builder:
            return tuple(p for p in self.params if p.name in self.accept)
        return tuple(
            p
            for p in self.params
            if p.name not in self.mentioned and p.name not in self.drop and not p.varargs
        )

    def accepted(self, name: str) -> tuple[Any, ...]:
        if name in self.accept:
            return self.accept[name]
        param = self.param(name)
        return () if param is None or param.default is None else (param.default_value,)

    @functools.cached_property
    def automatic(self) -> bool:
        return bool(self.target or self.template or self.builder)

    @functools.cached_property
    def renames_only(self) -> bool:
        """Called with one positional argument, the rewrite only renames the function
        (so a reference such as ``activation=tf.nn.relu`` can be renamed too)."""
        if not self.target or self.builder or self.template or not self.out or not self.params:
            return False
        first, *rest = self.out
        if first.param != self.params[0].name or first.keyword or first.translator:
            return False
        for out in rest:
            param = self.param(out.param) if out.param else None
            if param is None or param.default is None or out.default is not None:
                return False
        return all(p.default is not None or p.varargs for p in self.params[1:])

    @functools.cached_property
    def status(self) -> Status:
        if not self.automatic:
            return Status.MANUAL
        if self.conditions():
            return Status.CONDITIONAL
        return Status.EXACT

    def conditions(self) -> list[str]:
        """When the automatic rewrite applies, in words (empty: always)."""
        found: list[str] = []
        if self.when:
            found.append(self.when)
        for name in self.needs:
            found.append(f"`{name}` is given")
        for out in self.out:
            if out.translator and out.translator in REFUSING_TRANSLATORS:
                found.append(f"`{out.param}` {REFUSING_TRANSLATORS[out.translator]}")
        for param in self.checked:
            values = " or ".join(_show(v) for v in self.accepted(param.name))
            found.append(f"`{param.name}` is absent or {values}" if values else "")
        return [c for c in found if c]


def _mentions(template: str, name: str) -> bool:
    return "{" + name + "}" in template or "{(" + name + ")}" in template


def _show(value: Any) -> str:
    return value if isinstance(value, str) and value.startswith("tf.") else repr(value)


def py_literal(value: Any) -> str:
    """Source text of a literal, strings in double quotes (the project's style)."""
    if isinstance(value, str):
        text = repr(value)
        if text.startswith("'") and '"' not in value:
            text = '"' + text[1:-1] + '"'
        return text
    if isinstance(value, tuple):
        inner = ", ".join(py_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    return repr(value)


def _parse_sig(sig: str) -> tuple[Param, ...]:
    func = ast.parse(f"def f({sig}): pass").body[0]
    assert isinstance(func, ast.FunctionDef)
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    params = [
        Param(a.arg, None if d is None else ast.unparse(d)) for a, d in zip(positional, defaults)
    ]
    if args.vararg:
        params.append(Param(args.vararg.arg, None, varargs=True))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        params.append(Param(a.arg, None if d is None else ast.unparse(d)))
    return tuple(params)


def _out_item(keyword: str | None, node: ast.expr, params: set[str]) -> OutArg:
    default = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        try:
            default = py_literal(ast.literal_eval(node.right))
        except ValueError:  # an expression such as keras.config.floatx()
            default = qualify_names(ast.unparse(node.right))
        node = node.left
    if isinstance(node, ast.Starred) and isinstance(node.value, ast.Name):
        return OutArg(keyword, node.value.id, star=True)
    if isinstance(node, ast.Name) and node.id in params:
        return OutArg(keyword, node.id, default=default)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        first, *rest = node.args
        assert isinstance(first, ast.Name) and first.id in params, ast.unparse(node)
        extra = tuple(ast.literal_eval(a) for a in rest)
        return OutArg(keyword, first.id, node.func.id, extra, default=default)
    return OutArg(keyword, literal=py_literal(ast.literal_eval(node)))


def _parse_out(out: str, params: tuple[Param, ...]) -> tuple[OutArg, ...]:
    call = ast.parse(f"f({out})", mode="eval").body
    assert isinstance(call, ast.Call)
    names = {p.name for p in params}
    items = [_out_item(None, a, names) for a in call.args]
    items += [_out_item(k.arg, k.value, names) for k in call.keywords]
    return tuple(items)


QUALIFIED = re.compile(r"(?<![\w.{])(ops|keras)((?:\.[A-Za-z_]\w*)+)")


def qualify_names(text: str) -> str:
    """``ops.sum(...)`` -> ``{name:keras.ops.sum}(...)``: the editor spells the names."""

    def qualify(match: re.Match[str]) -> str:
        root, rest = match.groups()
        return "{name:" + ("keras.ops" if root == "ops" else "keras") + rest + "}"

    return QUALIFIED.sub(qualify, text)


def _target(name: str | None) -> str | None:
    if name is None or name.startswith("keras."):
        return name
    return f"keras.ops.{name}"


def op(
    symbols: str,
    sig: str,
    target: str | None = None,
    out: str | None = None,
    **extra: Any,
) -> OpEntry:
    """An automatic entry. ``out`` defaults to the required parameters, positionally."""
    for key in ("accept",):
        if key in extra:
            extra[key] = {k: tuple(v) for k, v in extra[key].items()}
    if "drop" in extra:
        extra["drop"] = frozenset({"name", *extra["drop"]})
    return OpEntry(
        symbols=tuple(symbols.split()),
        sig=sig,
        target=_target(target),
        out_text=out,
        **extra,
    )


def manual(symbols: str, reason: str, suggestion: str) -> OpEntry:
    """An entry with no automatic rewrite: why, and what to write instead."""
    return OpEntry(symbols=tuple(symbols.split()), reason=reason, suggestion=suggestion)


# ---------------------------------------------------------------------------
