"""The sites a rule is shown: a call, a reference, an import, or any node, with its scope.

Apart from :mod:`kmigrate.engine.model` because a site carries its
:class:`~kmigrate.engine.module_info.ModuleInfo` (the file it sits in), and ``ModuleInfo``
itself is built from the plain data of ``model``: one direction, no cycle.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from kmigrate.engine.model import MISSING, Context, Span
from kmigrate.engine.module_info import ModuleInfo


@dataclass
class Scope:
    """The enclosing class and function of a node, for messages and fingerprints."""

    class_name: str | None = None
    class_span: Span | None = None
    class_bases: tuple[str, ...] = ()  # canonical symbols of the bases
    class_node: ast.ClassDef | None = None
    function_name: str | None = None
    function_node: ast.AST | None = None

    @property
    def qualname(self) -> str:
        parts = [p for p in (self.class_name, self.function_name) if p]
        return ".".join(parts) or "<module>"


@dataclass
class Node:
    """Common part of every site a rule can look at."""

    node: ast.AST
    span: Span
    context: Context
    scope: Scope
    module: ModuleInfo

    @property
    def source(self) -> str:
        """The node's source text, exactly as written."""
        return self.module.segment(self.span)


@dataclass
class CallSite(Node):
    """A call whose callee resolves to a known symbol (``tf.reduce_mean``, ``K.mean``...).

    ``symbol`` is canonical (see :func:`kmigrate.engine.names.canonical`). For method calls
    on unknown receivers (``model.save(...)``) ``symbol`` is ``"<method>.save"``
    and ``receiver`` holds the receiver expression.
    """

    symbol: str = ""
    args: list[ast.expr] = field(default_factory=list)
    keywords: dict[str, ast.expr] = field(default_factory=dict)
    has_star_args: bool = False
    receiver: ast.expr | None = None

    def arg(self, position: int | None, keyword: str | None = None) -> ast.expr | None:
        """The argument given at ``position`` or as ``keyword``, else None."""
        if keyword is not None and keyword in self.keywords:
            return self.keywords[keyword]
        if position is not None and position < len(self.args):
            return self.args[position]
        return None

    def literal(self, position: int | None, keyword: str | None = None) -> Any:
        """The literal value of an argument, ``MISSING`` or ``NOT_LITERAL``."""
        node = self.arg(position, keyword)
        if node is None:
            return MISSING
        return self.module.literal(node)

    def text(self, node: ast.AST) -> str:
        """Source text of a sub-node of this call."""
        return self.module.node_text(node)


@dataclass
class ReferenceSite(Node):
    """A dotted name or attribute chain that resolves to a known symbol, in any role
    (callee, base class, decorator, argument). ``symbol`` is canonical."""

    symbol: str = ""


@dataclass
class ImportSite(Node):
    """An ``import`` / ``from ... import`` statement. ``modules`` lists the imported
    qualified names (``tensorflow.keras.layers.Dense``), ``aliases`` the local names."""

    modules: tuple[str, ...] = ()
    aliases: tuple[str | None, ...] = ()
    is_from: bool = False
    level: int = 0
