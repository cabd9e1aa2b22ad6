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
from collections.abc import Iterator

from kmigrate.engine.names import code_children, import_bindings
from kmigrate.engine.sources import parse_or_none
from kmigrate.rules.effort import FRAMEWORK_MODULES


def _statements(tree: ast.AST) -> Iterator[tuple[ast.stmt, list[ast.AST]]]:
    """Every statement with its own expressions (not the bodies of nested blocks;
    ``except tf.errors.X:`` belongs to its ``try``). One pass over the tree."""
    todo: list[ast.AST] = list(getattr(tree, "body", ()))
    while todo:
        stmt = todo.pop()
        own: list[ast.AST] = []
        for child in code_children(stmt):
            if isinstance(child, ast.stmt):
                todo.append(child)
            elif child.__class__ is ast.ExceptHandler or child.__class__ is ast.match_case:
                if child.__class__ is ast.ExceptHandler and child.type is not None:
                    own.append(child.type)
                todo.extend(child.body)
            else:
                own.append(child)
        yield stmt, own  # type: ignore[misc]


def _reads_any(parts: list[ast.AST], names: set[str]) -> bool:
    """Whether a name in ``names`` is read anywhere in the expressions ``parts``."""
    todo = list(parts)
    while todo:
        node = todo.pop()
        while node.__class__ is ast.Attribute:  # down a dotted chain to its root
            node = node.value  # type: ignore[attr-defined]
        if node.__class__ is ast.Name:
            if node.id in names:  # type: ignore[attr-defined]
                return True
        elif node.__class__ is not ast.Constant:
            todo.extend(code_children(node))
    return False


def count_tf_statements(tree: ast.AST) -> int:
    """Statements of ``tree`` that import or use TensorFlow / Keras.

    Runs on every scanned file, so it is one pass over the statements (which also
    finds the imports, wherever they are) and then one over their expressions,
    stopping at the first framework name a statement reads.
    """
    names: set[str] = set()
    imports = 0
    others: list[list[ast.AST]] = []
    for stmt, own in _statements(tree):
        if stmt.__class__ is ast.Import or stmt.__class__ is ast.ImportFrom:
            bound = [
                local
                for local, qualified in import_bindings(stmt)  # type: ignore[arg-type]
                if qualified.split(".", 1)[0] in FRAMEWORK_MODULES
            ]
            if bound:
                names.update(bound)
                imports += 1
                continue
        others.append(own)
    if not names:
        return 0
    return imports + sum(1 for own in others if own and _reads_any(own, names))


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


def tensorflow_uses(tree: ast.AST, text: str) -> list[TfUse]:
    """Every place the file reads a name bound by a TensorFlow import, as the longest
    dotted name written there (``tf.shape``, ``K.int_shape``), and every TensorFlow
    import whose names are never read (``import tensorflow`` for its side effects).

    The report compares these positions with the fixable findings' to say which uses
    ``kmigrate apply`` leaves (:func:`leftovers`). Scope is ignored as in the count above.
    """
    lines = text.splitlines()
    bound: dict[str, tuple[int, int]] = {}
    imports: list[tuple[int, int, str]] = []
    for stmt, _ in _statements(tree):
        if stmt.__class__ is ast.Import or stmt.__class__ is ast.ImportFrom:
            for local, qualified in import_bindings(stmt):  # type: ignore[arg-type]
                if qualified.split(".", 1)[0] in _TENSORFLOW_MODULES:
                    where = (stmt.lineno, _char_column(lines, stmt.lineno, stmt.col_offset))
                    bound[local] = where
                    imports.append((*where, local))
    if not bound:
        return []
    uses: list[TfUse] = []
    read: set[str] = set()
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if node.__class__ is ast.Attribute or node.__class__ is ast.Name:
            chain, root = [], node
            while root.__class__ is ast.Attribute:
                chain.append(root.attr)  # type: ignore[attr-defined]
                root = root.value  # type: ignore[attr-defined]
            if root.__class__ is ast.Name and root.id in bound:  # type: ignore[attr-defined]
                if node.__class__ is ast.Attribute or isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                    name = ".".join([root.id, *reversed(chain)])  # type: ignore[attr-defined]
                    column = _char_column(lines, node.lineno, node.col_offset)  # type: ignore[attr-defined]
                    uses.append((node.lineno, column, name, *bound[root.id]))  # type: ignore[attr-defined]
                    read.add(root.id)  # type: ignore[attr-defined]
                continue
            if root.__class__ is not ast.Name:
                todo.append(root)  # `f(x).y`: the call may read TensorFlow names
            continue
        todo.extend(code_children(node))
    for line, column, local in imports:
        if local not in read:
            uses.append((line, column, f"import {local}", line, column))
    return sorted(uses)


def leftovers(uses: list[TfUse], fixed_starts: set[tuple[int, int]]) -> list[str]:
    """The TensorFlow names still used after ``kmigrate apply``, sorted and unique.

    A use is gone when a fixable finding starts where it starts (the rewrite replaces
    that call or name) or where its import starts (the import is rewritten to Keras 3,
    so the name comes from Keras). An import no use is left of is removed by ``apply``
    as unused, or rewritten once the uses that blocked it are gone.
    """
    left = {
        name
        for line, column, name, import_line, import_column in uses
        if (line, column) not in fixed_starts and (import_line, import_column) not in fixed_starts
    }
    return sorted(left)


def tensorflow_uses_of_text(text: str | None) -> list[TfUse] | None:
    """:func:`tensorflow_uses` of source text; None when there is none or it does not parse."""
    tree = parse_or_none(text) if text is not None else None
    return None if tree is None else tensorflow_uses(tree, text)
