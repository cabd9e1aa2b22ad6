"""Binding a call's arguments to the TensorFlow signature of its catalog entry."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from kmigrate.engine import MISSING, CallSite
from kmigrate.rules.common.binding import BindError, BoundArg, bind_call
from kmigrate.rules.ops_catalog import OpEntry


class ManualPortError(Exception):
    """The call has no automatic rewrite at this site.

    Plan functions return it as a value, so whoever catches one to keep it keeps
    :meth:`detached`: a traceback (its own, or a chained error's) holds the frames, the
    frames the site and through it the module's tree, a cycle that keeps the whole tree
    alive until the garbage collector finds it (tens of thousands of objects on a corpus).
    """

    def __init__(self, reason: str, suggestion: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.suggestion = suggestion

    def detached(self) -> ManualPortError:
        """This error, to keep as a value: without its traceback or the error it was
        raised from (the reason and suggestion are all a finding needs)."""
        self.__traceback__ = self.__context__ = self.__cause__ = None
        return self


@dataclass
class Binding:
    entry: OpEntry
    site: CallSite
    args: dict[str, BoundArg]
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
    positional = [p for p in entry.params if not p.varargs]
    varargs = next((p for p in entry.params if p.varargs), None)
    if varargs is not None:
        positional = positional[: entry.params.index(varargs)]
    accepted = set(entry.param_names) - ({varargs.name} if varargs is not None else set())
    try:
        bound, star = bind_call(
            site,
            [p.name for p in positional],
            accepted,
            varargs=varargs is not None,
            renames=entry.legacy,
        )
    except BindError as error:
        raise _refusal(error, entry) from None
    return Binding(entry, site, bound, star)


def _refusal(error: BindError, entry: OpEntry) -> ManualPortError:
    if error.kind == BindError.STAR_ARGS:
        return ManualPortError(
            "the call passes *args/**kwargs, so its arguments cannot be matched statically",
            "spell the arguments out",
        )
    if error.kind == BindError.TOO_MANY:
        return ManualPortError(f"more positional arguments than {entry.symbol} takes")
    if error.kind == BindError.UNKNOWN:
        return ManualPortError(f"unknown argument `{error.name}=` for {entry.symbol}")
    return ManualPortError(f"`{error.name}` is given twice")
