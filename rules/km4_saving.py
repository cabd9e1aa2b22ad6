"""KM4xx: saving and loading. Keras 3 writes whole models as ``.keras``, weights as
``.weights.h5``, and SavedModels for serving with ``model.export(dir)``.

Legacy code saves to ``.h5`` files, SavedModel folders (a path without suffix) and TF
checkpoints (``save_weights("ckpt")``). Keras 3 refuses to write the last two and
cannot read them back; ``.h5`` still loads but is a legacy format. A save is only half
the story: the ``load_model`` / ``load_weights`` that reads the file must change with
it. The rules here collect every writer and reader of a module during the walk and
pair them in ``check_module`` by path, so one fix rewrites both ends or neither.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kmigrate.engine import (
    ArgOut,
    CallEdit,
    CallSite,
    Context,
    EditPlan,
    ReplaceNode,
    Severity,
    Span,
    code_children,
    code_walk,
    scope_bindings,
)
from kmigrate.rules.base import Clean, Flagged, Report, Rule

_NAMESPACES = ("tf.keras.", "keras.", "tf_keras.")
SAVE_MODEL_FUNCTIONS = frozenset(
    ns + path for ns in _NAMESPACES for path in ("models.save_model", "saving.save_model")
)
LOAD_MODEL_FUNCTIONS = frozenset(
    ns + path for ns in _NAMESPACES for path in ("models.load_model", "saving.load_model")
)
CHECKPOINT_CALLBACKS = frozenset(ns + "callbacks.ModelCheckpoint" for ns in _NAMESPACES)
SAVED_MODEL_SAVE = frozenset({"tf.saved_model.save", "tf.compat.v1.saved_model.save"})

_WRITER_METHODS = frozenset({"save", "save_weights"})
_READER_METHODS = frozenset({"load_weights"})

# Suffixes that name a legacy format and are replaced (not kept) by the new one.
_MODEL_LEGACY_SUFFIXES = (".hdf5", ".h5", ".tf")
_WEIGHTS_LEGACY_SUFFIXES = (".hdf5", ".h5", ".ckpt", ".tf")
MODEL_SUFFIX = ".keras"
WEIGHTS_SUFFIX = ".weights.h5"

# Receiver names that say "this is a Keras model" for `x.save(...)` with no other clue.
_MODEL_NAME = re.compile(
    r"(model|net|classifier|regressor|encoder|decoder|generator|discriminator|critic|"
    r"vae|gan|cnn|rnn|lstm|mlp|transformer|bert|resnet|unet|backbone)",
    re.IGNORECASE,
)
_PRINTF_TAIL = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]$")


# ---------------------------------------------------------------------------
# Paths: where the literal part of a path expression is, and how to rewrite it.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PathInfo:
    """What is statically known about a path expression.

    ``tail`` is the literal text the path ends with and ``literal`` the string node
    (``Constant`` or f-string) holding it; ``complete`` says whether the tail holds the
    whole last path component (so "no suffix" really means no suffix). ``key``
    identifies the path for pairing saves with loads. ``folder`` is the source text
    of the folder the path points into when that folder is spelled out literally in
    the code (``os.path.join(out, "ckpt", "w")`` -> ``os.path.join(out, "ckpt")``).
    """

    tail: str
    complete: bool
    literal: ast.expr
    key: tuple
    folder: str | None = None
    via_variable: str | None = None

    @property
    def component(self) -> str:
        return re.split(r"[/\\]", self.tail)[-1]

    def legacy_kind(self) -> str | None:
        """``"keras"``, ``"weights"`` (Keras 3 formats), ``"h5"``, ``"bare"`` (no .h5/.keras
        suffix: SavedModel folder or TF checkpoint) or None when unknown."""
        name = self.component
        if name.endswith(WEIGHTS_SUFFIX):
            return "weights"
        if name.endswith(MODEL_SUFFIX):
            return "keras"
        if name.endswith((".h5", ".hdf5")):
            return "h5"
        if self.complete and name:
            return "bare"
        return None

    def new_tail(self, target: str) -> str:
        """The tail after moving the path to ``target`` (``"model"`` or ``"weights"``)."""
        legacy = _MODEL_LEGACY_SUFFIXES if target == "model" else _WEIGHTS_LEGACY_SUFFIXES
        suffix = MODEL_SUFFIX if target == "model" else WEIGHTS_SUFFIX
        for old in legacy:
            if self.tail.endswith(old):
                return self.tail[: -len(old)] + suffix
        return self.tail + suffix


def _string_body_end(source: str) -> int | None:
    """Index of the closing quote(s) of a (possibly prefixed/f-) string literal's source."""
    for quote in ('"""', "'''", '"', "'"):
        if source.endswith(quote) and len(source) >= 2 * len(quote):
            return len(source) - len(quote)
    return None


def rewrite_literal_tail(source: str, old_tail: str, new_tail: str) -> str | None:
    """Source of a string literal whose value ends with ``old_tail``, ending with
    ``new_tail`` instead; None when the source does not spell the tail verbatim
    (escapes, implicit concatenation across the boundary)."""
    end = _string_body_end(source)
    if end is None:
        return None
    common = 0
    while common < min(len(old_tail), len(new_tail)) and old_tail[common] == new_tail[common]:
        common += 1
    old_rest, new_rest = old_tail[common:], new_tail[common:]
    body = source[:end]
    if not body.endswith(old_tail) or "\\" in old_tail or "{" in new_rest:
        return None
    return body[: len(body) - len(old_rest)] + new_rest + source[end:]


def _cut_literal_folder(source: str, tail: str) -> str | None:
    """Source of the same literal without its last path component (``"a/b"`` -> ``"a"``)."""
    end = _string_body_end(source)
    cut = tail.rfind("/")
    if end is None or cut <= 0 or not source[:end].endswith(tail):
        return None
    drop = len(tail) - cut
    return source[: end - drop] + source[end:]


class PathAnalyzer:
    """Reads path expressions of one module; follows a variable to its single assignment."""

    def __init__(self, site: CallSite) -> None:
        self.site = site
        self.module = site.module
        self.function = site.scope.function_node

    def analyze(self, node: ast.expr | None, depth: int = 0) -> PathInfo | None:
        if node is None or depth > 3:
            return None
        if isinstance(node, ast.Name):
            return self._variable(node, depth)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            folder = _cut_literal_folder(self.module.node_text(node), node.value)
            return PathInfo(node.value, True, node, ("value", node.value), folder)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.BinOp):
            return self._binop(node, depth)
        return None

    # -- pieces ----------------------------------------------------------------
    def _key(self, node: ast.expr) -> tuple:
        names = {n.id for n in code_walk(node) if n.__class__ is ast.Name}  # type: ignore[attr-defined]
        scope = 0
        if self.function is not None:
            function = self.function
            local = self.module.memo(("KM4-bindings", function), lambda: scope_bindings(function))
            if names & (set(local.imports) | local.others):
                scope = id(self.function)
        return ("expr", scope, ast.dump(node, annotate_fields=False))

    def _fstring(self, node: ast.JoinedStr) -> PathInfo | None:
        if not node.values:
            return None
        last = node.values[-1]
        if not (isinstance(last, ast.Constant) and isinstance(last.value, str)):
            return None
        complete = "/" in last.value or len(node.values) == 1
        folder = None
        head = last.value.rsplit("/", 1)[0] if "/" in last.value else ""
        if head.strip("/"):
            folder = _cut_literal_folder(self.module.node_text(node), last.value)
        return PathInfo(last.value, complete, node, self._key(node), folder)

    def _call(self, node: ast.Call, depth: int) -> PathInfo | None:
        symbol = self.module.resolve(node.func) or ""
        if symbol == "os.path.join" and node.args and not node.keywords:
            last = node.args[-1]
            if any(isinstance(a, ast.Starred) for a in node.args):
                return None
            inner = self.analyze(last, depth + 1) if isinstance(last, ast.Constant) else None
            if inner is None:
                return None
            folder = None
            if len(node.args) >= 3 and isinstance(node.args[-2], ast.Constant):
                func = self.module.node_text(node.func)
                parts = ", ".join(self.module.node_text(a) for a in node.args[:-1])
                folder = f"{func}({parts})"
            elif inner.folder is not None:
                func = self.module.node_text(node.func)
                parts = [self.module.node_text(a) for a in node.args[:-1]] + [inner.folder]
                folder = f"{func}({', '.join(parts)})"
            return PathInfo(inner.tail, True, inner.literal, self._key(node), folder)
        if symbol in ("str", "os.fspath") or (
            isinstance(node.func, ast.Name) and node.func.id == "str" and not symbol
        ):
            if len(node.args) == 1 and not node.keywords:
                inner = self.analyze(node.args[0], depth + 1)
                if inner is not None:
                    return PathInfo(
                        inner.tail, inner.complete, inner.literal, self._key(node), inner.folder
                    )
            return None
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "format"
            and isinstance(func.value, ast.Constant)
            and isinstance(func.value.value, str)
        ):
            return self._format_literal(func.value, node)
        return None

    def _format_literal(self, literal: ast.Constant, whole: ast.expr) -> PathInfo | None:
        text = literal.value
        if text.endswith("}") or _PRINTF_TAIL.search(text):
            return None  # the end of the path is a substituted value
        tail = text.rsplit("/", 1)[-1]
        complete = "/" in text
        return PathInfo("/" + tail if complete else tail, complete, literal, self._key(whole))

    def _binop(self, node: ast.BinOp, depth: int) -> PathInfo | None:
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
            if isinstance(node.left.value, str):
                return self._format_literal(node.left, node)
            return None
        right = node.right
        if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
            return None
        if isinstance(node.op, ast.Div):  # pathlib: Path(d) / "m.h5"
            folder = None
            left = node.left
            if (
                isinstance(left, ast.BinOp)
                and isinstance(left.op, ast.Div)
                and isinstance(left.right, ast.Constant)
            ):
                folder = self.module.node_text(left)
            return PathInfo(right.value, True, right, self._key(node), folder)
        if isinstance(node.op, ast.Add):  # out + "/m.h5"
            complete = "/" in right.value
            return PathInfo(right.value, complete, right, self._key(node))
        return None

    def _variable(self, node: ast.Name, depth: int) -> PathInfo | None:
        value = single_assignment(self.function or self.module.tree, node.id)
        if value is None:
            return None
        inner = self.analyze(value, depth + 1)
        if inner is None:
            return None
        folder = f"os.path.dirname({node.id})" if inner.folder else None
        key = inner.key if inner.key[0] == "value" else ("var", id(value))
        return PathInfo(inner.tail, inner.complete, inner.literal, key, folder, node.id)


def single_assignment(scope: ast.AST, name: str) -> ast.expr | None:
    """The value of ``name = value`` when that is the only binding of ``name`` in the
    scope's own body (parameters, loops, augmented or repeated assignments: None)."""
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = scope.args
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        if name in params or (args.vararg and args.vararg.arg == name):
            return None
    found: list[ast.expr] = []
    for node in own_nodes(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    found.append(node.value)
                elif any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                    return None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id == name and node.value is not None:
                found.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.NamedExpr)):
            targets = [getattr(node, "target", None)] + [
                i.optional_vars for i in getattr(node, "items", [])
            ]
            if any(
                isinstance(n, ast.Name) and n.id == name
                for t in targets
                if t is not None
                for n in ast.walk(t)
            ):
                return None
    return found[0] if len(found) == 1 else None


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a scope's own body, not descending into nested functions and classes."""
    stack = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(code_children(node))


# ---------------------------------------------------------------------------
# Writers and readers of one module.
# ---------------------------------------------------------------------------


@dataclass
class PathUse:
    """One call that writes or reads a saved model or weights."""

    site: CallSite
    role: str  # "save", "save_weights", "checkpoint", "load_model", "load_weights"
    path_node: ast.expr | None
    path: PathInfo | None
    target: str | None  # "model" / "weights": what Keras 3 needs; None = unknown
    problems: list[str] = field(default_factory=list)  # why it cannot be fixed

    @property
    def is_writer(self) -> bool:
        return self.role in ("save", "save_weights", "checkpoint")

    def literal_edit(self, new_tail: str) -> ReplaceNode | None:
        assert self.path is not None
        literal = self.path.literal
        source = self.site.module.node_text(literal)
        new = rewrite_literal_tail(source, self.path.tail, new_tail)
        if new is None:
            return None
        return ReplaceNode(self.site.module.span_of(literal), new)


def _imports_keras(site: CallSite) -> bool:
    roots = ("tensorflow", "keras", "tf_keras")
    return any(q.split(".")[0] in roots for q in site.module.module_scope.imports.values())


def _receiver_name(receiver: ast.expr | None) -> str:
    if isinstance(receiver, ast.Name):
        return receiver.id
    if isinstance(receiver, ast.Attribute):
        return receiver.attr
    return ""


def _assigned_from_keras(site: CallSite, name: str) -> bool:
    scope = site.scope.function_node or site.module.tree
    value = single_assignment(scope, name)
    if isinstance(value, ast.Call):
        symbol = site.module.resolve(value.func) or ""
        return symbol.startswith(_NAMESPACES)
    return False


def looks_like_model(site: CallSite, path: PathInfo | None) -> bool:
    """Whether ``x.save(...)`` on an unresolved receiver is a Keras model's save."""
    if "save_format" in site.keywords:
        return True
    if path is not None and path.legacy_kind() == "h5":
        return True
    receiver = site.receiver
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        return site.context == Context.MODEL
    name = _receiver_name(receiver)
    if name and _MODEL_NAME.search(name):
        return True
    return isinstance(receiver, ast.Name) and _assigned_from_keras(site, receiver.id)


def _checkpoint_target(site: CallSite) -> str | None:
    weights_only = site.literal(4, "save_weights_only")
    if weights_only is True:
        return "weights"
    if weights_only is False or not site.arg(4, "save_weights_only"):
        return "model"
    return None


_UNSUPPORTED = {
    "save": {"signatures", "options", "save_traces"},
    "save_weights": {"options"},
    "checkpoint": {"options", "period", "load_weights_on_restart"},
    "load_model": {"options"},
    "load_weights": {"options"},
}
_MAX_POSITIONAL = {"save": 2, "save_weights": 2, "checkpoint": 8, "load_model": 3}


def classify(site: CallSite) -> PathUse | None:
    """The :class:`PathUse` a call site is, or None when it is not one."""
    symbol = site.symbol
    method = symbol[len("<method>.") :] if symbol.startswith("<method>.") else None
    if method == "save" or symbol in SAVE_MODEL_FUNCTIONS:
        role, position, target = "save", 0 if method else 1, "model"
    elif method == "save_weights":
        role, position, target = "save_weights", 0, "weights"
    elif method == "load_weights":
        role, position, target = "load_weights", 0, "weights"
    elif symbol in LOAD_MODEL_FUNCTIONS:
        role, position, target = "load_model", 0, "model"
    elif symbol in CHECKPOINT_CALLBACKS:
        role, position, target = "checkpoint", 0, _checkpoint_target(site)
    else:
        return None
    if method is not None and not _imports_keras(site):
        return None
    path_node = site.arg(position, "filepath")
    analyzer = PathAnalyzer(site)
    path = analyzer.analyze(path_node)
    if method == "save" and not looks_like_model(site, path):
        return None
    use = PathUse(site, role, path_node, path, target)
    bad = sorted(set(site.keywords) & _UNSUPPORTED[role])
    if bad:
        hint = " (serving signatures come from `model.export`)" if role == "save" else ""
        if "period" in bad:
            hint = " (use `save_freq=`, counted in batches)"
        use.problems.append(f"`{'=`, `'.join(bad)}=` is not supported by Keras 3{hint}")
    limit = _MAX_POSITIONAL.get(role, 1) + (1 if method is None and role == "save" else 0)
    if len(site.args) > limit or site.has_star_args:
        use.problems.append("pass the arguments after the path by keyword first")
    if role == "load_weights" and site.keywords.get("by_name") is not None:
        use.problems.append("`by_name=` only works with legacy `.h5` files in Keras 3")
    return use


@dataclass
class Pairing:
    """Writers and readers of one module, paired by path."""

    uses: list[PathUse]
    readers_of: dict[int, list[PathUse]] = field(default_factory=dict)  # id(writer) -> readers
    writer_of: dict[int, PathUse] = field(default_factory=dict)  # id(reader) -> writer
    conflicts: set[int] = field(default_factory=set)  # ids of uses with conflicting writers

    @classmethod
    def build(cls, uses: list[PathUse]) -> Pairing:
        pairing = cls(uses)
        writers: dict[tuple, list[PathUse]] = {}
        for use in uses:
            if use.is_writer and use.path is not None:
                writers.setdefault(use.path.key, []).append(use)
        for group in writers.values():
            if len({w.target for w in group}) > 1:
                pairing.conflicts.update(id(w) for w in group)
        for use in uses:
            if use.is_writer or use.path is None:
                continue
            group = writers.get(use.path.key)
            if not group:
                continue
            writer = group[0]
            if use.role == "load_model" and writer.target != "model":
                continue
            pairing.writer_of[id(use)] = writer
            for w in group:
                pairing.readers_of.setdefault(id(w), []).append(use)
        return pairing


class _PathRule(Rule):
    """Base of the rules that need every writer and reader of a module."""

    call_symbols = SAVE_MODEL_FUNCTIONS | LOAD_MODEL_FUNCTIONS | CHECKPOINT_CALLBACKS
    method_names = _WRITER_METHODS | _READER_METHODS

    # The engine calls check_module after walking a module, so the uses collected by
    # check_call belong to that module; they are dropped when another module starts.
    def __init__(self) -> None:
        self._module: object | None = None
        self._uses: list[PathUse] = []

    def check_call(self, site: CallSite) -> Iterable[Report]:
        use = classify(site)
        if use is not None:
            if site.module is not self._module:
                self._module, self._uses = site.module, []
            self._uses.append(use)
        return ()

    def check_module(self, module) -> Iterable[Report]:
        uses = self._uses if module is self._module else []
        self._module, self._uses = None, []
        if not uses:
            return ()
        return list(self.reports(Pairing.build(uses)))

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        raise NotImplementedError


def _used_elsewhere(writer: PathUse) -> str:
    """Other modules of the project naming the file this writer writes (a model saved
    in train.py and loaded in serve.py), from the project index; "" when none."""
    facts = writer.site.module.project_facts
    literal = writer.path.literal if writer.path is not None else None
    if facts is None or not isinstance(literal, ast.Constant):
        return ""
    return dict(facts.shared_paths).get(literal.value, "")


def _span_key(edit: ReplaceNode) -> Span:
    return edit.span


def _writer_plan(
    writer: PathUse, pairing: Pairing, extra: tuple = ()
) -> tuple[EditPlan | None, str]:
    """The plan moving a writer (and the readers paired with it) to its Keras 3 path,
    or None and the reason."""
    if writer.problems:
        return None, "; ".join(writer.problems)
    if id(writer) in pairing.conflicts:
        return None, "the same path is written both as a model and as weights"
    path = writer.path
    if path is None:
        return None, "the path is not a literal kmigrate can follow"
    elsewhere = _used_elsewhere(writer)
    if elsewhere:
        return None, (
            f"{elsewhere} also use{'s' if ',' not in elsewhere else ''} this file name; "
            "kmigrate rewrites one file at a time, so change the save and its loads together"
        )
    new_tail = path.new_tail(writer.target or "model")
    edit = writer.literal_edit(new_tail)
    if edit is None:
        return None, "the path's suffix is not spelled out literally"
    edits: dict[Span, ReplaceNode] = {edit.span: edit}
    for reader in pairing.readers_of.get(id(writer), []):
        if reader.problems:
            return None, f"the paired load on line {reader.site.span.line}: {reader.problems[0]}"
        reader_edit = reader.literal_edit(new_tail) if reader.path else None
        if reader_edit is None:
            return None, f"the paired load on line {reader.site.span.line} cannot be rewritten"
        edits.setdefault(reader_edit.span, reader_edit)
    if needs_folder(writer):
        folder_edit = _with_folder(writer, edit)
        if folder_edit is None or extra:
            return None, (
                f"the legacy writer created the folder `{path.folder}`, Keras 3 does not; "
                "create it first"
            )
        if folder_edit.span != edit.span:
            edits.pop(edit.span, None)  # the statement text already holds the new path
        edits[folder_edit.span] = folder_edit
    plan_edits = tuple(sorted(edits.values(), key=_span_key)) + tuple(extra)
    return EditPlan(plan_edits, f"write {new_tail}"), ""


def needs_folder(use: PathUse) -> bool:
    """Whether the legacy writer created a folder the code names literally, which Keras 3
    will not create (SavedModel and TF checkpoint writers, and Keras 2's HDF5 ``save``)."""
    if use.path is None or use.path.folder is None:
        return False
    return use.role == "save" or (use.role == "save_weights" and use.path.legacy_kind() == "bare")


def _statement_of(site: CallSite) -> ast.Expr | None:
    """The expression statement that is exactly this call, if any."""
    scope = site.scope.function_node or site.module.tree
    for node in own_nodes(scope):
        if isinstance(node, ast.Expr) and node.value is site.node:
            return node
    return None


def _offset(lines: list[str], origin: Span, line: int, column: int) -> int:
    """Character offset of (line, column) inside the text that starts at ``origin``."""
    if line == origin.line:
        return column - origin.column
    total = len(lines[origin.line - 1]) - origin.column
    total += sum(len(lines[i - 1]) for i in range(origin.line + 1, line))
    return total + column


def _with_folder(writer: PathUse, literal_edit: ReplaceNode) -> ReplaceNode | None:
    """The writer's statement preceded by ``os.makedirs(folder, exist_ok=True)``, with
    the new path spliced in when the path literal is part of the statement."""
    site = writer.site
    statement = _statement_of(site)
    if statement is None or writer.path is None or writer.path.folder is None:
        return None
    module = site.module
    span = module.span_of(statement)
    text = module.segment(span)
    inner = literal_edit.span
    if (inner.line, inner.column) >= (span.line, span.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (span.end_line, span.end_column):
        start = _offset(module.lines, span, inner.line, inner.column)
        stop = _offset(module.lines, span, inner.end_line, inner.end_column)
        text = text[:start] + literal_edit.text + text[stop:]
    folder = writer.path.folder
    if writer.path.via_variable is not None:
        folder = f"{{name:os.path.dirname}}({writer.path.via_variable})"
    makedirs = f"{{name:os.makedirs}}({folder}, exist_ok=True)"
    return ReplaceNode(span, f"{makedirs}\n{text}", kind="stmt")


def _drop_keywords(site: CallSite, names: set[str]) -> CallEdit | None:
    """A CallEdit keeping every argument except keywords in ``names``."""
    if not names & set(site.keywords):
        return None
    args = [ArgOut(i) for i in range(len(site.args))]
    for node in site.node.keywords:  # keep the original keyword order
        if node.arg is not None and node.arg not in names:
            args.append(ArgOut(node.arg, keyword=node.arg))
    return CallEdit(site.span, args=tuple(args))


def _paired_note(writer: PathUse, pairing: Pairing) -> str:
    readers = pairing.readers_of.get(id(writer), [])
    if not readers:
        return ""
    lines = ", ".join(str(r.site.span.line) for r in readers)
    return f"; the load on line {lines} reads it and moves with it"


def _describe_path(use: PathUse) -> str:
    assert use.path is not None
    return f"`{use.path.component}`" if use.path.complete else f"`...{use.path.tail}`"


class LegacyModelSave(_PathRule):
    id = "KM401"
    name = "legacy-model-save"
    summary = "A model saved as HDF5 or as a TF SavedModel folder; Keras 3 saves `.keras`."
    rationale = (
        "Keras 3 only writes the `.keras` format natively: `model.save('dir')` (a SavedModel "
        "in Keras 2) raises, `save_format=` is gone, and `.h5` is a legacy format with "
        "limited support for custom objects. A `.keras` file holds architecture, weights and "
        "optimizer state and loads on TensorFlow, JAX and PyTorch alike."
    )
    fix_safety = (
        "The suffix is rewritten where the path spells it out literally (string, f-string "
        "tail, `os.path.join`, `pathlib` `/`, `+`, `%`/`.format` templates, or a variable "
        "assigned once from one of those); loads of the same path in the module "
        "(`load_model`, `load_weights`) are rewritten in the same fix, so both ends agree. "
        "Not offered when the suffix comes from a variable, when a paired load cannot be "
        "rewritten, or for arguments Keras 3 lacks (`signatures=`, `options=`). Keras 3 does "
        "not create missing folders: when the path names a sub-folder literally, make sure "
        "it exists (the finding says so)."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            model.save("classifier.h5")
            restored = tf.keras.models.load_model("classifier.h5")
            """,
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            model.save("classifier.keras")
            restored = tf.keras.models.load_model("classifier.keras")
            """,
        ),
        Flagged(
            """
            import os
            from pathlib import Path
            from tensorflow import keras

            def export(model, out):
                model.save(os.path.join(out, "saved_model"), save_format="tf")
                model.save(Path(out) / "model.hdf5")
                model.save(f"{out}/final.h5")
            """,
            """
            import os
            from pathlib import Path
            from tensorflow import keras

            def export(model, out):
                model.save(os.path.join(out, "saved_model.keras"))
                model.save(Path(out) / "model.keras")
                model.save(f"{out}/final.keras")
            """,
        ),
        Flagged(
            """
            from tensorflow import keras

            def export(model, name):
                model.save(name, save_format="h5")
            """
        ),
        Clean(
            """
            import keras

            def export(model, image):
                model.save("model.keras")
                image.save("preview")  # a PIL image, not a model
            """
        ),
    ]

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        for use in pairing.uses:
            if use.role != "save":
                continue
            site = use.site
            kind = use.path.legacy_kind() if use.path is not None else None
            has_format = "save_format" in site.keywords
            if kind == "keras" and has_format:
                yield Report(
                    site,
                    "`save_format=` is gone in Keras 3; the `.keras` suffix says it all",
                    fix=EditPlan((_drop_keywords(site, {"save_format"}),), "drop save_format"),
                    severity=Severity.WARNING,
                )
                continue
            if kind in ("keras", "weights") or (kind is None and not has_format):
                continue  # already Keras 3, or a path we cannot read and no legacy clue
            what = {
                "h5": "an HDF5 file",
                "bare": "a TF SavedModel folder (Keras 2's default for a path without suffix)",
                None: f"with save_format={self._format_text(site)}",
            }[kind]
            extra = ()
            drop = _drop_keywords(site, {"save_format"})
            if drop is not None:
                extra = (drop,)
            plan, why = _writer_plan(use, pairing, extra)
            message = f"saves {what}; Keras 3 saves `.keras` (it loads on every backend)"
            if plan is not None:
                message += f": write {_new_name(use)}{_paired_note(use, pairing)}"
                message += _folder_note(use)
            else:
                message += f" (manual: {why})"
            yield Report(site, message, fix=plan, severity=Severity.ERROR)

    @staticmethod
    def _format_text(site: CallSite) -> str:
        node = site.keywords.get("save_format")
        return site.text(node) if node is not None else "?"


def _new_name(use: PathUse) -> str:
    assert use.path is not None
    return f"`{use.path.new_tail(use.target or 'model').split('/')[-1]}`"


def _folder_note(use: PathUse) -> str:
    if not needs_folder(use):
        return ""
    assert use.path is not None
    return f"; the fix creates the folder `{use.path.folder}` first (Keras 3 does not)"


class LegacyWeightsSave(_PathRule):
    id = "KM402"
    name = "legacy-weights-save"
    summary = "Weights saved as a TF checkpoint or plain `.h5`; Keras 3 needs `.weights.h5`."
    rationale = (
        "`model.save_weights()` in Keras 3 only writes files ending in `.weights.h5` and "
        "raises for anything else, so TF checkpoint prefixes (`save_weights('ckpt')`) and "
        "plain `.h5` names stop working. `load_weights()` cannot read TF checkpoints at all."
    )
    fix_safety = (
        "The path's literal suffix becomes `.weights.h5` (`.h5`/`.hdf5`/`.ckpt` replaced, "
        "otherwise appended), together with every `load_weights` of the same path in the "
        "module. Not offered when the suffix is not literal, when a paired load passes "
        "`by_name=` (only legacy `.h5` supports it) or for `options=`. A TF checkpoint "
        "created its folder itself, Keras 3 does not: the finding says when the code names "
        "a sub-folder that must exist."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            from tensorflow import keras

            def train(model, data):
                model.fit(data)
                model.save_weights("weights.h5")
                model.load_weights("weights.h5")
            """,
            """
            from tensorflow import keras

            def train(model, data):
                model.fit(data)
                model.save_weights("weights.weights.h5")
                model.load_weights("weights.weights.h5")
            """,
        ),
        Flagged(
            """
            import os
            import tensorflow as tf

            def train(model, out):
                ckpt = os.path.join(out, "best")
                model.save_weights(ckpt, save_format="tf")
                model.load_weights(ckpt)
            """,
            """
            import os
            import tensorflow as tf

            def train(model, out):
                ckpt = os.path.join(out, "best.weights.h5")
                model.save_weights(ckpt)
                model.load_weights(ckpt)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            def restore(model, prefix):
                model.load_weights(prefix + "/ckpt")
            """
        ),
        Clean(
            """
            import keras

            def train(model):
                model.save_weights("model.weights.h5")
                model.load_weights("model.weights.h5")
                model.load_weights("pretrained.h5")  # legacy HDF5 weights still load
            """
        ),
    ]

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        for use in pairing.uses:
            if use.role == "save_weights":
                yield from self._writer(use, pairing)
            elif use.role == "load_weights" and id(use) not in pairing.writer_of:
                yield from self._lone_reader(use)

    def _writer(self, use: PathUse, pairing: Pairing) -> Iterator[Report]:
        site = use.site
        kind = use.path.legacy_kind() if use.path is not None else None
        has_format = "save_format" in site.keywords
        if kind == "weights" or (kind is None and not has_format):
            if kind == "weights" and has_format:
                drop = _drop_keywords(site, {"save_format"})
                yield Report(
                    site,
                    "`save_format=` is gone in Keras 3; drop it",
                    fix=EditPlan((drop,), "drop save_format") if drop else None,
                )
            return
        what = {
            "h5": "a plain HDF5 file",
            "bare": "a TF checkpoint",
            "keras": "a `.keras` path",
            None: "with save_format=",
        }[kind]
        drop = _drop_keywords(site, {"save_format"})
        plan, why = _writer_plan(use, pairing, (drop,) if drop else ())
        message = f"saves weights as {what}; Keras 3 only writes `.weights.h5`"
        if plan is not None:
            message += f": write {_new_name(use)}{_paired_note(use, pairing)}{_folder_note(use)}"
        else:
            message += f" (manual: {why})"
        yield Report(site, message, fix=plan, severity=Severity.ERROR)

    def _lone_reader(self, use: PathUse) -> Iterator[Report]:
        if use.path is None or use.path.legacy_kind() != "bare":
            return
        yield Report(
            use.site,
            f"loads the TF checkpoint {_describe_path(use)}, which Keras 3 cannot read: "
            "convert it once (load it with TF-Keras 2 and `save_weights('x.weights.h5')`, or "
            "`kmigrate convert-weights` on the full model) and load the `.weights.h5` file",
            severity=Severity.ERROR,
        )


class LegacyModelLoad(_PathRule):
    id = "KM403"
    name = "legacy-model-load"
    summary = "`load_model` on an HDF5 file or SavedModel folder; Keras 3 loads `.keras`."
    rationale = (
        "Keras 3's `keras.saving.load_model` reads `.keras` files and legacy `.h5` files; it "
        "cannot load a TF SavedModel (only wrap one for inference with "
        "`keras.layers.TFSMLayer` on TensorFlow). When the model is saved in the same "
        "module, KM401 moves the save and this load to `.keras` together."
    )
    fix_safety = (
        "The callee becomes `keras.saving.load_model`; the path itself is rewritten by the "
        "KM401/KM405 fix of the save it pairs with, so both ends change together or not at "
        "all. An unpaired `.h5` load keeps its path (Keras 3 still reads legacy HDF5); an "
        "unpaired SavedModel load is reported for conversion (`kmigrate convert-weights`)."
    )
    examples = [
        Flagged(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("pretrained.h5", compile=False)
            """,
            """
            import keras

            model = keras.saving.load_model("pretrained.h5", compile=False)
            """,
        ),
        Flagged(
            """
            from tensorflow import keras

            model = keras.models.load_model("exported/serving_model")
            """
        ),
        Clean(
            """
            import keras

            model = keras.saving.load_model("model.keras")
            """
        ),
    ]

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        for use in pairing.uses:
            if use.role != "load_model" or use.path is None:
                continue
            kind = use.path.legacy_kind()
            if kind not in ("h5", "bare"):
                continue
            site = use.site
            writer = pairing.writer_of.get(id(use))
            rename = CallEdit(site.span, callee="keras.saving.load_model")
            if use.problems:
                yield Report(site, f"loads a legacy model (manual: {use.problems[0]})")
            elif writer is not None:
                yield Report(
                    site,
                    f"loads {_describe_path(use)} written on line {writer.site.span.line}; "
                    f"use `keras.saving.load_model` (the save's fix moves both to "
                    f"{_new_name(writer)})",
                    fix=EditPlan((rename,), "keras.saving.load_model"),
                )
            elif kind == "h5":
                yield Report(
                    site,
                    f"loads the legacy HDF5 file {_describe_path(use)}: Keras 3 still reads "
                    "it, but convert it once to `.keras` (`kmigrate convert-weights OLD.h5 "
                    "NEW.keras`) for custom objects and future versions",
                    fix=EditPlan((rename,), "keras.saving.load_model"),
                    severity=Severity.INFO,
                )
            else:
                yield Report(
                    site,
                    f"loads {_describe_path(use)} as a TF SavedModel, which Keras 3 cannot "
                    "load as a model: convert it once with `kmigrate convert-weights "
                    "OLD_DIR NEW.keras` and load the `.keras` file (or wrap it for "
                    "inference with `keras.layers.TFSMLayer` on TensorFlow)",
                    severity=Severity.ERROR,
                )


class SavedModelSave(Rule):
    id = "KM404"
    name = "saved-model-save"
    summary = "`tf.saved_model.save(model, dir)`; Keras 3 exports with `model.export(dir)`."
    rationale = (
        "`tf.saved_model.save` knows nothing about Keras 3 layers and only works on the "
        "TensorFlow backend. `model.export(dir)` writes the inference SavedModel for TF "
        "Serving / TFLite from a Keras 3 model (endpoint `serve`)."
    )
    fix_safety = (
        "Offered for the two-argument form. `model.export` needs TensorFlow installed and is "
        "exact on the TensorFlow backend; on JAX/PyTorch it converts the model first. "
        "`signatures=` and `options=` have no direct equivalent: use "
        "`keras.export.ExportArchive` (manual)."
    )
    severity = Severity.WARNING
    call_symbols = SAVED_MODEL_SAVE
    examples = [
        Flagged(
            """
            import tensorflow as tf

            def publish(model, out):
                model.fit(tf.data.Dataset.range(4))
                tf.saved_model.save(model, out + "/serving")
            """,
            """
            import tensorflow as tf

            def publish(model, out):
                model.fit(tf.data.Dataset.range(4))
                model.export(out + "/serving")
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            def publish(model, out, fn):
                tf.saved_model.save(model, out, signatures={"serving_default": fn})
            """
        ),
        Clean(
            """
            import keras

            def publish(model, out):
                model.export(out)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        obj = site.arg(0, "obj")
        export_dir = site.arg(1, "export_dir")
        extra = set(site.keywords) - {"obj", "export_dir"}
        note = "(needs TensorFlow installed; exact on the TensorFlow backend)"
        if (
            obj is None
            or export_dir is None
            or extra
            or site.has_star_args
            or len(site.args) > 2
            or not isinstance(obj, (ast.Name, ast.Attribute))
        ):
            why = (
                "signatures/options need `keras.export.ExportArchive`" if extra else "unusual form"
            )
            yield Report(
                site, f"use `model.export(dir)` for a serving SavedModel {note} (manual: {why})"
            )
            return
        text = f"{site.text(obj)}.export({site.text(export_dir)})"
        yield Report(
            site,
            f"use `{site.text(obj)}.export(...)` for a serving SavedModel {note}",
            fix=EditPlan((ReplaceNode(site.span, text),), "model.export"),
        )


class CheckpointSuffix(_PathRule):
    id = "KM405"
    name = "checkpoint-suffix"
    summary = "`ModelCheckpoint` path without `.keras` / `.weights.h5`; Keras 3 raises."
    rationale = (
        "Keras 3's `ModelCheckpoint` requires `.weights.h5` with `save_weights_only=True` and "
        "`.keras` otherwise; Keras 2 wrote SavedModels or TF checkpoints for other paths. "
        "`options=` and `period=` are gone."
    )
    fix_safety = (
        "The literal suffix is rewritten (templates such as `{epoch:02d}` are kept), with any "
        "load of the same path in the module. Not offered when `save_weights_only` is not a "
        "literal, when the suffix is not literal, or for `options=`/`period=` (use "
        "`save_freq`, counted in batches)."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import os
            from tensorflow import keras

            def callbacks(out):
                return [
                    keras.callbacks.ModelCheckpoint(os.path.join(out, "m.h5"), monitor="loss"),
                    keras.callbacks.ModelCheckpoint(
                        out + "/w-{epoch:02d}.hdf5", save_weights_only=True
                    ),
                ]
            """,
            """
            import os
            from tensorflow import keras

            def callbacks(out):
                return [
                    keras.callbacks.ModelCheckpoint(os.path.join(out, "m.keras"), monitor="loss"),
                    keras.callbacks.ModelCheckpoint(
                        out + "/w-{epoch:02d}.weights.h5", save_weights_only=True
                    ),
                ]
            """,
        ),
        Flagged(
            """
            from tensorflow import keras

            checkpoint = keras.callbacks.ModelCheckpoint("ckpt/model", period=5)
            """
        ),
        Clean(
            """
            import keras

            checkpoint = keras.callbacks.ModelCheckpoint("best.keras", save_best_only=True)
            """
        ),
    ]

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        for use in pairing.uses:
            if use.role != "checkpoint":
                continue
            site = use.site
            if use.path is None:
                continue
            kind = use.path.legacy_kind()
            if kind is None:
                continue
            if use.target is None:
                yield Report(
                    site,
                    "Keras 3 needs `.weights.h5` with `save_weights_only=True` and `.keras` "
                    "otherwise (manual: `save_weights_only` is not a literal)",
                )
                continue
            wanted = "weights" if use.target == "weights" else "keras"
            if kind == wanted and not use.problems:
                continue
            plan, why = _writer_plan(use, pairing)
            need = "`.weights.h5`" if use.target == "weights" else "`.keras`"
            message = f"Keras 3's ModelCheckpoint needs a {need} path here"
            if plan is not None and kind != wanted:
                message += f": write {_new_name(use)}{_paired_note(use, pairing)}"
            else:
                plan = None
                message += f" (manual: {why or '; '.join(use.problems)})"
            yield Report(site, message, fix=plan)
