"""``tf.broadcast_dynamic_shape(shape_x, shape_y)`` -> the project helper
``broadcast_dynamic_shape`` (rules/data/keras2_compat.py), which broadcasts two shapes as
TensorFlow does and returns a tuple, as ``keras.ops.shape`` does.

TensorFlow's result is an int32 tensor, the helper's a tuple of the same numbers (ints,
and scalar tensors for dimensions known only when the model runs on TensorFlow): the two
agree where the result is only read as a shape (``shape_uses``), as bert4keras' ``where``
reads it (``tf.broadcast_to(x, shape)``, and a second broadcast of it). A result bound to
a name is followed to every read in the function when every binding of that name is such
a broadcast (``shape = broadcast(a, b)``, then ``shape = broadcast(c, shape)``). Proven
against tf_keras in tests/rules/test_broadcast_dynamic_shape_backends.py.
"""

from __future__ import annotations

import ast

from kmigrate.engine import EditPlan, Node, ReplaceNode
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError
from kmigrate.rules.common.catalog.plan import Rewrite, check_conditions
from kmigrate.rules.common.compat_helpers import (
    HELPER_FILE,
    HELPER_MODULE,
    helper_edit,
    helper_name_taken,
)
from kmigrate.rules.common.shape_uses import shape_use_ok

HELPER = "broadcast_dynamic_shape"


def build_broadcast_shape(binding: Binding) -> Rewrite:
    check_conditions(binding)
    site = binding.site
    if not (shape_use_ok(site) or _bound_and_read_as_shape(binding)):
        raise ManualPortError(
            f"{binding.entry.symbol} returns an int32 tensor, the Keras 3 form a tuple "
            "(ints, and scalar tensors for dimensions known only when the model runs); "
            "this use of the whole shape (arithmetic, tf-only methods, or passing it to a "
            "function that may need a tensor) may not work with a tuple",
            f"`{HELPER}(shape_x, shape_y)` from kmigrate's {HELPER_FILE.name} where the "
            "result is only read as a shape (indexed, unpacked, passed to "
            "ops.broadcast_to / ops.reshape); "
            'ops.convert_to_tensor(..., dtype="int32") of it where a tensor is needed',
        )
    if helper_name_taken(site, HELPER):
        raise ManualPortError(
            f"the module uses the name `{HELPER}` itself, so the helper with TensorFlow's "
            "broadcast of two shapes cannot be imported under it",
            f"copy `{HELPER}` from {HELPER_FILE.name} in kmigrate's rules/data under another name",
        )
    # the callee only: the shapes' own rewrites (K.shape -> ops.shape) stay apart
    edit = ReplaceNode(site.module.span_of(site.node.func), HELPER)  # type: ignore[attr-defined]
    plan = EditPlan((edit, helper_edit(site, HELPER)))
    return Rewrite(plan, f"{HELPER_MODULE}.{HELPER}")


def _bound_and_read_as_shape(binding: Binding) -> bool:
    """``name = <this call>`` in a function where every binding of ``name`` is such a
    broadcast and every read of it is a shape use."""
    site = binding.site
    module = site.module
    statement = module.parent_of(site.node)
    function = site.scope.function_node
    if not (
        isinstance(statement, ast.Assign)
        and statement.value is site.node
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    ):
        return False
    name = statement.targets[0].id
    symbols = set(binding.entry.symbols)
    reads = []
    for node in module.nodes_in(function, ast.Name, ast.arg, ast.Global, ast.Nonlocal):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, ast.arg) and node.arg == name:
            return False
        if not isinstance(node, ast.Name) or node.id != name:
            continue
        if isinstance(node.ctx, ast.Load):
            reads.append(node)
            continue
        bound = module.parent_of(node)
        if not (
            isinstance(bound, ast.Assign)
            and bound.targets == [node]
            and isinstance(bound.value, ast.Call)
            and (module.resolve(bound.value.func) or "") in symbols
        ):
            return False
    return bool(reads) and all(
        shape_use_ok(Node(read, module.span_of(read), site.context, site.scope, module))
        for read in reads
    )
