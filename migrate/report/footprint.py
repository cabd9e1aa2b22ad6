"""A file's framework footprint: how many statements use TensorFlow or Keras.

This is the denominator of the portability score (docs/report.md). A statement
counts when its own expressions (not the bodies of nested blocks) read a name bound
by an import of a framework module (``rules.effort.FRAMEWORK_MODULES``), or when it is
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

from migrate.names import import_bindings
from rules.effort import FRAMEWORK_MODULES

_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _framework_names(tree: ast.AST) -> tuple[set[str], set[int]]:
    """Local names bound to framework modules, and the ids of the imports that bind them."""
    names: set[str] = set()
    imports: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for local, qualified in import_bindings(node):
                if qualified.split(".", 1)[0] in FRAMEWORK_MODULES:
                    names.add(local)
                    imports.add(id(node))
    return names, imports


def _own_expressions(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The parts of a statement that are not nested statement blocks."""
    for name, value in ast.iter_fields(stmt):
        if name in _BLOCK_FIELDS:
            if name == "handlers":  # `except tf.errors.X:` belongs to the try statement
                yield from (h.type for h in value if h.type is not None)
            continue
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            yield value


def count_tf_statements(tree: ast.AST) -> int:
    """Statements of ``tree`` that import or use TensorFlow / Keras."""
    names, imports = _framework_names(tree)
    if not names:
        return 0
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if id(node) in imports:
            count += 1
            continue
        for part in _own_expressions(node):
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(part)):
                count += 1
                break
    return count


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
