"""Shape and count arguments that ``keras.ops`` needs as Python values.

``tf.tile(x, multiples)``, ``tf.reshape(x, shape)``, ``tf.ones(shape)`` ... take a
tensor as well as a list; their ``keras.ops`` forms do not on every backend: inside a
functional model (built symbolically) and under ``jit`` on JAX, ``ops.tile(x,
ops.stack([1, n, 1]))`` or ``ops.ones((ops.cast(n, "int32"), 3))`` cannot be shaped
(tests/rules/test_static_shapes_backends.py). What works everywhere is a tuple of Python ints
and ``ops.shape(x)[i]`` entries (a scalar tensor only for a dimension TensorFlow does not
know yet, which TensorFlow accepts in a tuple).

So: a ``K.stack`` / ``tf.stack`` of a literal list that is such an argument becomes that
tuple (the same values, the same shape); an argument that is a tensor otherwise (a
cast, a concatenation, a constant, a name bound to one, a cast among a list's entries)
keeps the call manual, with the reason.
"""

from __future__ import annotations

import ast

from kmigrate.engine import CallSite, ModuleInfo
from kmigrate.rules.common.dtypes import dtype_name
from kmigrate.rules.common.local_names import bound_value, possible_values, reads_of
from kmigrate.rules.common.shape_uses import SHAPE_ARGUMENTS, SHAPE_FUNCTIONS

# Catalog symbol -> (position, keyword) of the argument that is a shape or counts: the
# shape arguments of the catalog's ops (shape_uses) and tile's repetitions.
STATIC_SHAPE_ARGUMENTS: dict[str, tuple[int, str]] = {
    "tf.tile": (1, "multiples"),
    "K.tile": (1, "n"),
    # TensorFlow 1's resizes: the helper ranges over the size (tf1_resize)
    **{
        f"tf.compat.v1.image.{name}": (1, "size")
        for name in ("resize_images", "resize", "resize_bilinear", "resize_nearest_neighbor")
    },
    **{
        symbol: SHAPE_ARGUMENTS[symbol]
        for symbol in ("tf.reshape", "K.reshape", "tf.zeros", "tf.ones", "tf.fill")
        + ("tf.broadcast_to",)
    },
}
STACKS = frozenset({"tf.stack", "K.stack"})
# Calls whose result is a tensor whatever their arguments (a stack only where it is not
# turned into a tuple: see stack_as_tuple).
_TENSOR_MAKERS = frozenset(
    {
        *STACKS,
        "tf.concat",
        "K.concatenate",
        "tf.cast",
        "tf.dtypes.cast",
        "K.cast",
        "tf.convert_to_tensor",
        "tf.constant",
        "K.constant",
        "K.variable",
        "tf.Variable",
        "tf.range",
        "K.arange",
        "tf.math.maximum",
        "tf.maximum",
        "K.maximum",
        "tf.math.minimum",
        "tf.minimum",
        "K.minimum",
        "tf.reduce_prod",
        "K.prod",
    }
)
# (with their keras.ops forms: an earlier round of apply may have rewritten them already)
_KERAS_OPS_MAKERS = frozenset(
    "keras.ops." + name
    for name in (
        "stack",
        "concatenate",
        "cast",
        "convert_to_tensor",
        "arange",
        "maximum",
        "minimum",
        "prod",
    )
)
_TENSOR_MAKERS |= _KERAS_OPS_MAKERS
_CASTS = frozenset({"tf.cast", "tf.dtypes.cast", "K.cast", "keras.ops.cast"})
_MAX_DEPTH = 3


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    return call.args[position] if position < len(call.args) else None


def stack_as_tuple(site: CallSite) -> str | None:
    """The tuple text a ``K.stack`` / ``tf.stack`` call becomes when it is the shape
    argument of a call of ``STATIC_SHAPE_ARGUMENTS`` and stacks a literal list along
    axis 0 (None otherwise): ``(1, K.shape(x)[1], 1)``."""
    call = site.node
    if not isinstance(call, ast.Call):
        return None
    consumer = site.module.parent_of(call)
    if not isinstance(consumer, ast.Call):
        return None
    where = STATIC_SHAPE_ARGUMENTS.get(site.module.resolve(consumer.func) or "")
    if where is None or _argument(consumer, *where) is not call:
        return None
    return stacked_tuple(site, call)


# Where a tuple serves as a shape as well as the stacked tensor did (keras.ops forms too:
# an earlier round of apply may have rewritten the consumer already).
_TUPLE_SHAPE_ARGUMENTS: dict[str, tuple[int, str]] = {
    **STATIC_SHAPE_ARGUMENTS,
    **{
        symbol: SHAPE_ARGUMENTS[symbol][:2]  # type: ignore[misc]
        for symbol in SHAPE_ARGUMENTS
        if symbol.startswith("keras.ops.")
    },
}
_LISTS = (ast.List, ast.ListComp, ast.Tuple)


def stack_bound_as_tuple(module: ModuleInfo, call: ast.expr) -> str | None:
    """The text ``call`` becomes when it is ``name = tf.stack(values)`` (``K.stack``,
    along axis 0) whose every read is a shape argument (of tile, reshape, zeros, ones,
    fill or broadcast_to) or an element of a method's returned tuple that every caller
    leaves unread: ``tuple(values)`` for a name bound only to lists, the tuple itself for
    a literal list. None otherwise (a read as a tensor, an ambiguous read...)."""
    if not isinstance(call, ast.Call) or module.resolve(call.func) not in STACKS:
        return None
    assign = module.parent_of(call)
    if not (
        _stackable(call, module)
        and isinstance(assign, ast.Assign)
        and assign.value is call
        and len(assign.targets) == 1
        and isinstance(assign.targets[0], ast.Name)
    ):
        return None
    values = call.args[0]
    if isinstance(values, (ast.List, ast.Tuple)):
        if not values.elts or any(isinstance(e, ast.Starred) for e in values.elts):
            return None
        items = [module.node_text(e) for e in values.elts]
        text = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    elif isinstance(values, ast.Name):
        held = possible_values(module, values)
        if not held or not all(isinstance(value, _LISTS) for value in held):
            return None
        text = f"tuple({values.id})"
    else:
        return None
    reads = reads_of(module, assign.targets[0])
    if not reads or not all(_read_as_shape(module, read) for read in reads):
        return None
    return text


def _read_as_shape(module: ModuleInfo, read: ast.Name) -> bool:
    """Whether ``read`` is a tuple-taking shape argument, or an element of a returned
    tuple that no caller reads."""
    parent = module.parent_of(read)
    if isinstance(parent, ast.Call):
        where = _TUPLE_SHAPE_ARGUMENTS.get(module.resolve(parent.func) or "")
        return where is not None and _argument(parent, *where) is read
    if isinstance(parent, ast.Tuple) and isinstance(module.parent_of(parent), ast.Return):
        return _returned_unread(module, parent.elts.index(read), len(parent.elts), read)
    return False


def _returned_unread(module: ModuleInfo, index: int, size: int, read: ast.AST) -> bool:
    """Whether element ``index`` of the ``size``-tuple a method returns is read by no
    caller: the method is private to its class (``_name``), and every use of its name
    in the module is a call ``a, b = self._name(...)`` whose element ``index`` is a name
    nothing reads (or ``_``). Callers in other modules are not seen: a subclass
    elsewhere that reads it is a limit of this check, hence private methods only."""
    function = module.parent_of(read)
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.Lambda)):
        function = module.parent_of(function)
    if not isinstance(function, ast.FunctionDef) or not isinstance(
        module.parent_of(function), ast.ClassDef
    ):
        return False
    name = function.name
    if not name.startswith("_") or name.startswith("__"):
        return False
    uses = [n for n in module.nodes_in(module.tree, ast.Attribute) if n.attr == name]  # type: ignore[attr-defined]
    uses += [n for n in module.nodes_in(module.tree, ast.Name) if n.id == name]  # type: ignore[attr-defined]
    if not uses:
        return False
    for use in uses:
        call = module.parent_of(use)
        assign = module.parent_of(call)
        if not (
            isinstance(use, ast.Attribute)
            and isinstance(use.value, ast.Name)
            and use.value.id == "self"
            and isinstance(call, ast.Call)
            and call.func is use
            and isinstance(assign, ast.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0], ast.Tuple)
            and len(assign.targets[0].elts) == size
        ):
            return False
        target = assign.targets[0].elts[index]
        if not isinstance(target, ast.Name):
            return False
        if target.id != "_" and reads_of(module, target) != []:
            return False
    return True


def stacked_tuple(site: CallSite, node: ast.expr) -> str | None:
    """The tuple text of ``node`` when it is a ``K.stack`` / ``tf.stack`` of a literal
    list along axis 0 (None otherwise): the same values, as keras.ops takes a shape."""
    if not isinstance(node, ast.Call) or site.module.resolve(node.func) not in STACKS:
        return None
    if not _stackable(node, site.module):
        return None
    values = node.args[0]
    if not isinstance(values, (ast.List, ast.Tuple)) or not values.elts:
        return None
    if any(isinstance(e, ast.Starred) for e in values.elts):
        return None
    items = [site.text(e) for e in values.elts]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def tensor_shape_argument(site: CallSite, node: ast.expr, depth: int = 0) -> str:
    """Why ``node``, the shape or count argument of ``site``, is a tensor where
    keras.ops needs Python values ("" when it is not, or will be a tuple)."""
    if depth > _MAX_DEPTH:
        return ""
    module = site.module
    if isinstance(node, ast.Name):
        # every value the name may hold here (one, where the read sees one assignment)
        for value in possible_values(module, node):
            why = tensor_shape_argument(site, value, depth + 1)
            if why:
                return why
        return ""
    if isinstance(node, (ast.List, ast.Tuple)):
        for element in node.elts:
            why = _tensor_entry(site, element, depth)
            if why:
                return why
        return ""
    if not isinstance(node, ast.Call):
        return ""
    symbol = module.resolve(node.func) or ""
    if symbol in STACKS and depth == 0:
        parent = module.parent_of(node)
        if isinstance(parent, ast.Call) and parent is site.node:
            values = node.args[0] if node.args else None
            if isinstance(values, (ast.List, ast.Tuple)) and _stackable(node, module):
                return tensor_shape_argument(site, values, depth + 1)
    if symbol in STACKS and stack_bound_as_tuple(module, node) is not None:
        return tensor_shape_argument(site, node.args[0], depth + 1)  # becomes the tuple
    if symbol in _TENSOR_MAKERS:
        stacks = symbol in STACKS or symbol == "keras.ops.stack"
        stacked = node.args[0] if stacks and len(node.args) == 1 else None
        if isinstance(stacked, ast.Name):  # group_shape = tf.stack(group_shape)
            return (
                f"`{site.text(node)}` is a tensor; the list `{stacked.id}` it stacks can be "
                "the shape itself"
            )
        return f"`{site.text(node)}` is a tensor"
    return ""


def _stackable(call: ast.Call, module: ModuleInfo) -> bool:
    """A stack along axis 0 of one literal list (what stack_as_tuple turns into a tuple)."""
    if len(call.args) != 1:
        return False
    if not call.keywords:
        return True
    return (
        len(call.keywords) == 1
        and call.keywords[0].arg == "axis"
        and module.literal(call.keywords[0].value) == 0
    )


def _tensor_entry(site: CallSite, element: ast.expr, depth: int) -> str:
    """Why one entry of a shape list is a tensor keras.ops cannot take there: a cast (of
    a shape entry, usually: ``K.cast(K.shape(x)[0], "int32")``), directly or through a
    name bound to one."""
    if isinstance(element, ast.Name) and depth < _MAX_DEPTH:
        for value in possible_values(site.module, element):
            why = _tensor_entry(site, value, depth + 1)
            if why:
                return why
        return ""
    if isinstance(element, ast.Call) and (site.module.resolve(element.func) or "") in _CASTS:
        if shape_entry_cast(site, element):
            return ""  # the cast goes (see shape_entry_cast): the entry stays
        return f"`{site.text(element)}` is a tensor (a cast)"
    return ""


_INT32_NAMES = frozenset({"int32"})


def shape_entry_cast(site: CallSite, call: ast.Call) -> ast.expr | None:
    """The entry, when ``call`` is a cast to int32 of one entry of a dynamic shape
    (``K.cast(K.shape(x)[0], "int32")``, ``tf.cast(tf.shape(x)[1], tf.int32)``), which
    is int32 already: the cast does nothing in Keras 2, and ``keras.ops.cast`` would turn
    a static int into a traced value that cannot slice or shape under jit on JAX."""
    arguments = {k.arg: k.value for k in call.keywords}
    positional = list(call.args)
    names = ("x", "dtype")
    if any(k not in names for k in arguments) or len(positional) + len(arguments) != 2:
        return None
    given = dict(zip(names, positional)) | arguments
    entry, dtype = given.get("x"), given.get("dtype")
    if entry is None or dtype is None or dtype_name(site, dtype) not in _INT32_NAMES:
        return None
    return entry if _shape_entry(site, entry) else None


def _shape_entry(site: CallSite, node: ast.expr) -> bool:
    if not isinstance(node, ast.Subscript) or isinstance(node.slice, ast.Slice):
        return False
    shape = node.value
    if isinstance(shape, ast.Name):  # s = tf.shape(x) ... s[0]
        shape = bound_value(site.module, shape)
    if not (isinstance(shape, ast.Call) and len(shape.args) == 1 and not shape.keywords):
        return False
    if site.module.resolve(shape.func) not in SHAPE_FUNCTIONS:
        return False
    index = site.module.literal(node.slice)
    return isinstance(index, int) and not isinstance(index, bool)
