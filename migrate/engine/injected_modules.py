"""Keras's modules handed to a function as keyword arguments and unpacked by a helper.

keras_applications' builders take Keras's modules as arguments, so that one builder serves
standalone Keras and ``tf.keras`` (``inject_tfkeras_modules(EfficientNetB0)`` fills
``kwargs['backend'] = tfkeras.backend``...), and unpack them at the top of each function:
``backend, layers, models, keras_utils = get_submodules_from_kwargs(kwargs)``. Projects
built on that package (efficientnet, classification_models, segmentation_models) copy
the convention. The names so unpacked are Keras's modules whichever Keras was injected:
``backend.sigmoid(x)`` is ``K.sigmoid(x)``. Without this, such a name is a plain local
variable, its calls get no finding, and a call the injected ``tf.keras`` backend runs with
TensorFlow stays and fails on JAX and PyTorch.

The unpacking helpers and what they return are data (``ContextSpec.injected_modules``);
a helper is recognised by the last part of its name, since projects copy it into their
own ``__init__.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kmigrate.engine.tree_index import TreeIndex

# (helper function name, the qualified modules its result holds, in order)
Unpackers = tuple[tuple[str, tuple[str, ...]], ...]

_COMPOUND_BODIES = ("body", "orelse", "finalbody", "handlers")


def unpacked_module_bindings(index: TreeIndex, unpackers: Unpackers) -> dict[int, dict[str, str]]:
    """Local name -> qualified module, by scope (the ``id`` of the function or module whose
    body unpacks them), for every ``a, b, ... = helper(...)`` of a helper in ``unpackers``.
    A name past the end of the helper's result, or a target that is not a plain name, binds
    nothing."""
    table = dict(unpackers)
    if not table:
        return {}
    found: dict[int, dict[str, str]] = {}
    scopes: list[ast.AST] = [index.tree, *index.nodes(ast.FunctionDef, ast.AsyncFunctionDef)]
    for scope in scopes:
        for statement in _own_statements(scope.body):  # type: ignore[attr-defined]
            modules = _unpacked(statement, table)
            if modules:
                found.setdefault(id(scope), {}).update(modules)
    return found


def _unpacked(statement: ast.stmt, table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return {}
    target, value = statement.targets[0], statement.value
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(value, ast.Call):
        return {}
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    modules = table.get(name or "")
    if modules is None:
        return {}
    return {
        element.id: module
        for element, module in zip(target.elts, modules)
        if isinstance(element, ast.Name)
    }


def _own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a body and of its compound statements (``if``, ``try``,
    ``with``...), not those of nested functions and classes."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in _COMPOUND_BODIES:
            for inner in getattr(statement, field, ()):
                if isinstance(inner, ast.ExceptHandler):
                    yield from _own_statements(inner.body)
                elif isinstance(inner, ast.stmt):
                    yield from _own_statements([inner])
