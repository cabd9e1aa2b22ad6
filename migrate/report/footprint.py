"""A file's framework footprint: how many statements use TensorFlow or Keras.

This is the denominator of the portability score (docs/report.md). A statement
counts when its own expressions (not the bodies of nested blocks) read a name bound
by an import of a framework module (``kmigrate.rules.effort.FRAMEWORK_MODULES``), or when it is
such an import. Shadowing is ignored: a local variable named like an import still
counts, which at worst makes a file look a little more framework-heavy than it is.

The engine may attach the number to each ``FileReport`` as ``tf_statements`` (it has
the tree already); when it does not, the report computes it here from the file.
"""

from __future__ import annotations

import ast
import json
from bisect import bisect_left

from kmigrate.engine.names import code_children, import_bindings
from kmigrate.engine.sources import parse_or_none
from kmigrate.engine.tree_index import TreeIndex
from kmigrate.rules.effort import FRAMEWORK_MODULES


def _framework_imports(index: TreeIndex, modules: tuple[str, ...] | frozenset[str]):
    """(import statement, [(local name, qualified name)]) for every import, anywhere in
    the module, with the names it binds to one of ``modules``."""
    for stmt in index.nodes(ast.Import, ast.ImportFrom):
        bound = [
            (local, qualified)
            for local, qualified in import_bindings(stmt)  # type: ignore[arg-type]
            if qualified.split(".", 1)[0] in modules
        ]
        yield stmt, bound


def count_tf_statements(tree: ast.AST, index: TreeIndex | None = None) -> int:
    """Statements of ``tree`` that import or use TensorFlow / Keras.

    A statement uses a framework name when one is read in its own expressions: not in
    the bodies of nested blocks, not in a ``case`` pattern or guard (an ``except`` type
    belongs to its ``try``). Runs on every scanned file, so it reads the module's
    :class:`TreeIndex` (``index``, when the caller has it) instead of walking the tree
    again: the framework names by number, and only the statements that hold one.
    """
    index = index or TreeIndex(tree)  # type: ignore[arg-type]
    names: set[str] = set()
    imports = 0
    for _, bound in _framework_imports(index, FRAMEWORK_MODULES):
        if bound:
            names.update(local for local, _ in bound)
            imports += 1
    if not names:
        return 0
    nodes, numbers = index.kinds.get(ast.Name, ([], []))
    reads = [n for x, n in zip(nodes, numbers) if x.id in names]  # type: ignore[attr-defined]
    return imports + len(_statements_reading(index, reads)) if reads else imports


def _statements_reading(index: TreeIndex, reads: list[int]) -> set[int]:
    """Ids of the statements whose own expressions hold one of the nodes numbered
    ``reads`` (sorted).

    Down from the module, into the statements (and ``except`` and ``case`` blocks) that
    hold a read, skipping every other subtree whole. No node's range is walked for: the
    walk numbers a node's children last to first, each child's subtree whole, so a
    child's subtree ends just before the child listed before it, and the first child's
    where its parent's does. A read in an ``except`` clause's type is its ``try``'s; in
    a ``case`` pattern or guard, no statement's."""
    numbers = index.numbers
    last = len(reads)
    using: set[int] = set()
    # (node, its last number, the statement its expressions' reads belong to or None)
    todo: list[tuple[ast.AST, int, ast.AST | None]] = [(index.tree, len(index.order) - 1, None)]
    while todo:
        node, end, owner = todo.pop()
        for child in code_children(node):
            start = numbers[id(child)]
            at = bisect_left(reads, start)
            if at < last and reads[at] <= end:  # a read in the child's subtree
                if isinstance(child, ast.stmt):
                    todo.append((child, end, child))
                elif child.__class__ is ast.ExceptHandler:
                    todo.append((child, end, owner))
                elif child.__class__ is ast.match_case:
                    todo.append((child, end, None))
                elif owner is not None:
                    using.add(id(owner))
            end = start - 1  # the subtree of the child listed before ends here
    return using


def _notebook_code(text: str) -> str:
    """Code cells of a notebook joined, IPython magics and shell lines commented out."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return ""
    lines: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        for line in source.splitlines():
            stripped = line.lstrip()
            lines.append("#" + line if stripped.startswith(("%", "!", "?")) else line)
        lines.append("")
    return "\n".join(lines)


def count_text(text: str, path: str = "") -> int | None:
    """Framework statements in source ``text`` (a notebook when ``path`` ends .ipynb);
    None when it does not parse."""
    if path.endswith(".ipynb"):
        text = _notebook_code(text)
    tree = parse_or_none(text)
    return None if tree is None else count_tf_statements(tree)


# -- "Does my code still need TensorFlow?" -----------------------------------------------

# Imports that keep a file on TensorFlow: TensorFlow itself and Keras 2 through tf_keras.
_TENSORFLOW_MODULES = ("tensorflow", "tf_keras")
# A use of TensorFlow: (line, character column, the dotted name as written, the line and
# column of the import statement that binds its root name).
TfUse = tuple[int, int, str, int, int]


def _char_column(lines: list[str], line: int, byte_col: int) -> int:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if text.isascii():
        return byte_col
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


def tensorflow_uses(tree: ast.AST, text: str, index: TreeIndex | None = None) -> list[TfUse]:
    """Every place the file reads a name bound by a TensorFlow import, as the longest
    dotted name written there (``tf.shape``, ``K.int_shape``), and every TensorFlow
    import whose names are never read (``import tensorflow`` for its side effects).

    The report compares these positions with the fixable findings' to say which uses
    ``kmigrate apply`` leaves (:func:`leftovers`). Scope is ignored as in the count above.
    ``index``: the module's :class:`TreeIndex`, when the caller has it.
    """
    index = index or TreeIndex(tree)  # type: ignore[arg-type]
    lines = text.splitlines()
    bound: dict[str, tuple[int, int]] = {}
    imports: list[tuple[int, int, str, str]] = []
    for stmt, names in _framework_imports(index, _TENSORFLOW_MODULES):
        for local, qualified in names:
            where = (stmt.lineno, _char_column(lines, stmt.lineno, stmt.col_offset))
            bound[local] = where
            imports.append((*where, local, _import_text(local, qualified)))
    if not bound:
        return []
    roots = [name for name in index.nodes(ast.Name) if name.id in bound]  # type: ignore[attr-defined]
    # the attribute each node is the value of: up a dotted chain from its root name
    outer = {id(a.value): a for a in index.nodes(ast.Attribute)} if roots else {}  # type: ignore[attr-defined]
    uses: list[TfUse] = []
    read: set[str] = set()
    for root in roots:
        node, chain = root, [root.id]  # type: ignore[attr-defined]
        while id(node) in outer:
            node = outer[id(node)]
            chain.append(node.attr)  # type: ignore[attr-defined]
        if node is root and root.ctx.__class__ is not ast.Load:  # type: ignore[attr-defined]
            continue  # `tf = None`: bound, not read
        column = _char_column(lines, node.lineno, node.col_offset)  # type: ignore[attr-defined]
        uses.append((node.lineno, column, ".".join(chain), *bound[root.id]))  # type: ignore[attr-defined]
        read.add(root.id)  # type: ignore[attr-defined]
    for line, column, local, written in imports:
        if local not in read:
            uses.append((line, column, written, line, column))
    return sorted(uses)


def _import_text(local: str, qualified: str) -> str:
    """The import as a reader knows it: ``import tensorflow as tf``, not ``import tf``."""
    if qualified == local or qualified.startswith(local + "."):
        return f"import {qualified}" if qualified == local else f"import {local}"
    module, _, name = qualified.rpartition(".")
    if module and name == local:
        return f"from {module} import {name}"
    return f"import {qualified} as {local}"


Region = tuple[int, int, int, int]  # line, column, end line, end column (characters)


def apply_effects(
    findings, tree: ast.AST, text: str, index: TreeIndex | None = None
) -> tuple[list[Region], set[str]]:
    """What ``kmigrate apply`` does to TensorFlow names beyond the calls it rewrites: the
    regions whose code its fixes replace (an expression, or an argument value it
    translates: ``tf.float32`` -> ``"float32"``), and the TensorFlow names its fixes
    write (a Keras 2 backend call rewritten to ``tf.reduce_sum`` outside model code).
    ``index``: the tree's :class:`TreeIndex` when the caller has one (saves a walk)."""
    from kmigrate.engine.model import CallEdit, ReplaceNode

    lines = text.splitlines()
    calls: _CallsAt | None = None
    regions: list[Region] = []
    added: set[str] = set()
    for finding in findings:
        plan = getattr(finding, "fix", None)
        if plan is None:
            continue
        for edit in plan.edits:
            if isinstance(edit, ReplaceNode) and edit.kind == "expr":
                span = edit.span
                regions.append((span.line, span.column, span.end_line, span.end_column))
                added.update(_tensorflow_names(edit.text))
            elif isinstance(edit, CallEdit):
                if edit.callee and edit.callee.split(".")[0] in _TENSORFLOW_MODULES:
                    added.add("tf." + edit.callee.partition(".")[2])
                if not edit.args:
                    continue
                if calls is None:
                    calls = _CallsAt(tree, lines, index)
                call = calls.get((edit.span.line, edit.span.column))
                for out in edit.args:
                    added.update(_tensorflow_names(out.value or ""))
                    node = _argument(call, out.source) if out.value is not None else None
                    if node is not None:
                        regions.append(_region(lines, node))
                regions += [_region(lines, node) for node in _dropped(call, edit.args)]
    return regions, added


class _CallsAt:
    """The call at a (line, character column), as a breadth-first walk's last call there
    (of calls that start at one place, e.g. ``f(a)(b)``, the innermost). With the tree's
    index the calls are already listed: only a place two calls share needs the walk."""

    def __init__(self, tree: ast.AST, lines: list[str], index: TreeIndex | None) -> None:
        self._tree, self._lines = tree, lines
        self._walked: dict[tuple[int, int], ast.Call] | None = None
        self._listed: dict[tuple[int, int], list[ast.Call]] | None = None
        if index is not None:
            self._listed = {}
            for node in index.nodes(ast.Call):
                self._listed.setdefault(self._place(node), []).append(node)

    def _place(self, node: ast.Call) -> tuple[int, int]:
        return node.lineno, _char_column(self._lines, node.lineno, node.col_offset)

    def get(self, place: tuple[int, int]) -> ast.Call | None:
        if self._listed is not None:
            found = self._listed.get(place)
            if found is None or len(found) == 1:
                return found[0] if found else None
        if self._walked is None:
            walked = (n for n in ast.walk(self._tree) if isinstance(n, ast.Call))
            self._walked = {self._place(n): n for n in walked}
        return self._walked.get(place)


def _tensorflow_names(text: str) -> set[str]:
    """``{name:tensorflow.x}`` placeholders of a fix's text, as ``tf.x``."""
    names = set()
    for part in text.split("{name:")[1:]:
        qualified = part.partition("}")[0]
        if qualified.split(".")[0] in _TENSORFLOW_MODULES:
            names.add("tf." + qualified.partition(".")[2])
    return names


def _argument(call: ast.Call | None, source: int | str | None) -> ast.expr | None:
    if call is None or source is None:
        return None
    if isinstance(source, int):
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        return positional[source] if source < len(positional) else None
    return next((k.value for k in call.keywords if k.arg == source), None)


def _dropped(call: ast.Call | None, outs) -> list[ast.expr]:
    """The arguments of ``call`` the new argument list leaves out (``name=``, a
    ``synchronization=`` Keras 3 does not take): their TensorFlow names go with them."""
    if call is None:
        return []
    kept = {out.source for out in outs}
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    gone = [arg for index, arg in enumerate(positional) if index not in kept]
    return gone + [k.value for k in call.keywords if k.arg is not None and k.arg not in kept]


def _region(lines: list[str], node: ast.expr) -> Region:
    end_line = node.end_lineno or node.lineno
    return (
        node.lineno,
        _char_column(lines, node.lineno, node.col_offset),
        end_line,
        _char_column(lines, end_line, node.end_col_offset or 0),
    )


def _inside(line: int, column: int, regions: list[Region]) -> bool:
    return any((a, b) <= (line, column) < (c, d) for a, b, c, d in regions)


def leftovers(
    uses: list[TfUse],
    fixed_starts: set[tuple[int, int]],
    effects: tuple[list[Region], set[str]] = ([], set()),
) -> list[str]:
    """The TensorFlow names still used after ``kmigrate apply``, sorted and unique.

    A use is gone when a fixable finding starts where it starts (the rewrite replaces
    that call or name) or where its import starts (the import is rewritten to Keras 3,
    so the name comes from Keras). An import no use is left of is removed by ``apply``
    as unused, or rewritten once the uses that blocked it are gone.
    """
    regions, added = effects
    left = {
        name
        for line, column, name, import_line, import_column in uses
        if (line, column) not in fixed_starts
        and (import_line, import_column) not in fixed_starts
        and not _inside(line, column, regions)
    }
    return sorted(left | added)


def tensorflow_uses_of_text(text: str | None) -> list[TfUse] | None:
    """:func:`tensorflow_uses` of source text; None when there is none or it does not parse."""
    tree = parse_or_none(text) if text is not None else None
    return None if tree is None else tensorflow_uses(tree, text)
