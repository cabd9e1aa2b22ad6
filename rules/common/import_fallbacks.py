"""Import fallbacks between Keras 2 internals: ``try: from keras.src.engine.node import
Node`` / ``except ImportError: from keras.engine.node import Node``.

Keras 2.13+ moved its implementation under ``keras.src``; projects wrote a fallback for
each side. Keras 3 has neither (its ``keras.src`` has no ``engine``), so both branches
fail and the module no longer imports. KM103 reads the pair as one: both branches move
to the Keras 3 home of the names where there is one, else the ``try`` is reported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kmigrate.engine import ImportSite
from kmigrate.rules.common.keras_api import keras3_path
from kmigrate.rules.common.keras_paths import legacy_path

# Keras 2.13+'s private packages that Keras 3's `keras.src` does not have: a path below
# one of them is a Keras 2 path (`keras.src.engine.node` is `keras.engine.node`).
KERAS2_SRC_PACKAGES = ("engine", "legacy_tf_layers", "premade_models", "testing_infra")
_CAUGHT = frozenset({"ImportError", "ModuleNotFoundError", "Exception"})


@dataclass(frozen=True)
class Fallback:
    """A ``try``/``except ImportError`` whose two branches import the same names."""

    statement: ast.Try
    first: ast.ImportFrom  # in the ``try`` body
    second: ast.ImportFrom  # in the handler

    def branches(self) -> tuple[str, str]:
        return self.first.module or "", self.second.module or ""


def keras2_module(module: str) -> str | None:
    """The Keras 2 path (relative to ``keras``) of a standalone Keras module, its
    ``keras.src`` spelling of Keras 2.13+ included; None for any other module."""
    path = legacy_path(module, "keras")
    if path is None:
        return None
    head, _, rest = path.partition(".")
    if head == "src":
        package = rest.partition(".")[0]
        return rest if package in KERAS2_SRC_PACKAGES else None
    return path


def fallback_of(site: ImportSite) -> Fallback | None:
    """The fallback ``site``'s import is a branch of, when both branches import the same
    names from Keras 2 internals (else None: a fallback to ``tf.keras`` works)."""
    node = site.node
    if not isinstance(node, ast.ImportFrom):
        return None
    parent = site.module.parent_of(node)
    if isinstance(parent, ast.ExceptHandler):
        parent = site.module.parent_of(parent)
    if not isinstance(parent, ast.Try) or len(parent.handlers) != 1:
        return None
    handler = parent.handlers[0]
    if not _catches_import_error(handler.type):
        return None
    first, second = parent.body, handler.body
    if len(first) != 1 or len(second) != 1:
        return None
    one, other = first[0], second[0]
    if not isinstance(one, ast.ImportFrom) or not isinstance(other, ast.ImportFrom):
        return None
    if one.level or other.level or _bound(one) != _bound(other):
        return None
    if not _keras2_internal(one) or not _keras2_internal(other):
        return None
    return Fallback(parent, one, other)


def _keras2_internal(node: ast.ImportFrom) -> bool:
    """Whether ``node`` imports from a Keras 2 path that Keras 3 does not have as it is
    (``keras.engine.node``; not ``keras.layers``, which a fallback may well reach)."""
    path = keras2_module(node.module or "")
    if path is None:
        return False
    return any(
        keras3_path(f"{path}.{alias.name}") != f"{path}.{alias.name}" for alias in node.names
    )


def _catches_import_error(caught: ast.expr | None) -> bool:
    if caught is None:
        return True
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(n, ast.Name) and n.id in _CAUGHT for n in names)


def _bound(node: ast.ImportFrom) -> list[tuple[str, str]]:
    return sorted((a.name, a.asname or a.name) for a in node.names)
