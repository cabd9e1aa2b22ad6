"""Writers and readers of one module paired by path, the base rule that collects them
during the walk, and the edits and notes the KM4xx rules share.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, ReplaceNode, Span
from kmigrate.rules.base import Report, Rule
from kmigrate.rules.common.scopes import own_nodes
from kmigrate.rules.common.splice import text_with
from kmigrate.rules.km4_saving._uses import (
    CHECKPOINT_CALLBACKS,
    LOAD_MODEL_FUNCTIONS,
    READER_METHODS,
    SAVE_MODEL_FUNCTIONS,
    WRITER_METHODS,
    PathUse,
    classify,
)


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


class PathRule(Rule):
    """Base of the rules that need every writer and reader of a module."""

    call_symbols = SAVE_MODEL_FUNCTIONS | LOAD_MODEL_FUNCTIONS | CHECKPOINT_CALLBACKS
    method_names = WRITER_METHODS | READER_METHODS

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
    literal = writer.path.literal if writer.path is not None else None
    if not isinstance(literal, ast.Constant) or not isinstance(literal.value, str):
        return ""
    return writer.site.module.shared_path_users(literal.value)


def _span_key(edit: ReplaceNode) -> Span:
    return edit.span


def writer_plan(
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
        if folder_edit.span != edit.span and folder_edit.span.contains(edit.span):
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


def _with_folder(writer: PathUse, literal_edit: ReplaceNode) -> ReplaceNode | None:
    """The writer's statement preceded by ``os.makedirs(folder, exist_ok=True)``, with
    the new path spliced in when the path literal is part of the statement."""
    site = writer.site
    statement = _statement_of(site)
    if statement is None or writer.path is None or writer.path.folder is None:
        return None
    module = site.module
    span = module.span_of(statement)
    text = text_with(module, span, [(literal_edit.span, literal_edit.text)])
    folder = writer.path.folder
    if writer.path.via_variable is not None:
        folder = f"{{name:os.path.dirname}}({writer.path.via_variable})"
    makedirs = f"{{name:os.makedirs}}({folder}, exist_ok=True)"
    return ReplaceNode(span, f"{makedirs}\n{text}", kind="stmt")


def drop_keywords(site: CallSite, names: set[str]) -> CallEdit | None:
    """A CallEdit keeping every argument except keywords in ``names``."""
    if not names & set(site.keywords):
        return None
    args = [ArgOut(i) for i in range(len(site.args))]
    for node in site.node.keywords:  # keep the original keyword order
        if node.arg is not None and node.arg not in names:
            args.append(ArgOut(node.arg, keyword=node.arg))
    return CallEdit(site.span, args=tuple(args))


def paired_note(writer: PathUse, pairing: Pairing) -> str:
    readers = pairing.readers_of.get(id(writer), [])
    if not readers:
        return ""
    lines = ", ".join(str(r.site.span.line) for r in readers)
    return f"; the load on line {lines} reads it and moves with it"


def describe_path(use: PathUse) -> str:
    assert use.path is not None
    return f"`{use.path.component}`" if use.path.complete else f"`...{use.path.tail}`"


def new_name(use: PathUse) -> str:
    assert use.path is not None
    return f"`{use.path.new_tail(use.target or 'model').split('/')[-1]}`"


def folder_note(use: PathUse) -> str:
    if not needs_folder(use):
        return ""
    assert use.path is not None
    return f"; the fix creates the folder `{use.path.folder}` first (Keras 3 does not)"
