"""Catalog entries whose rewrite depends on argument values (``tf.matmul``'s transposes,
``tf.slice``'s sizes, ...), and ``plan_call``, which picks the builder or the table.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from kmigrate.engine import MISSING, NOT_LITERAL, ArgOut, CallEdit, CallSite, EditPlan, ReplaceNode
from kmigrate.rules.common.batch_dot import batch_dot_axes, einsum_subscripts, static_rank
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError, bind
from kmigrate.rules.common.catalog.broadcast_shape import build_broadcast_shape
from kmigrate.rules.common.catalog.cond_branches import (
    branch_state,
    branch_structures,
    variable_predicate,
    variable_refusal,
)
from kmigrate.rules.common.catalog.loop_state import CONTROL_FLOW, tf_only_state
from kmigrate.rules.common.catalog.plan import Rewrite, check_conditions, plain_names, table_rewrite
from kmigrate.rules.common.catalog.tensor_array import (
    SYMBOLIC_LENGTH,
    build_tensor_array,
    symbolic_value,
)
from kmigrate.rules.common.catalog.tf1_resize import build_tf1_resize
from kmigrate.rules.common.catalog.train_phase import build_train_phase
from kmigrate.rules.common.compat_helpers import (
    HELPER_FILE,
    HELPER_MODULE,
    helper_edit,
    helper_name_taken,
)
from kmigrate.rules.common.known_tensors import known_tensor, shape_read_before
from kmigrate.rules.common.local_names import possible_values
from kmigrate.rules.common.shape_uses import (
    returned_entry,
    returned_value,
    shape_sequence,
    shape_use_ok,
)
from kmigrate.rules.common.static_shapes import (
    STATIC_SHAPE_ARGUMENTS,
    shape_entry_cast,
    stack_as_tuple,
    stack_bound_as_tuple,
    tensor_shape_argument,
)
from kmigrate.rules.ops_catalog import OpEntry, py_literal

# K.shape / tf.shape of a value not shown to be a tensor (rules/data/keras2_compat.py)
SHAPE_OF = "shape_of"


def call_text(callee: str, items: Iterable[tuple[str | None, str]]) -> str:
    parts = [text if keyword is None else f"{keyword}={text}" for keyword, text in items]
    return "{name:" + callee + "}(" + ", ".join(parts) + ")"


def _bool_flag(binding: Binding, name: str) -> bool:
    literal = binding.literal(name)
    if literal is MISSING:
        return False
    if not isinstance(literal, bool):
        raise ManualPortError(
            f"`{name}={binding.text(name)}` is not a literal True/False, and the rewrite "
            "depends on it",
            f"write ops.matmul(a, ops.swapaxes(b, -1, -2)) when {name} is true",
        )
    return literal


def _build_matmul(binding: Binding) -> Rewrite:
    check_conditions(binding)
    args = []
    for operand, flag in (("a", "transpose_a"), ("b", "transpose_b")):
        arg = binding.args.get(operand)
        if arg is None:
            raise ManualPortError(f"`{operand}` is not given")
        value = None
        if _bool_flag(binding, flag):
            value = call_text(
                "keras.ops.swapaxes", [(None, binding.text(operand)), (None, "-1"), (None, "-2")]
            )
        args.append(ArgOut(arg.source, None, value))
    edit = CallEdit(binding.site.span, callee="keras.ops.matmul", args=tuple(args))
    return Rewrite(EditPlan((edit,)), "keras.ops.matmul")


def _build_shape(binding: Binding) -> Rewrite:
    check_conditions(binding)
    if returned_entry(binding.site):
        raise ManualPortError(
            f"an entry of {binding.entry.symbol} is a Lambda layer's output here: a scalar "
            "int32 tensor in Keras 2, a Python int from keras.ops.shape, which Keras 3 does "
            "not take as a layer's output (the model raises)",
            'Lambda(lambda x: ops.convert_to_tensor(ops.shape(x)[i], dtype="int32"))',
        )
    if not shape_use_ok(binding.site):
        raise ManualPortError(
            f"{binding.entry.symbol} returns a tensor, keras.ops.shape a tuple (of ints, "
            "and scalar tensors for unknown dimensions); this use of the whole shape "
            "(arithmetic, which repeats or concatenates a tuple, tf-only methods, indexing "
            "with a tensor, or passing it to a function that may need a tensor) may not "
            "work with a tuple",
            "index it with a constant (ops.shape(x)[0]), unpack it, or pass it straight to "
            "a shape argument; where a tensor is needed write "
            'ops.convert_to_tensor(ops.shape(x), dtype="int32")',
        )
    first = binding.entry.params[0].name
    value = binding.node(first)
    if value is not None and (
        known_tensor(binding.site, value) or shape_read_before(binding.site, value)
    ):
        edit = CallEdit(binding.site.span, "keras.ops.shape", (ArgOut(binding.source(first)),))
        return Rewrite(EditPlan((edit,)), "keras.ops.shape")
    # Keras 2 converts a Python number or list first; keras.ops.shape reads `.shape`,
    # which they do not have on JAX and PyTorch: the helper converts only those
    return _helper_call(binding, SHAPE_OF, (binding.text(first),))


def _top_k_items(binding: Binding) -> list[tuple[str | None, str]]:
    items: list[tuple[str | None, str]] = [(None, binding.text("input"))]
    items.append((None, binding.text("k") if binding.given("k") else "1"))
    if binding.given("sorted"):
        items.append(("sorted", binding.text("sorted")))
    return items


def _build_top_k(binding: Binding) -> Rewrite:
    check_conditions(binding)
    site = binding.site
    parent = site.module.parent_of(site.node)
    if isinstance(parent, ast.Attribute) and parent.value is site.node:
        index = {"values": "0", "indices": "1"}.get(parent.attr)
        if index is None:
            raise ManualPortError(f"`.{parent.attr}` of a top_k result has no keras.ops equivalent")
        text = call_text("keras.ops.top_k", _top_k_items(binding)) + f"[{index}]"
        edit = ReplaceNode(site.module.span_of(parent), text)
        return Rewrite(EditPlan((edit,)), "keras.ops.top_k")
    args = [ArgOut(binding.source("input"))]
    if binding.given("k"):
        args.append(ArgOut(binding.args["k"].source))
    else:
        args.append(ArgOut(None, None, "1"))
    if binding.given("sorted"):
        args.append(ArgOut(binding.args["sorted"].source, "sorted"))
    edit = CallEdit(site.span, "keras.ops.top_k", tuple(args))
    return Rewrite(EditPlan((edit,)), "keras.ops.top_k")


def _int_literal(binding: Binding, name: str) -> int:
    literal = binding.literal(name)
    if not isinstance(literal, int) or isinstance(literal, bool):
        raise ManualPortError(
            f"`{name}` is not a literal int: which of ops.tril/ops.triu applies depends on it",
            "ops.tril(x, k) keeps j - i <= k, ops.triu(x, k) keeps j - i >= k",
        )
    return literal


def _build_band_part(binding: Binding) -> Rewrite:
    check_conditions(binding)
    lower, upper = _int_literal(binding, "num_lower"), _int_literal(binding, "num_upper")
    site, source = binding.site, binding.source("input")
    if lower < 0 and upper < 0:
        call = CallEdit(site.span, "keras.ops.copy", (ArgOut(source),))
    elif lower < 0:
        extra = () if upper == 0 else (ArgOut(None, None, str(upper)),)
        call = CallEdit(site.span, "keras.ops.tril", (ArgOut(source), *extra))
    elif upper < 0:
        extra = () if lower == 0 else (ArgOut(None, None, str(-lower)),)
        call = CallEdit(site.span, "keras.ops.triu", (ArgOut(source), *extra))
    else:
        inner = call_text("keras.ops.tril", [(None, binding.text("input")), (None, str(upper))])
        text = call_text("keras.ops.triu", [(None, inner), (None, str(-lower))])
        return Rewrite(EditPlan((ReplaceNode(site.span, text),)), "keras.ops.triu")
    return Rewrite(EditPlan((call,)), call.callee or "")


def _build_sort(binding: Binding) -> Rewrite:
    check_conditions(binding)
    entry, site = binding.entry, binding.site
    target = "keras.ops.argsort" if entry.symbol == "tf.argsort" else "keras.ops.sort"
    direction = binding.literal("direction")
    if direction is MISSING:
        direction = "ASCENDING"
    if not isinstance(direction, str) or direction.upper() not in ("ASCENDING", "DESCENDING"):
        raise ManualPortError(
            '`direction` is not a literal "ASCENDING"/"DESCENDING"',
            f"{target}(x, axis) sorts ascending; ops.flip(..., axis) reverses it",
        )
    axis_node = binding.node("axis")
    if direction.upper() == "ASCENDING":
        args = [ArgOut(binding.source("values"))]
        if axis_node is not None:
            args.append(ArgOut(binding.args["axis"].source, "axis"))
        return Rewrite(EditPlan((CallEdit(site.span, target, tuple(args)),)), target)
    if axis_node is not None and not isinstance(axis_node, (ast.Constant, ast.UnaryOp, ast.Name)):
        raise ManualPortError("`axis` is an expression that the descending rewrite would repeat")
    axis = binding.text("axis") if axis_node is not None else "-1"
    inner = call_text(target, [(None, binding.text("values")), ("axis", axis)])
    text = call_text("keras.ops.flip", [(None, inner), ("axis", axis)])
    return Rewrite(EditPlan((ReplaceNode(site.span, text),)), target)


def _build_scan(binding: Binding) -> Rewrite:
    check_conditions(binding)
    reverse = binding.literal("reverse")
    if reverse is not MISSING and not isinstance(reverse, bool):
        raise ManualPortError("`reverse` is not a literal True/False")
    step = (
        "lambda _acc, _elem: (lambda _new: (_new, _new))(" + binding.atom("fn") + "(_acc, _elem))"
    )
    items = [(None, step), (None, binding.text("initializer")), (None, binding.text("elems"))]
    if reverse is True:
        items.append(("reverse", "True"))
    text = call_text("keras.ops.scan", items) + "[1]"
    return Rewrite(EditPlan((ReplaceNode(binding.site.span, text),)), "keras.ops.scan")


def _build_window(binding: Binding) -> Rewrite:
    check_conditions(binding)
    target = "keras.ops.hanning" if "hann" in binding.entry.symbol else "keras.ops.hamming"
    periodic = binding.literal("periodic")
    if periodic is MISSING:
        periodic = True
    if not isinstance(periodic, bool):
        raise ManualPortError("`periodic` is not a literal True/False")
    length = binding.args.get("window_length")
    if length is None:
        raise ManualPortError("`window_length` is not given")
    if not periodic:
        return Rewrite(
            EditPlan((CallEdit(binding.site.span, target, (ArgOut(length.source),)),)), target
        )
    text = "{name:" + target + "}(" + binding.atom("window_length") + " + 1)[:-1]"
    return Rewrite(EditPlan((ReplaceNode(binding.site.span, text),)), target)


def _build_fill(binding: Binding) -> Rewrite:
    """tf.fill keeps the value's dtype; keras.ops.full defaults to floatx."""
    check_conditions(binding)
    value = binding.literal("value")
    if value is MISSING or value is NOT_LITERAL or not isinstance(value, (bool, int, float)):
        raise ManualPortError(
            "`value` is not a literal number: tf.fill keeps its dtype, keras.ops.full "
            "would use floatx",
            "ops.full(dims, value, dtype=...) with the dtype written out",
        )
    args = [ArgOut(binding.source("dims")), ArgOut(binding.source("value"))]
    if isinstance(value, bool):
        args.append(ArgOut(None, "dtype", py_literal("bool")))
    elif isinstance(value, int):
        args.append(ArgOut(None, "dtype", py_literal("int32")))
    edit = CallEdit(binding.site.span, "keras.ops.full", tuple(args))
    return Rewrite(EditPlan((edit,)), "keras.ops.full")


def _build_backend_arange(binding: Binding) -> Rewrite:
    """K.arange casts only to a dtype other than its default 'int32'; otherwise its result
    has tf.range's own dtype, inferred from the bounds and step: float32 for a literal
    float (keras.ops.arange with "int32" would raise or truncate), int32 for literal ints,
    and for a bound held in a name no dtype at all: keras.ops.arange infers it from its
    arguments as tf.range does (int32 from ints and shape entries, float32 from floats)."""
    rewrite = table_rewrite(binding)
    if binding.literal("dtype") not in (MISSING, "int32"):
        return rewrite
    bounds = [binding.literal(name) for name in ("start", "stop", "step")]
    if any(isinstance(value, float) for value in bounds):
        inferred: str | None = "float32"
    elif all(value is MISSING or type(value) is int for value in bounds):
        inferred = "int32"
    else:
        inferred = None
    (edit,) = rewrite.plan.edits
    assert isinstance(edit, CallEdit) and edit.args is not None
    args = [arg for arg in edit.args if arg.keyword != "dtype"]
    if inferred is not None:
        args.append(ArgOut(None, "dtype", py_literal(inferred)))
    return Rewrite(EditPlan((replace(edit, args=tuple(args)),)), rewrite.target)


def _build_name_scope(binding: Binding) -> Rewrite:
    """``with tf.name_scope("block"):`` -> ``with keras.name_scope("block"):``."""
    check_conditions(binding)
    site = binding.site
    item = site.module.parent_of(site.node)
    if not (isinstance(item, ast.withitem) and item.context_expr is site.node):
        raise ManualPortError("it is not the expression of a `with` statement")
    if item.optional_vars is not None:
        raise ManualPortError(
            "`as` binds the scope's name string in TensorFlow but the scope object in Keras"
        )
    name = binding.literal(binding.entry.params[0].name)
    if not isinstance(name, str) or "/" in name:
        raise ManualPortError(
            "the name is not a literal string without '/': keras.name_scope raises on a "
            "name containing '/' (TensorFlow accepts it), so only a literal name is known "
            "to be safe",
            "with keras.name_scope(name): with a name without '/', or drop the scope",
        )
    edit = CallEdit(site.span, "keras.name_scope", (ArgOut(binding.source("name")),))
    return Rewrite(EditPlan((edit,)), "keras.name_scope")


def _build_batch_dot(binding: Binding) -> Rewrite:
    """K.batch_dot -> ops.einsum with subscripts for the ranks the code states; else a
    call to the project's helper with K.batch_dot's meaning for every rank and axes."""
    check_conditions(binding)
    site = binding.site
    ranks = [static_rank(site, binding.node(name)) for name in ("x", "y")]
    axes = binding.literal("axes") if binding.given("axes") else None
    pair = None if None in ranks else batch_dot_axes(axes, *ranks)  # type: ignore[arg-type]
    if pair is None:
        return _helper_call(binding, "batch_dot")
    x_rank, y_rank = ranks  # type: ignore[misc]
    subscripts, keep = einsum_subscripts(x_rank, y_rank, pair)
    items = [(None, py_literal(subscripts)), (None, binding.text("x")), (None, binding.text("y"))]
    text = call_text("keras.ops.einsum", items)
    if keep:
        text = call_text("keras.ops.expand_dims", [(None, text), (None, "-1")])
    return Rewrite(EditPlan((ReplaceNode(site.span, text),)), plain_names(text))


def _build_keras2_helper(binding: Binding) -> Rewrite:
    """A Keras 2 backend function whose helper (same name) keeps its meaning exactly."""
    check_conditions(binding)
    return _helper_call(binding, binding.entry.symbol.rpartition(".")[2])


def _helper_call(binding: Binding, name: str, args: tuple[str, ...] | None = None) -> Rewrite:
    """The call made to helper ``name`` (Keras 2's function on keras.ops, written into
    the project's helper module beside the file): with the arguments as they are, or
    with ``args`` (their texts) instead."""
    site = binding.site
    if helper_name_taken(site, name):
        raise ManualPortError(
            f"the module uses the name `{name}` itself, so the helper with "
            f"{binding.entry.symbol}'s meaning cannot be imported under it",
            f"copy `{name}` from {HELPER_FILE.name} in kmigrate's rules/data under another name",
        )
    if args is None:
        callee = site.module.span_of(site.node.func)  # type: ignore[attr-defined]
        edit = ReplaceNode(callee, name)
    else:
        edit = ReplaceNode(site.span, f"{name}({', '.join(args)})")
    plan = EditPlan((edit, helper_edit(site, name)))
    return Rewrite(plan, f"{HELPER_MODULE}.{name}")


def _build_shape_prod(binding: Binding) -> Rewrite:
    """The product of a shape's dimensions (``K.prod(K.shape(x)[1:3])``, nothing but the
    dimensions given) -> the ``shape_prod`` helper: a Python int where they are known,
    which keras.ops takes in a shape under jit on JAX (ops.prod gives a traced value
    there). Any other product, or one a Lambda layer returns (Keras 3 takes no int as a
    layer's output), is ops.prod."""
    site = binding.site
    given = [*site.args, *site.keywords.values()]
    dims = binding.node(binding.entry.params[0].name)
    if len(given) != 1 or dims is None or returned_value(site) or not shape_sequence(site, dims):
        return table_rewrite(binding)
    check_conditions(binding)
    return _helper_call(binding, "shape_prod")


def _build_split(binding: Binding) -> Rewrite:
    """tf.split with a literal count or sizes -> ops.split (sizes become cut indices);
    with a count or sizes that are not literals (``self.heads``, ``[self.units, -1]``),
    or a -1 that is not last, a call to the ``split`` helper, tf.split's meaning on
    keras.ops, unless they are a tensor (the helper needs Python ints) or ``num`` is
    given."""
    try:
        return table_rewrite(binding)
    except ManualPortError as refused:
        if binding.given("num"):
            raise refused
    node = binding.node("num_or_size_splits")
    why = _tensor_value(binding.site, node, 0) if node is not None else "it is not given"
    if why:
        raise ManualPortError(
            f"`num_or_size_splits` is a tensor ({why}); tf.split's sizes on keras.ops "
            "are Python ints (a count or a list of sizes)",
            "keep the count or sizes as Python ints (a layer attribute, len(...)), or "
            "slice the pieces: x[:, a:b]",
        )
    return _helper_call(binding, "split")


def _tensor_value(site: CallSite, node: ast.AST, depth: int) -> str:
    """Why ``node`` may be a tensor ("" when it is Python values: constants, names and
    attributes that no tensor is assigned to, len()/int() of something, lists of them)."""
    if depth > 3:
        return f"`{site.text(node)}` cannot be followed"  # type: ignore[arg-type]
    if isinstance(node, ast.Name):
        for value in possible_values(site.module, node):
            why = _tensor_value(site, value, depth + 1)
            if why:
                return why
        return ""
    if isinstance(node, (ast.List, ast.Tuple)):
        return next((w for e in node.elts if (w := _tensor_value(site, e, depth + 1))), "")
    if isinstance(node, ast.UnaryOp):
        return _tensor_value(site, node.operand, depth + 1)
    if isinstance(node, ast.BinOp):
        return _tensor_value(site, node.left, depth + 1) or _tensor_value(
            site, node.right, depth + 1
        )
    if isinstance(node, ast.Subscript):
        return _tensor_value(site, node.value, depth + 1)
    if isinstance(node, ast.Call):
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id in ("len", "int")
            and not site.module.resolve(func)
        ):
            return ""
        return f"`{site.text(node)}` may be a tensor"  # type: ignore[arg-type]
    return ""


def _build_stack(binding: Binding) -> Rewrite:
    """A stack of a literal list that is a shape argument becomes the tuple keras.ops
    takes there on every backend; any other stack is ops.stack."""
    check_conditions(binding)
    text = stack_as_tuple(binding.site) or stack_bound_as_tuple(
        binding.site.module, binding.site.node
    )
    if text is None:
        return table_rewrite(binding)
    target = text if text.startswith("tuple(") else f"the tuple {text}"
    return Rewrite(EditPlan((ReplaceNode(binding.site.span, text),)), target)


def _build_cond(binding: Binding) -> Rewrite:
    """tf.cond -> keras.ops.cond where its branches are pure (cond_branches); a
    predicate that is a Keras weight of the layer is passed as its value."""
    site = binding.site
    branches = [binding.node("true_fn"), binding.node("false_fn")]
    found = branch_state(site, branches) or branch_structures(site, branches)  # type: ignore[arg-type]
    if found is not None:
        raise ManualPortError(*found)
    rewrite = table_rewrite(binding)
    pred = binding.node("pred")
    held = variable_predicate(site, pred) if pred is not None else None
    if held is None:
        return rewrite
    if held != "weight":
        raise ManualPortError(*variable_refusal(held, site.text(pred)))  # type: ignore[arg-type]
    (edit,) = rewrite.plan.edits
    source = binding.source("pred")
    args = tuple(
        replace(a, value=site.text(pred) + ".value") if a.source == source else a  # type: ignore[arg-type]
        for a in edit.args  # type: ignore[union-attr]
    )
    return Rewrite(EditPlan((replace(edit, args=args),)), rewrite.target)


def _build_cast(binding: Binding) -> Rewrite:
    """A cast to int32 of a dynamic shape's entry (int32 already in Keras 2) is the entry
    itself, which keras.ops.shape keeps static where it can; any other cast is ops.cast."""
    rewrite = table_rewrite(binding)
    site = binding.site
    entry = shape_entry_cast(site, site.node)  # type: ignore[arg-type]
    if entry is None:
        return rewrite
    text = site.text(entry)
    return Rewrite(EditPlan((ReplaceNode(site.span, text),)), f"the shape entry {text}")


def _check_static_shape(binding: Binding) -> None:
    """Refuse a call whose shape or count argument is a tensor: its keras.ops form needs
    Python values there (ints, and ops.shape(x)[i] in a tuple) on JAX and PyTorch."""
    where = STATIC_SHAPE_ARGUMENTS.get(binding.entry.symbol)
    node = binding.node(where[1]) if where is not None else None
    why = tensor_shape_argument(binding.site, node) if node is not None else ""
    if why:
        raise ManualPortError(
            f"its `{where[1]}` argument holds a tensor ({why}), where the keras.ops form "  # type: ignore[index]
            "needs Python ints: inside a functional model and under jit on JAX such a "
            "shape cannot be known",
            "write the shape as a tuple of ints and ops.shape(x)[i] entries, without "
            "casting them (ops.shape gives ints, or scalar tensors TensorFlow accepts there)",
        )


def _check_loop_state(binding: Binding) -> None:
    """Refuse a control-flow call given TensorFlow-only state (loop_state)."""
    if binding.entry.symbol not in CONTROL_FLOW:
        return
    found = tf_only_state(binding.site)
    if found is not None:
        raise ManualPortError(*found)


_RANGES = frozenset({"tf.range", "K.arange"})


def _check_range_loop(binding: Binding) -> None:
    """Refuse ``for i in tf.range(n)`` with ``n`` read from a tensor's shape: Keras 2 ran
    it as a graph loop (autograph); Keras 3 runs a Python loop over ops.arange(n), which
    fails in a TensorFlow functional model with that dimension unknown."""
    site = binding.site
    loop = site.module.parent_of(site.node)
    if binding.entry.symbol not in _RANGES or not (
        isinstance(loop, ast.For) and loop.iter is site.node
    ):
        return
    for argument in [*site.args, *site.keywords.values()]:
        why = symbolic_value(site, argument)
        if why:
            raise ManualPortError(
                f"it is the iterator of a `for` loop and its bound is a tensor ({why}): "
                "Keras 2 ran the loop as a graph loop, Keras 3 would run a Python loop over "
                "keras.ops.arange, which fails in a TensorFlow functional model with that "
                "dimension unknown",
                SYMBOLIC_LENGTH,
            )


def _int_list(value: Any) -> list[int] | None:
    if not isinstance(value, (list, tuple)):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return list(value)


def _build_slice(binding: Binding) -> Rewrite:
    """tf.slice -> ops.slice, or a subscript where `size` says 'to the end' (-1)."""
    check_conditions(binding)
    site = binding.site
    size = _int_list(binding.literal("size"))
    if size is not None and all(s >= 0 for s in size):
        args = (
            ArgOut(binding.source("input_")),
            ArgOut(binding.source("begin")),
            ArgOut(binding.source("size")),
        )
        return Rewrite(EditPlan((CallEdit(site.span, "keras.ops.slice", args),)), "keras.ops.slice")
    begin = _int_list(binding.literal("begin"))
    if (
        size is None
        or begin is None
        or len(begin) != len(size)
        or any(b < 0 for b in begin)
        or any(s < -1 for s in size)
    ):
        raise ManualPortError(
            "`size` is not a literal list of sizes, or it uses -1 ('to the end', which "
            "keras.ops.slice lacks) with a `begin` that is not a literal list",
            "a subscript, x[b0:b0 + s0, b1:] (`b:` where the size is -1), or "
            "keras.ops.slice with the sizes computed from ops.shape(x)",
        )
    parts = []
    for start, length in zip(begin, size):
        if length == -1:
            parts.append(f"{start}:" if start else ":")
        else:
            parts.append(f"{start}:{start + length}")
    text = f"{binding.atom('input_')}[{', '.join(parts)}]"
    return Rewrite(EditPlan((ReplaceNode(site.span, text),)), text)


_NEAREST = frozenset({"nearest", "nearest_neighbor", "tf.image.ResizeMethod.NEAREST_NEIGHBOR"})


def _build_image_resize(binding: Binding) -> Rewrite:
    """tf.image.resize returns float32 for every method but nearest, whatever the image
    dtype; ops.image.resize keeps the image's dtype (int32 images come back rounded): the
    image is cast to float32 first, unless the method is nearest (dtype kept by both)."""
    rewrite = table_rewrite(binding)
    method = binding.literal("method")
    if binding.given("method") and not isinstance(method, str):
        method = binding.site.module.resolve(binding.node("method"))  # type: ignore[arg-type]
    if isinstance(method, str) and method.lower() in {m.lower() for m in _NEAREST}:
        return rewrite
    site, images = binding.site, binding.node("images")
    assert images is not None  # required: table_rewrite bound it
    if any(site.module.resolve(c.func) for c in site.module.nodes_in(images, ast.Call)):  # type: ignore[attr-defined]
        raise ManualPortError(
            "TensorFlow returns float32 here whatever the image dtype, so the image needs "
            "a cast, and it is a TensorFlow call the cast would hide from its own rewrite",
            "compute the image in its own statement, then "
            'ops.image.resize(ops.cast(image, "float32"), size)',
        )
    cast = "{name:keras.ops.cast}(" + site.text(images) + ', "float32")'
    source = binding.source("images")
    (edit,) = rewrite.plan.edits
    assert isinstance(edit, CallEdit) and edit.args is not None
    args = tuple(ArgOut(a.source, a.keyword, cast) if a.source == source else a for a in edit.args)
    return Rewrite(EditPlan((replace(edit, args=args),)), rewrite.target)


BUILDERS: dict[str, Callable[[Binding], Rewrite]] = {
    "image_resize": _build_image_resize,
    "train_phase": build_train_phase,
    "tensor_array": build_tensor_array,
    "slice": _build_slice,
    "batch_dot": _build_batch_dot,
    "stack": _build_stack,
    "cond": _build_cond,
    "cast": _build_cast,
    "tf1_resize": build_tf1_resize,
    "broadcast_shape": build_broadcast_shape,
    "keras2_helper": _build_keras2_helper,
    "shape_prod": _build_shape_prod,
    "split": _build_split,
    "name_scope": _build_name_scope,
    "fill": _build_fill,
    "backend_arange": _build_backend_arange,
    "matmul": _build_matmul,
    "shape": _build_shape,
    "top_k": _build_top_k,
    "band_part": _build_band_part,
    "sort": _build_sort,
    "scan": _build_scan,
    "window": _build_window,
}


def plan_call(entry: OpEntry, site: CallSite) -> Rewrite | ManualPortError:
    """The rewrite of one catalog call, or the reason there is none."""
    if not entry.automatic:
        return ManualPortError(entry.reason, entry.suggestion)
    try:
        binding = bind(entry, site)
        _check_static_shape(binding)
        _check_loop_state(binding)
        _check_range_loop(binding)
        if entry.builder:
            return BUILDERS[entry.builder](binding)
        return table_rewrite(binding)
    except ManualPortError as manual:
        if not manual.suggestion:
            manual.suggestion = entry.suggestion or _default_suggestion(entry)
        return manual.detached()


def _default_suggestion(entry: OpEntry) -> str:
    target = entry.target or "keras.ops"
    return f"port the call by hand to {target} (see `kmigrate explain {entry.symbol}`)"
