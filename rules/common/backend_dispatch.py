"""A Keras 2 library's backend package importing one module per backend, chosen by
``K.backend()`` (keras-contrib's ``keras_contrib.backend``): the chain KM208 replaces with
its TensorFlow branch's imports, the only branch Keras 2 on TensorFlow ran. The
``K.backend()`` calls in its tests go with it (catalog_rule reports none of them)."""

from __future__ import annotations

import ast

from kmigrate.engine import ModuleInfo

# The backend Keras 2 code ran on: tf.keras, tf_keras and Keras 2.4+ are TensorFlow-only.
_KERAS2_BACKEND = "tensorflow"


def _backend_compared(module: ModuleInfo, test: ast.expr) -> str | None:
    """The name in ``K.backend() == "name"`` (either side), else None."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
    ):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    is_backend_call = (
        isinstance(left, ast.Call)
        and not left.args + left.keywords
        and module.resolve(left.func) == "K.backend"
    )
    if is_backend_call and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return right.value
    return None


def _branches(module: ModuleInfo, chain: ast.If) -> list[tuple[str | None, list[ast.stmt]]] | None:
    """The chain's branches as (backend name, body); None for a final ``else``. None when a
    test is something other than a ``K.backend()`` comparison."""
    branches: list[tuple[str | None, list[ast.stmt]]] = []
    node: ast.If = chain
    while True:
        name = _backend_compared(module, node.test)
        if name is None:
            return None
        branches.append((name, node.body))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if node.orelse:
            branches.append((None, node.orelse))
        return branches


def kept_imports(module: ModuleInfo, chain: ast.If) -> list[ast.stmt] | None:
    """The imports a module-level chain whose every test compares ``K.backend()`` with a
    string, and whose branches hold nothing but imports, becomes: its one 'tensorflow'
    branch. None for any other ``if``."""
    if module.parent_of(chain) is not module.tree:
        return None
    branches = _branches(module, chain)
    if branches is None:
        return None
    kept = [body for name, body in branches if name == _KERAS2_BACKEND]
    only_imports = all(
        isinstance(statement, (ast.Import, ast.ImportFrom))
        for _, body in branches
        for statement in body
    )
    return kept[0] if len(kept) == 1 and only_imports else None


def in_replaced_chain(module: ModuleInfo, call: ast.Call) -> bool:
    """Whether ``call`` (a ``K.backend()``) is compared in a test of such a chain."""
    compare = module.parent_of(call)
    node = module.parent_of(compare)
    if not (isinstance(node, ast.If) and node.test is compare):
        return False
    parent = module.parent_of(node)
    while isinstance(parent, ast.If) and parent.orelse == [node]:
        node, parent = parent, module.parent_of(parent)
    return kept_imports(module, node) is not None
