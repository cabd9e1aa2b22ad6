"""``tf.TensorArray`` accumulation in a Python loop of static length -> a Python list and
``keras.ops.stack``; every other use refused with what to write instead.

The one form rewritten, all in one function::

    ta = tf.TensorArray(tf.float32, size=n)
    for i in range(n):
        ...
        ta = ta.write(i, value)      # once, directly in the loop body
    out = ta.stack()                  # after the loop, any number of times

becomes ``ta = []``, ``ta.append(keras.ops.convert_to_tensor(value, dtype="float32"))``
and ``keras.ops.stack(ta)``. A Python ``for ... in range(n)`` runs its body n times in
order on every backend (TensorFlow unrolls it in a graph too), writing indices 0..n-1,
which is what the list holds; ``write`` converts a Python number to the array's dtype,
and so does ``convert_to_tensor`` (a tensor of that dtype is kept as it is). Anything
else (a symbolic length: ``size=tf.shape(x)[1]`` or a name bound to it, which a Python
loop cannot range over in a TensorFlow functional model with that dimension unknown;
``dynamic_size=True``, ``read``/``unstack``/``gather``, the array
passed to ``tf.while_loop`` or another function, a conditional write) keeps
TensorFlow's loop state and is reported at each use.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kmigrate.engine import MISSING, CallSite, EditPlan, ReplaceNode
from kmigrate.rules.common.batch_dot import single_binding
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError
from kmigrate.rules.common.catalog.plan import Rewrite
from kmigrate.rules.common.catalog.tensor_array_scan import build_scan, graph_range
from kmigrate.rules.common.dtypes import dtype_name
from kmigrate.rules.ops_catalog import py_literal

# Constructor arguments that change what the array holds or how it is made.
_REFUSED_ARGUMENTS = ("tensor_array_name", "handle", "flow")
SYMBOLIC_LOOP = (
    "keras.ops.fori_loop(0, n, body, init) carrying a preallocated tensor updated with "
    "ops.slice_update, or keras.ops.scan(f, init, xs) returning the stacked outputs"
)
# A length read from a tensor's shape at run time: a Python loop over it fails in a
# TensorFlow functional model with that dimension unknown (Keras 2 ran it as a graph loop).
SYMBOLIC_LENGTH = (
    "move the loop body into `def step(carry, i): ...; return carry, value` (carry: what "
    "the body updates from step to step, such as a recurrent state, else None) and write "
    "`carry, stacked = keras.ops.scan(step, carry, keras.ops.arange(n))` in place of the "
    "loop and `.stack()`: it runs with an unknown length on TensorFlow, under jit on JAX "
    "and on PyTorch"
)
# Calls that give a Python value even where their argument is a tensor.
_STATIC_CALLS = frozenset({"K.int_shape", "K.ndim"})
_RANGE_TENSORS = frozenset({"tf.range", "K.arange", "keras.ops.arange"})
_DEPTH = 3


@dataclass
class ArrayUse:
    """One use of the array's name: the node (a call or the name) and what it does."""

    node: ast.AST
    kind: str  # "write", "stack", or what else it is ("read", "passed to a call"...)
    method: str = ""  # the TensorArray method it calls or reads, if any

    @property
    def binds(self) -> bool:
        """Whether the use is an assignment to the name (not a use of the array)."""
        return self.kind in ("write-target", "assigned again")


def build_tensor_array(binding: Binding) -> Rewrite:
    site = binding.site
    name, uses = array_uses(site)
    _check_arguments(binding)
    symbolic_size = _symbolic_size(binding)
    dtype = dtype_name(site, binding.node("dtype")) if binding.given("dtype") else None
    if dtype is None:
        raise ManualPortError("its dtype is not a literal dtype", SYMBOLIC_LOOP)
    other = next((u for u in uses if u.kind not in ("write", "write-target", "stack")), None)
    if other is not None:
        raise ManualPortError(
            f"`{name}` is {other.kind} at line {other.node.lineno}: only writes in a "  # type: ignore[attr-defined]
            "Python `for i in range(n)` loop and a final .stack() become a list",
            SYMBOLIC_LOOP,
        )
    writes = [u.node for u in uses if u.kind == "write"]
    stacks = [u.node for u in uses if u.kind == "stack"]
    if len(writes) != 1 or not stacks:
        raise ManualPortError(
            f"`{name}` is written {len(writes)} times and stacked {len(stacks)} times "
            "(one write in the loop and a stack after it become a list)",
            SYMBOLIC_LOOP,
        )
    statement = site.module.parent_of(writes[0])
    around = site.module.parent_of(statement)
    if symbolic_size or (isinstance(around, ast.For) and graph_range(site, around)):
        return _scan_rewrite(binding, name, writes[0], stacks, dtype, symbolic_size)
    loop = _static_loop(binding, statement, writes[0])  # type: ignore[arg-type]
    if any(stack.lineno <= loop.end_lineno for stack in stacks):  # type: ignore[attr-defined, operator]
        raise ManualPortError(f"`{name}.stack()` is read inside the loop", SYMBOLIC_LOOP)
    value = _written_value(site, writes[0])  # type: ignore[arg-type]
    converted = (
        "{name:keras.ops.convert_to_tensor}(" + site.text(value) + f", dtype={py_literal(dtype)})"
    )
    edits = [
        ReplaceNode(site.span, "[]"),
        ReplaceNode(site.module.span_of(statement), f"{name}.append({converted})", "stmt"),  # type: ignore[arg-type]
    ]
    edits += [
        ReplaceNode(site.module.span_of(s), "{name:keras.ops.stack}(" + name + ")") for s in stacks
    ]
    return Rewrite(EditPlan(tuple(edits)), "keras.ops.stack")


def array_uses(site: CallSite) -> tuple[str, list[ArrayUse]]:
    """The name ``site``'s array is assigned to and every later use of it in the
    function; refused when it is not ``name = tf.TensorArray(...)`` in a function."""
    statement = site.module.parent_of(site.node)
    function = site.scope.function_node
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and function is not None
    ):
        raise ManualPortError(
            "it is not assigned to one local name in a function, so its uses cannot be followed",
            SYMBOLIC_LOOP,
        )
    name = statement.targets[0].id
    uses = []
    for node in site.module.nodes_in(function, ast.Name):
        if node.id != name or node is statement.targets[0]:  # type: ignore[attr-defined]
            continue
        kind = _use_kind(site, node, name)
        parent = site.module.parent_of(node)
        method = parent.attr if isinstance(parent, ast.Attribute) else ""
        if kind in ("write", "stack"):  # the call `ta.write(...)` / `ta.stack()`
            node = site.module.parent_of(parent)  # type: ignore[assignment]
        uses.append(ArrayUse(node, kind, method))
    return name, uses


def _use_kind(site: CallSite, node: ast.Name, name: str) -> str:
    module = site.module
    parent = module.parent_of(node)
    if _inside_nested_function(site, node):
        return "used in a nested function (a tf.while_loop body?)"
    if isinstance(node.ctx, ast.Store):
        assign = parent
        value = assign.value if isinstance(assign, ast.Assign) else None
        if isinstance(value, ast.Call) and _method_of(value, name) == "write":
            return "write-target"
        return "assigned again"
    if isinstance(parent, ast.Attribute) and parent.value is node:
        call = module.parent_of(parent)
        if isinstance(call, ast.Call) and call.func is parent:
            if parent.attr == "write":
                target = module.parent_of(call)
                if (
                    isinstance(target, ast.Assign)
                    and len(target.targets) == 1
                    and isinstance(target.targets[0], ast.Name)
                    and target.targets[0].id == name
                ):
                    return "write"
                return "written without `ta = ta.write(...)`"
            if parent.attr == "stack" and not call.args and not call.keywords:
                return "stack"
            return f"read with .{parent.attr}()"
        return f"read as .{parent.attr}"
    return "passed on (to tf.while_loop or another function)"


def _method_of(call: ast.Call, name: str) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr if func.value.id == name else None
    return None


def _inside_nested_function(site: CallSite, node: ast.AST) -> bool:
    parent = site.module.parent_of(node)
    while parent is not None and parent is not site.scope.function_node:
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return True
        parent = site.module.parent_of(parent)
    return False


def _check_arguments(binding: Binding) -> None:
    for name in _REFUSED_ARGUMENTS:
        if binding.given(name):
            raise ManualPortError(f"`{name}=` wraps existing TensorFlow state", SYMBOLIC_LOOP)
    if binding.literal("dynamic_size") not in (MISSING, None, False):
        raise ManualPortError("`dynamic_size` is not False: its length is symbolic", SYMBOLIC_LOOP)
    if binding.literal("infer_shape") not in (MISSING, True):
        raise ManualPortError("`infer_shape` is not True", SYMBOLIC_LOOP)
    if not binding.given("size"):
        raise ManualPortError("`size` is not given", SYMBOLIC_LOOP)


def _symbolic_size(binding: Binding) -> str:
    """Why the size is read from a tensor's shape (``tf.shape(x)[1]``, directly or through
    a name; "" when it is not): known only at run time, it is no Python int for a loop to
    range over, so only the scan form can take it."""
    size = binding.node("size")
    why = symbolic_value(binding.site, size, 0) if size is not None else ""
    if not why:
        return ""
    return (
        f"its size `{binding.text('size')}` is a tensor ({why}): a Python loop over "
        "it runs where the shape is static (jit on JAX, PyTorch) but fails in a "
        "TensorFlow functional model with that dimension unknown, where Keras 2 ran "
        "it as a graph loop"
    )


def _scan_rewrite(
    binding: Binding,
    name: str,
    write: ast.Call,
    stacks: list[ast.AST],
    dtype: str,
    symbolic_size: str,
) -> Rewrite:
    """A loop of run-time length becomes ``keras.ops.scan`` (``tensor_array_scan``) where
    that is exact; else refused with the reason the length is a tensor and the reason
    the scan form does not fit."""
    site = binding.site
    loop = site.module.parent_of(site.module.parent_of(write))
    why = symbolic_size
    if not why and isinstance(loop, ast.For):
        why = f"the loop runs over `{site.text(loop.iter)}`, a tensor (a graph loop in Keras 2)"
    try:
        if (
            not isinstance(loop, ast.For)
            or loop.orelse
            or not _runs_over_size(binding, loop, write)
        ):
            raise ManualPortError(
                "the write is not directly in a `for i in tf.range(size)` (or "
                "`range(size)`) loop with no else, at index i",
                SYMBOLIC_LENGTH,
            )
        _written_value(site, write)
        return build_scan(binding, name, loop, write, stacks, dtype, SYMBOLIC_LENGTH)
    except ManualPortError as error:
        raise ManualPortError(
            f"{why}; it does not become keras.ops.scan because {error.reason}", SYMBOLIC_LENGTH
        ) from None


def _runs_over_size(binding: Binding, loop: ast.For, write: ast.Call) -> bool:
    """``for i in tf.range(size)`` / ``range(0, size)``..., the write at index ``i``."""
    site = binding.site
    iterator = loop.iter
    if not (isinstance(loop.target, ast.Name) and isinstance(iterator, ast.Call)):
        return False
    index = write.args[0] if len(write.args) == 2 and not write.keywords else None
    if not (isinstance(index, ast.Name) and index.id == loop.target.id):
        return False
    is_range = isinstance(iterator.func, ast.Name) and iterator.func.id == "range"
    if not (graph_range(site, loop) or (is_range and site.module.resolve(iterator.func) is None)):
        return False
    bounds = iterator.args
    if len(bounds) == 2 and site.module.literal(bounds[0]) == 0:
        bounds = bounds[1:]
    size = binding.node("size")
    return (
        not iterator.keywords
        and len(bounds) == 1
        and size is not None
        and site.text(bounds[0]) == site.text(size)
    )


def symbolic_value(site: CallSite, node: ast.expr, depth: int = 0) -> str:
    """Why ``node`` is a tensor computed at run time ("" when nothing says so): it calls
    a TensorFlow/Keras function (``tf.shape``, ``K.shape``, ``tf.size``...), directly or
    through names bound once in the function."""
    if depth > _DEPTH:
        return ""
    for call in site.module.nodes_in(node, ast.Call):
        symbol = site.module.resolve(call.func)  # type: ignore[attr-defined]
        if symbol is not None and symbol not in _STATIC_CALLS:
            return f"`{site.text(call)}` is computed when the model runs"  # type: ignore[arg-type]
    for name in site.module.nodes_in(node, ast.Name):
        value = single_binding(site, name.id)  # type: ignore[attr-defined]
        why = symbolic_value(site, value, depth + 1) if value is not None else ""
        if why:
            return f"`{name.id}` = {why}"  # type: ignore[attr-defined]
    return ""


def _static_loop(binding: Binding, statement: ast.AST, write: ast.Call) -> ast.For:
    """The ``for i in range(size)`` loop whose body holds the write at index ``i``."""
    site = binding.site
    loop = site.module.parent_of(statement)
    refusal = ManualPortError(
        "the write is not a statement directly in the body of a Python "
        "`for i in range(size)` loop (after the array, in the same block), at index i, "
        "with no break, continue or else",
        SYMBOLIC_LOOP,
    )
    if not (isinstance(loop, ast.For) and statement in loop.body and not loop.orelse):
        raise refusal
    if not (isinstance(loop.target, ast.Name) and write.args and not write.keywords):
        raise refusal
    index = write.args[0]
    if not (isinstance(index, ast.Name) and index.id == loop.target.id and len(write.args) == 2):
        raise refusal
    iterator = loop.iter
    if isinstance(iterator, ast.Call) and site.module.resolve(iterator.func) in _RANGE_TENSORS:
        raise ManualPortError(
            f"the loop runs over `{site.text(iterator)}`, a tensor: only a `for i in "
            "tf.range(size)` loop becomes keras.ops.scan (a Python loop over a tensor fails "
            "in a TensorFlow functional model)",
            SYMBOLIC_LENGTH,
        )
    if not (
        isinstance(iterator, ast.Call)
        and isinstance(iterator.func, ast.Name)
        and iterator.func.id == "range"
        and site.module.resolve(iterator.func) is None
        and not iterator.keywords
    ):
        raise refusal
    bounds = iterator.args
    if len(bounds) == 2 and site.module.literal(bounds[0]) == 0:
        bounds = bounds[1:]
    size = binding.node("size")
    if len(bounds) != 1 or size is None or site.text(bounds[0]) != site.text(size):
        raise ManualPortError(
            "the loop does not run `range(size)` with the array's size as written",
            SYMBOLIC_LOOP,
        )
    if any(
        isinstance(n, ast.Break | ast.Continue)
        for n in site.module.nodes_in(loop, ast.Break, ast.Continue)
    ):
        raise refusal
    owner = site.module.parent_of(site.module.parent_of(site.node))
    body = getattr(owner, "body", None)
    constructor = site.module.parent_of(site.node)
    if not (isinstance(body, list) and constructor in body and loop in body):
        raise refusal
    if body.index(loop) < body.index(constructor):
        raise refusal
    return loop


def _written_value(site: CallSite, write: ast.Call) -> ast.expr:
    """The value written, refused when it holds a call another rule may rewrite (the
    statement is replaced whole)."""
    value = write.args[1]
    for call in site.module.nodes_in(value, ast.Call):
        if site.module.resolve(call.func) is not None:  # type: ignore[attr-defined]
            raise ManualPortError(
                "the written value calls a TensorFlow/Keras function: compute it in its "
                "own statement first (`value = ...`, then `ta = ta.write(i, value)`)",
                SYMBOLIC_LOOP,
            )
    return value
