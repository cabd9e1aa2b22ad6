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
import warnings
from collections.abc import Iterator

from kmigrate.names import code_children, import_bindings
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
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return count_tf_statements(tree)
