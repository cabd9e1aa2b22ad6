"""The star imports of a module, with the Keras module each names: what KM109 (names only a
Keras 2 star import brings) and the sub-layer detection (a bare ``Dense`` from
``from keras.layers import *``) both read."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kmigrate.engine import ModuleInfo
from kmigrate.rules.common.keras_paths import legacy_path

_KERAS_ROOTS = ("keras", "tensorflow.keras")


@dataclass(frozen=True)
class StarImport:
    node: ast.ImportFrom
    module: str  # as written (``keras.layers``; relative ones without their dots)
    keras_path: str | None  # under ``keras.`` (``layers``), None when not a Keras module


def star_imports(module: ModuleInfo) -> list[StarImport]:
    """Every ``from m import *`` of the module, in source order."""
    found = []
    for node in module.index.nodes(ast.ImportFrom):
        if not any(alias.name == "*" for alias in node.names):  # type: ignore[attr-defined]
            continue
        name = node.module or ""  # type: ignore[attr-defined]
        path = None
        if not node.level:  # type: ignore[attr-defined]
            path = next(
                (p for p in (legacy_path(name, root) for root in _KERAS_ROOTS) if p is not None),
                None,
            )
        found.append(StarImport(node, name, path))  # type: ignore[arg-type]
    return sorted(found, key=lambda star: (star.node.lineno, star.node.col_offset))
