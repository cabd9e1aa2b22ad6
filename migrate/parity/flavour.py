"""Is the original Keras 2 code? Decides which Keras the reference runs on.

The legacy code's truth is Keras 2: Keras 3 runs much old code, but differently in places
(a custom object registered under a built-in name such as ``"gelu"`` wins in Keras 2 and
loses in Keras 3), so an original checked on Keras 3 can agree with a wrong conversion. When
the original imports TensorFlow (``tf.keras``, ``from tensorflow import keras``) or
``tf_keras``, it is Keras 2 code and its reference is Keras 2. Read with `ast` from the
entry module and the sibling modules it imports; nothing is executed.
"""

from __future__ import annotations

import ast
from pathlib import Path

KERAS2_ROOTS = frozenset({"tensorflow", "tf_keras"})
MAX_MODULES = 50


def _imported_roots(tree: ast.AST) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def keras2_importer(source: str, folder: str | None) -> str | None:
    """The module (as a file name) that shows the code is Keras 2, or None.

    Follows imports of sibling modules in `folder` (the entry module's folder), breadth
    first, at most `MAX_MODULES` files.
    """
    queue: list[tuple[str, str]] = [("the model module", source)]
    seen: set[str] = set()
    while queue and len(seen) < MAX_MODULES:
        label, text = queue.pop(0)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        roots = _imported_roots(tree)
        if roots & KERAS2_ROOTS:
            return label
        if folder is None:
            continue
        for root in sorted(roots - seen):
            seen.add(root)
            sibling = Path(folder) / f"{root}.py"
            if sibling.is_file():
                queue.append((sibling.name, sibling.read_text(encoding="utf-8", errors="replace")))
    return None
