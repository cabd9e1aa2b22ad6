"""The data that flows through kmigrate: spans, call sites, findings and edit plans.

Everything here is plain data so that detection (stdlib ``ast``) and editing (LibCST)
share one vocabulary: a rule describes *what* to change; the editor decides *how*.
Nothing in this module imports LibCST or knows a TensorFlow symbol.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any


class Context(str, enum.Enum):
    """Where a node sits, which decides whether and how it may be rewritten. In a project
    that uses Keras, code is ``MODEL`` unless positive evidence proves it TensorFlow by
    design (``TRAINING_LOOP``, ``DATA``, ``SERVING``, ``DISTRIBUTION``); ``UNDECIDED`` is
    code the evidence puts on both sides (a helper of a layer and of a ``tf.data`` map):
    reported, never rewritten. ``OTHER`` is code of a project without Keras."""

    MODEL = "model"
    TRAINING_LOOP = "training-loop"
    DATA = "data"
    SERVING = "serving"
    DISTRIBUTION = "distribution"
    UNDECIDED = "undecided"
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

    def overlaps(self, other: Span) -> bool:
        """Whether the two ranges share a character."""
        return (self.line, self.column) < (other.end_line, other.end_column) and (
            other.line,
            other.column,
        ) < (self.end_line, self.end_column)

    def contains(self, other: Span) -> bool:
        """Whether ``other`` lies within this range (or is it)."""
        return (self.line, self.column) <= (other.line, other.column) and (
            other.end_line,
            other.end_column,
        ) <= (self.end_line, self.end_column)


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
# Edit plans: data, executed by kmigrate.engine.editor (LibCST) for `apply` only.
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
    ``"stmt"`` (a whole simple statement such as an import, or a whole ``if`` statement with
    its ``elif``/``else`` branches; an empty ``text`` removes a simple statement)
    or ``"decorator"`` (``span`` is a decorator's expression; the decorator is removed,
    ``text`` unused).
    ``stale_comments``: what a comment describing the old value says (``HDF5`` beside a
    ``.h5`` path): a trailing comment on the line where the expression ends that says
    exactly one of them (case, ``#`` and punctuation aside) goes with the old value.
    """

    span: Span
    text: str
    kind: str = "expr"
    stale_comments: tuple[str, ...] = ()


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
      before ``*args``/``**kwargs`` (when the class defines ``call``);
    - ``methods``: method definitions (text, ``{name:...}`` placeholders allowed)
      appended to the class body, each unless the class body already binds its name.
    """

    span: Span
    init_params: tuple[tuple[str, str], ...] = ()
    init_statements: tuple[str, ...] = ()
    config_items: tuple[tuple[str, str], ...] = ()
    call_params: tuple[tuple[str, str], ...] = ()
    methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class EnsureImport:
    """Ensure ``import module`` (name=None) or ``from module import name``; ``asname``
    (plain imports only) binds the module under that name: ``import module as asname``."""

    module: str
    name: str | None = None
    asname: str | None = None


@dataclass(frozen=True)
class EnsureHelper:
    """Ensure that module ``module`` beside the edited file (``<folder>/<module>.py``)
    defines function ``name``, and that the edited module imports it (from
    ``import_from``: ``"._compat"`` inside a package, ``"_compat"`` for a script).

    For a call no single library function replaces exactly: the rule hands over the
    helper's whole text (``definition``), the import statements it needs (``imports``)
    and the docstring a new module starts with (``header``); the edited module's
    change goes through the editor like any other edit, and the helper module is
    written once per folder, with only the helpers its folder's plans asked for
    (``kmigrate.engine.helper_module``).
    """

    module: str
    name: str
    import_from: str
    definition: str
    imports: tuple[str, ...] = ()
    header: str = ""

    def import_edit(self) -> EnsureImport:
        """The import the edited module needs to call the helper."""
        return EnsureImport(self.import_from, self.name)


Edit = CallEdit | ReplaceNode | ClassEdit | EnsureImport | EnsureHelper
# Edits that point at no node of the module: what they need is added beside the rest.
UNPLACED_EDITS = (EnsureImport, EnsureHelper)


def requested_import(edit: Edit) -> EnsureImport | None:
    """The import an edit asks for explicitly (an ``EnsureImport``, or the import of
    an ``EnsureHelper``'s function); None for edits that point at code."""
    if isinstance(edit, EnsureImport):
        return edit
    if isinstance(edit, EnsureHelper):
        return edit.import_edit()
    return None


@dataclass(frozen=True)
class EditPlan:
    """All edits that fix one finding. All-or-nothing: applied together or not at all."""

    edits: tuple[Edit, ...]
    description: str = ""

    def spelled_names(self) -> set[str]:
        """The qualified names the editor spells for this plan (callees, ``{name:...}``
        placeholders, ensured imports): each must be spellable in the module."""
        names: set[str] = set()
        texts: list[str] = []
        for edit in self.edits:
            if isinstance(edit, CallEdit):
                if edit.callee:
                    names.add(edit.callee)
                texts += [a.value for a in edit.args or () if a.value]
            elif isinstance(edit, ReplaceNode):
                texts.append(edit.text)
            elif isinstance(edit, ClassEdit):
                texts += [text for _, text in (*edit.init_params, *edit.config_items)]
                texts += [text for _, text in edit.call_params]
                texts += edit.init_statements
                texts += edit.methods
            elif isinstance(edit, EnsureImport):
                names.add(f"{edit.module}.{edit.name}" if edit.name else edit.module)
        for text in texts:
            names.update(PLACEHOLDER.findall(text))
        return names


# ``{name:keras.ops.mean}`` in an edit's text: a qualified name the editor spells
PLACEHOLDER = re.compile(r"\{name:([A-Za-z_][\w.]*)\}")


# The findings about the run itself (rules/km9_internal/ describes them to users): the
# engine makes the first two; the third turns what ``suppress`` saw into findings.
UNPARSEABLE = "KM901"  # the file cannot be read, decoded or parsed
RULE_CRASHED = "KM902"  # a rule raised on the file: its findings there are incomplete
UNUSED_SUPPRESSION = "KM903"  # a ``# kmigrate: ignore`` comment that suppressed nothing

# The keys of a JSON finding (docs/report.md, migrate/report/schema.json), in the order
# reports write them; anything else a finding carries (a notebook cell ...) lives in
# ``Finding.extra``.
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
    """One reported problem, in the JSON shape docs/report.md describes."""

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
