"""Imports after an edit: add what the new spellings need, drop the module-level
imports whose every use the edits rewrote away, and never more (an import the code
still reads, or one bound inside a function or class, stays)."""

from __future__ import annotations

import ast
from collections import Counter, deque
from collections.abc import Sequence

import libcst as cst

from kmigrate.engine.cst_nodes import is_docstring
from kmigrate.engine.import_layout import ImportLayout
from kmigrate.engine.import_placement import import_key, place_imports, replace_imports
from kmigrate.engine.model import EnsureImport
from kmigrate.engine.names import import_bindings, module_level_uses


def _name_uses(tree: ast.Module) -> Counter[str]:
    return Counter(module_level_uses(tree))


# What can hold a module-level import: the module, statement lines and suites, and
# every compound statement but ``def`` and ``class`` (imports in those stay).
_IMPORT_HOLDERS = (
    cst.Module,
    cst.SimpleStatementLine,
    cst.SimpleStatementSuite,
    cst.IndentedBlock,
    cst.If,
    cst.Else,
    cst.Try,
    cst.TryStar,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Finally,
    cst.With,
    cst.For,
    cst.While,
    cst.Match,
    cst.MatchCase,
)


class ImportFixer(cst.CSTTransformer):
    """Drops the module-level imports of ``unused`` names and adds ``add``. The visit
    enters only what can hold such an import: never a function, a class or an
    expression."""

    def __init__(
        self,
        unused: set[str],
        add: list[EnsureImport],
        layout: ImportLayout | None = None,
        moved: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        self.unused = unused
        self.add = add
        self.layout = layout or ImportLayout()
        self.moved = moved  # rewritten import lines (see rewritten_imports): sorted again

    def on_visit(self, node: cst.CSTNode) -> bool:
        return isinstance(node, _IMPORT_HOLDERS)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass  # no visit_<Node>_<field> methods here

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def _keep(self, alias: cst.ImportAlias, is_from: bool) -> bool:
        if alias.asname is not None:
            local = alias.asname.name.value  # type: ignore[union-attr]
        elif is_from:
            local = alias.name.value  # type: ignore[union-attr]
        else:
            local = cst.Module(body=[]).code_for_node(alias.name).split(".")[0]
        return local not in self.unused

    def _filter(self, node, is_from: bool):
        names = node.names
        if isinstance(names, cst.ImportStar):
            return node
        kept = [a for a in names if self._keep(a, is_from)]
        if len(kept) == len(names):
            return node
        if not kept:
            return cst.RemovalSentinel.REMOVE
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(names=kept)

    def leave_Import(self, original_node, updated_node):  # noqa: N802
        return self._filter(updated_node, is_from=False)

    def leave_ImportFrom(self, original_node, updated_node):  # noqa: N802
        return self._filter(updated_node, is_from=True)

    def leave_Module(self, original_node, updated_node):  # noqa: N802
        if not self.add and not self.moved:
            return _no_new_blank_start(original_node, updated_node)
        body = list(updated_node.body)
        index = _import_insertion_index(body)
        replace_imports(body, index, self.moved, self.layout)
        had_imports = any(
            isinstance(s, cst.SimpleStatementLine)
            and any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in s.body)
            for s in original_node.body
        )
        place_imports(body, index, self.add, self.layout, new_block=not had_imports)
        _keep_gap_below_docstring(original_node.body, body)
        return _no_new_blank_start(original_node, updated_node.with_changes(body=body))


def _is_import_line(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def _keep_gap_below_docstring(
    original: Sequence[cst.BaseStatement], body: list[cst.BaseStatement]
) -> None:
    """The blank lines between the module docstring and its imports stay when the first
    import line is removed or another import takes its place (the removed line took
    them with it)."""
    if len(original) < 2 or len(body) < 2 or not is_docstring(original[0]):
        return
    if not (_is_import_line(original[1]) and _is_import_line(body[1])):
        return
    blank = [line for line in original[1].leading_lines if line.comment is None]
    if blank and not body[1].leading_lines:
        body[1] = body[1].with_changes(leading_lines=blank)


def _no_new_blank_start(original: cst.Module, updated: cst.Module) -> cst.Module:
    """When the first line (an import) was removed, the next statement must not start
    the file with the blank lines that used to separate it."""
    if not updated.body or not original.body or updated.header or original.header:
        return updated
    first = updated.body[0]
    if original.body[0].leading_lines or not first.leading_lines:
        return updated
    kept = list(first.leading_lines)
    while kept and kept[0].comment is None:
        kept.pop(0)
    return updated.with_changes(body=[first.with_changes(leading_lines=kept), *updated.body[1:]])


def _import_insertion_index(body: Sequence[cst.BaseStatement]) -> int:
    """After the leading docstring, ``__future__`` imports and the top import block."""
    return import_insertion_scan(body)[0]


def import_insertion_scan(body: Sequence[cst.BaseStatement]) -> tuple[int, int]:
    """Where new imports go, and the index of the statement that ended the search
    (``len(body)`` when none did): the answer depends on ``body[:stop + 1]`` only."""
    index = 0
    for i, stmt in enumerate(body):
        if i == 0 and is_docstring(stmt):
            index = 1
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ):
            index = i + 1
            continue
        if isinstance(stmt, (cst.Try, cst.If)) and index == i:
            continue  # `try: import x` blocks inside the import section
        return index, i
    return index, len(body)


_STATEMENT_LISTS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _bound(tree: ast.Module) -> dict[str, str]:
    """What every import in the module binds, the first binding of a name winning in
    ``ast.walk`` order (breadth first). Imports are statements and statements only
    sit in statement lists, so only those are walked: the same imports in the same
    order, without visiting every expression node."""
    bound: dict[str, str] = {}
    todo: deque[ast.AST] = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for local, qualified in import_bindings(node):
                bound.setdefault(local, qualified)
            continue
        for name in node._fields:
            if name in _STATEMENT_LISTS:
                todo.extend(getattr(node, name))
    return bound


def fix_imports(
    original_text: str,
    new_text: str,
    needed: list[EnsureImport],
    keep: frozenset[str] = frozenset(),
    layout: ImportLayout | None = None,
) -> str:
    original, tree = ast.parse(original_text), ast.parse(new_text)
    unused, add = import_changes(original, tree, needed, keep)
    moved = rewritten_imports(original, tree)
    if not unused and not add and not moved:
        return new_text
    module = cst.parse_module(new_text)
    return module.visit(ImportFixer(unused, add, layout, moved)).code


def rewritten_imports(original: ast.Module, tree: ast.Module) -> frozenset[str]:
    """The module-level import lines the edits rewrote (``tensorflow.keras`` became
    ``keras``), by :func:`import_key`: they go where isort sorts their new module."""
    before = {import_key(s) for s in original.body if isinstance(s, (ast.Import, ast.ImportFrom))}
    return frozenset(
        key
        for s in tree.body
        if isinstance(s, (ast.Import, ast.ImportFrom)) and (key := import_key(s)) not in before
    )


def import_changes(
    original: ast.Module,
    tree: ast.Module,
    needed: list[EnsureImport],
    keep: frozenset[str] = frozenset(),
) -> tuple[set[str], list[EnsureImport]]:
    """The module-level names whose imports the edits made unused, and the imports
    the new spellings need that the module does not have yet. A name the module exports
    stays imported however little it is used here: listed in ``__all__``, or in ``keep``
    (other modules of the project import it from this one: ``ModuleFacts.imported_by``)."""
    before = _name_uses(original)
    after = _name_uses(tree)
    imported = _bound(tree)
    exported = keep | exported_names(original)
    unused = {
        name for name in imported if before[name] > 0 and after[name] == 0 and name not in exported
    }
    add: list[EnsureImport] = []
    for wanted in needed:
        local = wanted.asname or wanted.name or wanted.module.split(".")[0]
        qualified = f"{wanted.module}.{wanted.name}" if wanted.name else wanted.module
        if local in imported and local not in unused:
            continue  # already there (or bound to something we must not shadow)
        if imported.get(local) == qualified and local in unused:
            unused.discard(local)
            continue
        add.append(wanted)
    return unused, add


def exported_names(tree: ast.Module) -> frozenset[str]:
    """The names a module's ``__all__`` lists (literal strings; ``__all__ = [...]``,
    ``+=`` and annotated forms), at module level."""
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets, value = [stmt.target], stmt.value
        else:
            continue
        if value is None or not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        if isinstance(value, (ast.List, ast.Tuple)):
            names.update(
                e.value
                for e in value.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
    return frozenset(names)
