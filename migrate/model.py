"""The data that flows through kmigrate: spans, call sites, findings and edit plans.

Everything here is plain data so that detection (stdlib ``ast``) and editing (LibCST)
share one vocabulary: a rule describes *what* to change; the editor decides *how*.
Nothing in this module imports LibCST or knows a TensorFlow symbol.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field
from typing import Any


class Context(str, enum.Enum):
    """Where a node sits, which decides whether and how it may be rewritten."""

    MODEL = "model"
    TRAINING_LOOP = "training-loop"
    DATA = "data"
    OTHER = "other"


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, order=True)
class Span:
    """A source range: 1-based lines, 0-based columns counted in characters.

    The same convention as LibCST's ``PositionProvider``, so the editor can find
    the node a rule pointed at by comparing spans.
    """

    line: int
    column: int
    end_line: int
    end_column: int


class _Missing:
    """Marker for 'argument not given' (distinct from a literal ``None``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


class _NotLiteral(_Missing):
    """Marker for 'argument given, but its value is not known statically'."""

    _instance: _NotLiteral | None = None

    def __repr__(self) -> str:
        return "NOT_LITERAL"


MISSING: Any = _Missing()
NOT_LITERAL: Any = _NotLiteral()


# ---------------------------------------------------------------------------
# Edit plans: data, executed by kmigrate.editor (LibCST) for `apply` only.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ArgOut:
    """One argument of a rewritten call.

    ``source`` names the original argument it comes from: an ``int`` for a
    positional one, a ``str`` for a keyword one, ``None`` for a new argument.
    ``keyword`` is the keyword to emit (``None`` = positional). ``value`` is
    replacement expression text (``None`` = keep the original value node, with
    its formatting and any edits made inside it).
    """

    source: int | str | None
    keyword: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class CallEdit:
    """Surgical edit of the call at ``span``: new callee and/or new argument list.

    ``callee`` is a fully qualified name such as ``"keras.ops.mean"``; the
    editor spells it from the module's imports (``ops.mean`` when
    ``from keras import ops`` is there) and adds the import it needs.
    ``args=None`` keeps the arguments untouched.
    """

    span: Span
    callee: str | None = None
    args: tuple[ArgOut, ...] | None = None


@dataclass(frozen=True)
class ReplaceNode:
    """Replace the expression (or statement) at ``span`` with ``text``.

    ``text`` may contain ``{name:keras.ops.mean}`` placeholders; the editor
    replaces each with the spelling of that qualified name (adding the import).
    Use it where a surgical :class:`CallEdit` cannot express the change
    (``x.shape.as_list()`` -> ``list(x.shape)``). ``kind`` is ``"expr"``,
    ``"stmt"`` (a whole simple statement such as an import) or ``"decorator"``
    (``span`` is a decorator's expression; the decorator is removed, ``text`` unused).
    """

    span: Span
    text: str
    kind: str = "expr"


@dataclass(frozen=True)
class ClassEdit:
    """Ensure structure in the class whose ``class`` statement is at ``span``.

    - ``init_params``: ``(name, default_text)`` pairs ensured in ``__init__``'s
      signature (an ``__init__(self, <params>, **kwargs)`` calling
      ``super().__init__(**kwargs)`` is created when the class has none);
    - ``init_statements``: statements ensured (by text) in ``__init__``, right
      after the ``super().__init__(...)`` call;
    - ``config_items``: ``(key, value_text)`` pairs added to what ``get_config``
      returns, when the class defines ``get_config``;
    - ``call_params``: ``(name, default_text)`` pairs ensured in ``call``'s signature,
      before ``*args``/``**kwargs`` (when the class defines ``call``).
    """

    span: Span
    init_params: tuple[tuple[str, str], ...] = ()
    init_statements: tuple[str, ...] = ()
    config_items: tuple[tuple[str, str], ...] = ()
    call_params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class EnsureImport:
    """Ensure ``import module`` (name=None) or ``from module import name``."""

    module: str
    name: str | None = None


Edit = CallEdit | ReplaceNode | ClassEdit | EnsureImport


@dataclass(frozen=True)
class EditPlan:
    """All edits that fix one finding. All-or-nothing: applied together or not at all."""

    edits: tuple[Edit, ...]
    description: str = ""


# ---------------------------------------------------------------------------
# What rules look at.
# ---------------------------------------------------------------------------


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

    ``symbol`` is canonical (see :func:`kmigrate.names.canonical`). For method calls
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


# The keys of a JSON finding (DESIGN.md), in the order reports write them; anything
# else a finding carries (a notebook cell ...) lives in ``Finding.extra``.
FINDING_FIELDS = (
    "rule",
    "severity",
    "message",
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "context",
    "fixable",
    "symbol",
    "fingerprint",
)


@dataclass
class Finding:
    """One reported problem, in the JSON shape DESIGN.md fixes."""

    rule: str
    severity: Severity
    message: str
    path: str
    span: Span
    context: Context
    symbol: str = ""
    fix: EditPlan | None = None
    fingerprint: str = ""
    scope_name: str = "<module>"
    source_text: str = ""  # the node's ast.dump: fingerprint input, dropped once used
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. notebook cell
    # no fix of its own, but ``apply`` fixes it in a later round: what blocks it
    # (``K.mean`` uses of an import to move) is fixed first
    fixed_later: bool = False

    @property
    def fixable(self) -> bool:
        """Whether ``kmigrate apply`` fixes it (now, or once other fixes are made)."""
        return self.fix is not None or self.fixed_later

    def sort_key(self) -> tuple:
        # Notebook findings count lines within a cell: order by cell first.
        cell = self.extra.get("cell", 0)
        return (self.path, cell, self.span.line, self.span.column, self.rule, self.message)

    def to_json(self) -> dict[str, Any]:
        # Called for every finding of a report: ``_value_`` (the enum's stored value) is
        # a plain attribute, where ``.value`` is a Python-level descriptor call.
        span = self.span
        data = {
            "rule": self.rule,
            "severity": self.severity._value_,
            "message": self.message,
            "path": self.path,
            "line": span.line,
            "column": span.column + 1,
            "end_line": span.end_line,
            "end_column": span.end_column + 1,
            "context": self.context._value_,
            "fixable": self.fixable,
            "symbol": self.symbol,
            "fingerprint": self.fingerprint,
        }
        data.update(self.extra)
        return data


# ModuleInfo lives in kmigrate.analyze; imported late to avoid a cycle in annotations.
from kmigrate.module_info import ModuleInfo  # noqa: E402
