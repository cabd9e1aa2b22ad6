"""Is the original Keras 2 code? Decides which Keras the reference runs on.

The legacy code's truth is Keras 2: Keras 3 runs much old code, but differently in places
(a custom object registered under a built-in name such as ``"gelu"`` wins in Keras 2 and
loses in Keras 3), so an original checked on Keras 3 can agree with a wrong conversion. When
the original imports TensorFlow (``tf.keras``, ``from tensorflow import keras``) or
``tf_keras``, it is Keras 2 code and its reference is Keras 2. Read with `ast` from the
entry module and every project module it imports, directly or through others (packages and
relative imports included); nothing is executed.
"""

from __future__ import annotations

import ast
from pathlib import Path

KERAS2_ROOTS = frozenset({"tensorflow", "tf_keras"})
MAX_MODULES = 200


def _imports(tree: ast.AST) -> list[tuple[int, str, list[str]]]:
    """(level, module, imported names) of every import statement, nested ones included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((0, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or "", [a.name for a in node.names]))
    return found


def _module_file(root: Path, dotted: str) -> Path | None:
    if not dotted:
        return None
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_root(folder: Path) -> Path:
    """The folder above the outermost package holding `folder` (where its imports start)."""
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder


def _targets(file: Path | None, level: int, module: str, names: list[str], roots: list[Path]):
    """The project files an import statement runs: the module, its parent packages and,
    for ``from m import x``, ``m.x`` when that is a module."""
    if level:
        if file is None:
            return
        base = file.parent
        for _ in range(level - 1):
            base = base.parent
        dotted = [module] if module else []
        candidates = [(base, ".".join(dotted))]
        candidates += [(base, ".".join([*dotted, n])) for n in names]
        if not module:
            init = base / "__init__.py"
            if init.is_file():
                yield init
        for root, name in candidates:
            found = _module_file(root, name)
            if found:
                yield found
        return
    parts = module.split(".")
    dotted = [".".join(parts[: n + 1]) for n in range(len(parts))]
    dotted += [f"{module}.{n}" for n in names]
    for root in roots:
        for name in dotted:
            found = _module_file(root, name)
            if found:
                yield found


def keras2_importer(source: str, folder: str | None, path: str | None = None) -> str | None:
    """The module (as a file name) that shows the code is Keras 2, or None.

    Follows the model's imports through the project, read with `ast` and never run:
    absolute imports resolved from the entry module's folder and from the folder above
    its outermost package, relative imports from the importing file's package, packages'
    ``__init__.py`` included; breadth first, at most `MAX_MODULES` files. `path` is the
    entry module's file (for its relative imports).
    """
    entry = Path(path).resolve() if path else None
    roots: list[Path] = []
    if folder is not None:
        roots.append(Path(folder).resolve())
        top = _package_root(Path(folder).resolve())
        if top not in roots:
            roots.append(top)
    queue: list[tuple[str, Path | None, str]] = [("the model module", entry, source)]
    seen: set[Path] = {entry} if entry else set()
    while queue and len(seen) <= MAX_MODULES:
        label, file, text = queue.pop(0)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        statements = _imports(tree)
        if any(not level and mod.split(".")[0] in KERAS2_ROOTS for level, mod, _ in statements):
            return label
        for level, module, names in statements:
            for target in _targets(file, level, module, names, roots):
                target = target.resolve()
                if target in seen:
                    continue
                seen.add(target)
                text = target.read_text(encoding="utf-8", errors="replace")
                queue.append((_label(target, roots), target, text))
    return None


def _label(file: Path, roots: list[Path]) -> str:
    for root in roots:
        try:
            return str(file.relative_to(root))
        except ValueError:
            continue
    return file.name
