"""Modules that import a framework only if it is installed.

Keras 3 projects that run on every backend still use TensorFlow for their input
pipelines (tokenizers, preprocessing layers): ``tf.data`` runs TensorFlow ops on any
backend, while a ``keras.ops`` call inside a ``tf.data`` map fails on JAX and PyTorch
(it gets a symbolic TensorFlow tensor). Such a module imports TensorFlow the way an
optional dependency is imported::

    try:
        import tensorflow as tf
    except ImportError:
        tf = None

Its TensorFlow calls are deliberate, and rewriting them would break the pipeline they
run in. Legacy code needs TensorFlow and imports it unguarded (or re-raises), so this
tells the two apart. Which symbols count (``tf``) comes from the spec.
"""

from __future__ import annotations

import ast

from kmigrate.engine.names import Canonical, import_bindings
from kmigrate.engine.project_entry import module_statements

# Exceptions whose handler makes a failed import optional: a ``raise`` in the handler
# makes it required again.
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def optional_imports(
    tree: ast.Module, canonical: Canonical, symbols: tuple[str, ...], package: str = ""
) -> dict[str, int]:
    """The canonical ``symbols`` the module imports only optionally, each with the line
    of its guarded import: every module-level import binding it is in the ``try`` body
    of a ``try``/``except ImportError`` whose handlers do not raise."""
    if not symbols:
        return {}
    statements = list(module_statements(tree.body))
    guarded_ids = {
        id(inner)
        for statement in statements
        if statement.__class__ is ast.Try and _makes_optional(statement)  # type: ignore[arg-type]
        for inner in module_statements(statement.body)  # type: ignore[attr-defined]
    }
    guarded: dict[str, int] = {}
    required: set[str] = set()
    for statement in statements:
        if statement.__class__ is not ast.Import and statement.__class__ is not ast.ImportFrom:
            continue
        for _, qualified in import_bindings(statement, package):  # type: ignore[arg-type]
            symbol = canonical(qualified)
            if symbol not in symbols:
                continue
            if id(statement) in guarded_ids:
                guarded.setdefault(symbol, statement.lineno)
            else:
                required.add(symbol)
    return {symbol: line for symbol, line in guarded.items() if symbol not in required}


def _makes_optional(statement: ast.Try) -> bool:
    """Whether a failed import in the ``try`` body is caught and the module goes on."""
    catching = [h for h in statement.handlers if _catches_import_error(h.type)]
    return bool(catching) and not any(isinstance(s, ast.Raise) for h in catching for s in h.body)


def _catches_import_error(kind: ast.expr | None) -> bool:
    if kind is None:  # a bare ``except:``
        return True
    if isinstance(kind, ast.Tuple):
        return any(_catches_import_error(e) for e in kind.elts)
    name = kind.attr if isinstance(kind, ast.Attribute) else getattr(kind, "id", "")
    return name in _IMPORT_ERRORS
