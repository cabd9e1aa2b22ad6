"""Where ``keras.ops.shape(x)`` (a tuple) can stand in for ``tf.shape(x)`` (a tensor).

``tf.shape`` returns an int32 tensor; ``keras.ops.shape`` a tuple of ints (scalar int
tensors for unknown dimensions on TensorFlow). The two agree where the result is only
read as a shape: indexed with a constant (or a ``range`` loop variable), sliced and
then used as a shape again, unpacked, measured with ``len``, passed straight to an
argument that takes a shape, or cast to a tensor of a named dtype. Arithmetic does not
agree: ``shape * 2`` repeats a tuple and ``shape[1:] + other`` concatenates one, where
TensorFlow adds element-wise.

A shape assigned to a local name (``s = tf.shape(x)``) is followed to every read that
sees that assignment (local_names: the name may be rebound later, ``s = [... s[i] ...]``),
and a shape passed to a function of the module or a method of the class (``self.
_reshape(x, s)``) to every read of that parameter. An index is a constant, or a loop
variable from ``range(...)`` or the counter of ``enumerate(...)``. The product of a
shape's slice (``K.prod(s[1:3])``) is read as a shape too: it becomes the ``shape_prod``
helper (builders), a Python int where the dimensions are known.
"""

from __future__ import annotations

import ast

from kmigrate.engine import Node
from kmigrate.rules.common.local_names import bound_value, mutated, parameter_reads, reads_of

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

# Products of a whole shape or a slice of it (no axis): shape_prod keeps them exact.
PRODUCTS: dict[str, tuple[int, str]] = {
    "K.prod": (0, "x"),
    "tf.reduce_prod": (0, "input_tensor"),
    "tf.math.reduce_prod": (0, "input_tensor"),
}

# The dynamic shape functions: int32 entries in Keras 2; keras.ops.shape's entries are
# Python ints where the dimension is known (static under jit on JAX, and on PyTorch) and
# int32 scalar tensors where TensorFlow does not know it.
SHAPE_FUNCTIONS = frozenset({"tf.shape", "K.shape", "keras.ops.shape"})
# Static shapes: ints, and None for a dimension not known (K.int_shape(x), x.shape).
_STATIC_SHAPES = frozenset({"K.int_shape", "keras.backend.int_shape"})

# How far a shape is followed through slices, local names and calls.
_MAX_DEPTH = 5
# How deep a shape's dimensions are followed (names, lists, slices, entries).
_SEQUENCE_DEPTH = 12


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
            if not isinstance(target, ast.Name):
                return False
            reads = reads_of(module, target)
            return reads is not None and all(_use_ok(site, r, depth + 1) for r in reads)
        return False
    argument = argument_of(site, node)
    if argument is not None:
        call, where = argument
        callee = module.resolve(call.func) or ""
        if isinstance(call.func, ast.Name) and call.func.id == "len" and not callee:
            return where == 0 and len(call.args) == 1
        if callee in CASTS:
            return where in (0, "x")
        if callee in PRODUCTS:
            return where in PRODUCTS[callee] and len(call.args) + len(call.keywords) == 1
        wanted = SHAPE_ARGUMENTS.get(callee)
        if wanted is not None:
            return where in wanted
        return not callee and _parameter_ok(site, call, where, depth)
    return False


def _parameter_ok(site: Node, call: ast.Call, where: int | str, depth: int) -> bool:
    """The shape is argument ``where`` of a call to a function of this module or a
    method of the enclosing class (``self._group(x, shape)``), defined once in the
    module (so no other definition, an override, can be the one called), and that
    parameter reads it only as a shape."""
    module = site.module
    func = call.func
    if isinstance(func, ast.Name):
        name, skip = func.id, 0
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.value.id != "self":
            return False
        name, skip = func.attr, 1
    else:
        return False
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return False
    definitions = [
        d
        for d in module.nodes_in(module.tree, ast.FunctionDef, ast.AsyncFunctionDef)
        if d.name == name  # type: ignore[attr-defined]
    ]
    if len(definitions) != 1:
        return False
    function = definitions[0]
    holder = module.parent_of(function)
    if skip and not isinstance(holder, ast.ClassDef):
        return False
    if not skip and not isinstance(holder, ast.Module):
        return False
    params = function.args  # type: ignore[attr-defined]
    if params.posonlyargs or params.vararg or params.kwarg:
        return False
    names = [a.arg for a in params.args]
    if isinstance(where, int):
        index = where + skip
        if index >= len(names):
            return False
        parameter = names[index]
    elif where in names[skip:] or where in [a.arg for a in params.kwonlyargs]:
        parameter = where
    else:
        return False
    reads = parameter_reads(module, function, parameter)
    return reads is not None and all(_use_ok(site, r, depth + 1) for r in reads)


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
            if _enumerate_counter(loop, index.id):
                return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
    return False


def _enumerate_counter(loop: ast.For | ast.comprehension, name: str) -> bool:
    """``for name, item in enumerate(...)``: ``name`` counts from an int."""
    target, iterator = loop.target, loop.iter
    return (
        isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and isinstance(target.elts[0], ast.Name)
        and target.elts[0].id == name
        and isinstance(iterator, ast.Call)
        and isinstance(iterator.func, ast.Name)
        and iterator.func.id == "enumerate"
        and len(iterator.args) == 1
        and not iterator.keywords
    )


def _is_range(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and not node.keywords
    )


def returned_value(site: Node) -> bool:
    """Whether ``site.node`` is what a ``Lambda`` layer's function returns."""
    return _returned(site, site.node)


def shape_sequence(site: Node, node: ast.AST, depth: int = 0) -> bool:
    """Whether ``node`` holds dimensions of a shape, one int (or scalar int tensor) each,
    the same in Keras 2 and after the rewrite: a shape (``K.shape(x)``), a slice of it
    with constant bounds, a list of dimensions (a literal, a comprehension, a slice or a
    concatenation of such lists: Python lists in both), or a local name bound to one."""
    if depth > _SEQUENCE_DEPTH:
        return False
    module = site.module
    if isinstance(node, ast.Name):
        value = bound_value(module, node)
        if value is None or (_python_list(site, value, depth) and mutated(module, node)):
            return False  # (a list changed in place may hold anything)
        return shape_sequence(site, value, depth + 1)
    if isinstance(node, ast.Call):
        return _shape_call(site, node)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        if node.slice.step is not None or not shape_sequence(site, node.value, depth + 1):
            return False
        return _python_list(site, node.value, depth) or _constant_bounds(node.slice)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_dimension(site, e, depth + 1) for e in node.elts)
    if isinstance(node, ast.ListComp):
        return _dimension(site, node.elt, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return all(
            _python_list(site, side, depth) and shape_sequence(site, side, depth + 1)
            for side in (node.left, node.right)
        )
    return False


def _shape_call(site: Node, node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and site.module.resolve(node.func) in SHAPE_FUNCTIONS
        and len(node.args) == 1
        and not node.keywords
    )


def _python_list(site: Node, node: ast.AST, depth: int) -> bool:
    """A list in Keras 2 as well (slicing and ``+`` mean the same there)."""
    if depth > _SEQUENCE_DEPTH:
        return False
    if isinstance(node, ast.Name):
        value = bound_value(site.module, node)
        return value is not None and _python_list(site, value, depth + 1)
    if isinstance(node, (ast.List, ast.ListComp)):
        return True
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _python_list(site, node.value, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _python_list(site, node.left, depth + 1) and _python_list(
            site, node.right, depth + 1
        )
    return False


def _dimension(site: Node, node: ast.AST, depth: int) -> bool:
    """One dimension: an int, an entry of a shape, the product of a shape's dimensions,
    or ``d or shape[i]`` with ``d`` from a static shape (an int or None)."""
    if depth > _SEQUENCE_DEPTH:
        return False
    if _int_constant(node):  # type: ignore[arg-type]
        return True
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
        return shape_sequence(site, node.value, depth + 1)
    if isinstance(node, ast.Call):
        where = PRODUCTS.get(site.module.resolve(node.func) or "")
        return (
            where is not None
            and len(node.args) == 1
            and not node.keywords
            and shape_sequence(site, node.args[0], depth + 1)
        )
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        *first, last = node.values
        return _dimension(site, last, depth + 1) and all(_static_dimension(site, v) for v in first)
    return False


def _static_dimension(site: Node, node: ast.AST) -> bool:
    """A comprehension variable over a static shape's dimensions (ints, or None):
    ``d`` in ``for d in K.int_shape(x)`` or ``for i, d in enumerate(x.shape)``."""
    if not isinstance(node, ast.Name):
        return False
    parent = site.module.parent_of(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            for loop in parent.generators:
                target, iterator = loop.target, loop.iter
                if isinstance(target, ast.Tuple) and _enumerate_counter(loop, _first(target)):
                    target = target.elts[1]
                    iterator = iterator.args[0]  # type: ignore[attr-defined]
                if isinstance(target, ast.Name) and target.id == node.id:
                    return _static_shape(site, iterator)
        parent = site.module.parent_of(parent)
    return False


def _first(target: ast.Tuple) -> str:
    first = target.elts[0] if target.elts else None
    return first.id if isinstance(first, ast.Name) else ""


def _static_shape(site: Node, node: ast.AST) -> bool:
    """``K.int_shape(x)``, ``x.shape``, ``tuple(x.shape)`` / ``list(x.shape)``, or
    ``x.shape.as_list()``: ints, and None where a dimension is not known."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return True
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if site.module.resolve(func) in _STATIC_SHAPES:
        return len(node.args) == 1
    if isinstance(func, ast.Name) and func.id in ("tuple", "list") and len(node.args) == 1:
        return _static_shape(site, node.args[0])
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "as_list"
        and not node.args
        and _static_shape(site, func.value)
    )
