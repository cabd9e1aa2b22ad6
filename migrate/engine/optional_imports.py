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
from collections.abc import Iterator

from kmigrate.engine.names import Canonical, import_bindings

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
    guarded: dict[str, int] = {}
    required: set[str] = set()
    for statement, is_guarded in _module_imports(tree.body, False):
        for _, qualified in import_bindings(statement, package):  # type: ignore[arg-type]
            symbol = canonical(qualified)
            if symbol not in symbols:
                continue
            if is_guarded:
                guarded.setdefault(symbol, statement.lineno)
            else:
                required.add(symbol)
    return {symbol: line for symbol, line in guarded.items() if symbol not in required}


def _module_imports(body: list[ast.stmt], guarded: bool) -> Iterator[tuple[ast.stmt, bool]]:
    """Module-level import statements (also in ``if``/``try``/``with`` blocks), each with
    whether an optional-import ``try`` guards it."""
    for statement in body:
        kind = statement.__class__
        if kind is ast.Import or kind is ast.ImportFrom:
            yield statement, guarded
        elif kind is ast.If:
            yield from _module_imports(statement.body, guarded)  # type: ignore[attr-defined]
            yield from _module_imports(statement.orelse, guarded)  # type: ignore[attr-defined]
        elif kind is ast.Try or kind.__name__ == "TryStar":
            optional = _makes_optional(statement)  # type: ignore[arg-type]
            yield from _module_imports(statement.body, guarded or optional)  # type: ignore[attr-defined]
            for handler in statement.handlers:  # type: ignore[attr-defined]
                yield from _module_imports(handler.body, guarded)
            yield from _module_imports(statement.orelse, guarded)  # type: ignore[attr-defined]
            yield from _module_imports(statement.finalbody, guarded)  # type: ignore[attr-defined]
        elif kind is ast.With or kind is ast.AsyncWith:
            yield from _module_imports(statement.body, guarded)  # type: ignore[attr-defined]


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
