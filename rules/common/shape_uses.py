"""Where ``keras.ops.shape(x)`` (a tuple) can stand in for ``tf.shape(x)`` (a tensor).

``tf.shape`` returns an int32 tensor; ``keras.ops.shape`` a tuple of ints (scalar int
tensors for unknown dimensions on TensorFlow). The two agree where the result is only
read as a shape: indexed with a constant (or a ``range`` loop variable), sliced and
then used as a shape again, unpacked, measured with ``len``, passed straight to an
argument that takes a shape, or cast to a tensor of a named dtype. Arithmetic does not
agree: ``shape * 2`` repeats a tuple and ``shape[1:] + other`` concatenates one, where
TensorFlow adds element-wise.

A shape assigned to a local name (``s = tf.shape(x)``) is followed to every read of
that name in the function, if the name is bound exactly once there.
"""

from __future__ import annotations

import ast

from kmigrate.engine import Node

# Calls whose argument is a shape: tf.shape(x) there may become a tuple.
SHAPE_ARGUMENTS: dict[str, tuple[int | str, ...]] = {
    "tf.reshape": (1, "shape"),
    "K.reshape": (1, "shape"),
    "tf.zeros": (0, "shape"),
    "tf.ones": (0, "shape"),
    "tf.fill": (0, "dims"),
    "tf.broadcast_to": (1, "shape"),
    # both shapes: the project helper takes tuples, and so does TensorFlow's function
    "tf.broadcast_dynamic_shape": (0, "shape_x", 1, "shape_y"),
    "tf.scatter_nd": (2, "shape"),
    "tf.random.normal": (0, "shape"),
    "tf.random.uniform": (0, "shape"),
    "tf.random.truncated_normal": (0, "shape"),
    "K.random_normal": (0, "shape"),
    "K.random_uniform": (0, "shape"),
    "K.random_bernoulli": (0, "shape"),
    "K.random_binomial": (0, "shape"),
    "keras.ops.reshape": (1, "newshape"),
    "keras.ops.zeros": (0, "shape"),
    "keras.ops.ones": (0, "shape"),
    "keras.ops.full": (0, "shape"),
    "keras.ops.broadcast_to": (1, "shape"),
    "keras.random.normal": (0, "shape"),
    "keras.random.uniform": (0, "shape"),
    "keras.random.truncated_normal": (0, "shape"),
}

# Casts turn a shape back into a tensor of the dtype they name: tf.cast(tf.shape(x)[1:3],
# "float32") and keras.ops.cast(keras.ops.shape(x)[1:3], "float32") hold the same numbers.
CASTS = frozenset({"tf.cast", "tf.dtypes.cast", "K.cast", "keras.ops.cast"})

# How far a shape is followed through slices and local names.
_MAX_DEPTH = 4


def as_list_call(site: Node) -> ast.Call | None:
    """The ``.as_list()`` call made directly on the site's node (``x.get_shape().as_list()``,
    ``tf.TensorShape(s).as_list()``), if that is what happens to it."""
    attribute = site.module.parent_of(site.node)
    if not isinstance(attribute, ast.Attribute) or attribute.attr != "as_list":
        return None
    call = site.module.parent_of(attribute)
    if isinstance(call, ast.Call) and call.func is attribute and not call.args + call.keywords:
        return call
    return None


def argument_of(site: Node, node: ast.AST) -> tuple[ast.Call, int | str] | None:
    """The call ``node`` is an argument of, with its position or keyword."""
    parent = site.module.parent_of(node)
    if isinstance(parent, ast.keyword) and parent.arg is not None:
        call = site.module.parent_of(parent)
        if isinstance(call, ast.Call):
            return call, parent.arg
    if isinstance(parent, ast.Call) and node is not parent.func:
        for index, arg in enumerate(parent.args):
            if arg is node:
                return parent, index
    return None


def returned_entry(site: Node) -> bool:
    """Whether the shape ``site.node`` is indexed and that entry is a ``Lambda`` layer's
    output (see :func:`_returned`)."""
    parent = site.module.parent_of(site.node)
    return (
        isinstance(parent, ast.Subscript) and parent.value is site.node and _returned(site, parent)
    )


def shape_use_ok(site: Node) -> bool:
    """Whether every use of the shape ``site.node`` reads it only as a shape."""
    return _use_ok(site, site.node, 0)


def _use_ok(site: Node, node: ast.AST, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    module = site.module
    parent = module.parent_of(node)
    if isinstance(parent, ast.Subscript) and parent.value is node:
        index = parent.slice
        if isinstance(index, ast.Slice):
            return _constant_bounds(index) and _use_ok(site, parent, depth + 1)
        return _int_index(site, index) and not _returned(site, parent)
    if isinstance(parent, (ast.Assign, ast.For)):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        value = parent.value if isinstance(parent, ast.Assign) else parent.iter
        if value is not node:
            return False
        if all(isinstance(t, (ast.Tuple, ast.List)) for t in targets):
            return True
        if isinstance(parent, ast.Assign) and len(targets) == 1:
            target = targets[0]
            return isinstance(target, ast.Name) and _local_reads_ok(site, target.id, depth)
        return False
    argument = argument_of(site, node)
    if argument is not None:
        call, where = argument
        callee = module.resolve(call.func) or ""
        if isinstance(call.func, ast.Name) and call.func.id == "len" and not callee:
            return where == 0 and len(call.args) == 1
        if callee in CASTS:
            return where in (0, "x")
        wanted = SHAPE_ARGUMENTS.get(callee)
        return wanted is not None and where in wanted
    return False


def _returned(site: Node, entry: ast.AST) -> bool:
    """Whether a shape entry is what a ``Lambda`` layer's function returns
    (``Lambda(lambda x: tf.shape(x)[1])``): ``tf.shape`` gives a tensor there,
    ``keras.ops.shape`` a Python int, which Keras 3 does not take as a layer's output. A
    helper that returns an entry to code reading it as a number is left alone."""
    function = site.module.parent_of(entry)
    if not (isinstance(function, ast.Lambda) and function.body is entry):
        return False
    call = site.module.parent_of(function)
    if not (isinstance(call, ast.Call) and function in call.args[:1]):
        return False
    callee = call.func
    name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
    return name == "Lambda"


def _constant_bounds(index: ast.Slice) -> bool:
    return all(part is None or _int_constant(part) for part in (index.lower, index.upper))


def _int_constant(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    )


def _int_index(site: Node, index: ast.expr) -> bool:
    """A constant int, or a name that a ``for``/comprehension binds from ``range(...)``."""
    if _int_constant(index):
        return True
    if not isinstance(index, ast.Name):
        return False
    node: ast.AST | None = index
    while node is not None:
        node = site.module.parent_of(node)
        loops: list[ast.For | ast.comprehension] = []
        if isinstance(node, ast.For):
            loops = [node]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            loops = list(node.generators)
        for loop in loops:
            if isinstance(loop.target, ast.Name) and loop.target.id == index.id:
                return _is_range(loop.iter)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
    return False


def _is_range(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and not node.keywords
    )


# What can bind or read a name in a function (the rest of its nodes cannot).
_BINDING_KINDS = (
    ast.Global,
    ast.Nonlocal,
    ast.arg,
    ast.Name,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Import,
    ast.ImportFrom,
)


def _local_reads_ok(site: Node, name: str, depth: int) -> bool:
    """``name`` is bound once in the enclosing function and every read is a shape use."""
    function = site.scope.function_node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    reads: list[ast.Name] = []
    bindings = 0
    for node in site.module.nodes_in(function, *_BINDING_KINDS):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, ast.arg) and node.arg == name:
            return False
        if isinstance(node, ast.Name) and node.id == name:
            if isinstance(node.ctx, ast.Load):
                reads.append(node)
            else:
                bindings += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node is not function and node.name == name:
                return False
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name).split(".")[0] == name for a in node.names):
                return False
    if bindings != 1:
        return False
    return all(_use_ok(site, read, depth + 1) for read in reads)
