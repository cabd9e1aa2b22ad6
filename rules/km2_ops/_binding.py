"""Binding a call's arguments to the TensorFlow signature of its catalog entry."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from kmigrate.model import MISSING, CallSite
from kmigrate.rules.ops_catalog import OpEntry


class ManualPortError(Exception):
    """The call has no automatic rewrite at this site."""

    def __init__(self, reason: str, suggestion: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.suggestion = suggestion


@dataclass
class Arg:
    """One bound argument: where it was written and its expression."""

    source: int | str  # positional index or the keyword as written
    node: ast.expr


@dataclass
class Binding:
    entry: OpEntry
    site: CallSite
    args: dict[str, Arg]
    star: list[int]  # positional indices that went to the *args parameter

    def given(self, name: str) -> bool:
        return name in self.args

    def node(self, name: str) -> ast.expr | None:
        arg = self.args.get(name)
        return None if arg is None else arg.node

    def literal(self, name: str) -> Any:
        node = self.node(name)
        return MISSING if node is None else self.site.module.literal(node)

    def text(self, name: str) -> str:
        node = self.node(name)
        if node is not None:
            return self.site.text(node)
        param = self.entry.param(name)
        if param is None or param.default is None:
            raise ManualPortError(f"`{name}` is not given")
        return param.default

    def source(self, name: str) -> int | str:
        arg = self.args.get(name)
        if arg is None:
            raise ManualPortError(f"`{name}` is not given")
        return arg.source

    def atom(self, name: str) -> str:
        """The argument's text, parenthesised unless it is an atom."""
        text = self.text(name)
        node = self.node(name)
        if node is None or isinstance(node, ATOMS):
            return text
        return f"({text})"


ATOMS = (
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Call,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.DictComp,
    ast.SetComp,
    ast.GeneratorExp,
)


def bind(entry: OpEntry, site: CallSite) -> Binding:
    """Match the call's arguments to the entry's TF parameters (or refuse)."""
    if site.has_star_args:
        raise ManualPortError(
            "the call passes *args/**kwargs, so its arguments cannot be matched statically",
            "spell the arguments out",
        )
    positional = [p for p in entry.params if not p.varargs]
    varargs = next((p for p in entry.params if p.varargs), None)
    if varargs is not None:
        positional = positional[: entry.params.index(varargs)]
    bound: dict[str, Arg] = {}
    star: list[int] = []
    for index, node in enumerate(site.args):
        if index < len(positional):
            bound[positional[index].name] = Arg(index, node)
        elif varargs is not None:
            star.append(index)
        else:
            raise ManualPortError(f"more positional arguments than {entry.symbol} takes")
    names = set(entry.param_names)
    for keyword, node in site.keywords.items():
        name = entry.legacy.get(keyword, keyword)
        if name not in names or (varargs is not None and name == varargs.name):
            raise ManualPortError(f"unknown argument `{keyword}=` for {entry.symbol}")
        if name in bound:
            raise ManualPortError(f"`{name}` is given twice")
        bound[name] = Arg(keyword, node)
    return Binding(entry, site, bound, star)
