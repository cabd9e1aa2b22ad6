"""KM204: TensorFlow dtype constants and ``TensorShape`` helpers in model code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import (
    CallSite,
    Context,
    EditPlan,
    Node,
    ReferenceSite,
    ReplaceNode,
    Severity,
)
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.catalog.binding import ATOMS
from kmigrate.rules.common.dtypes import dtype_of_symbol
from kmigrate.rules.common.shape_uses import argument_of, as_list_call
from kmigrate.rules.ops_catalog import by_symbol, py_literal

_DTYPE_PREFIXES = (
    "tf.float",
    "tf.int",
    "tf.uint",
    "tf.bool",
    "tf.bfloat16",
    "tf.half",
    "tf.double",
    "tf.complex",
    "tf.string",
    "tf.dtypes.",
    "tf.compat.v1.float",
    "tf.compat.v1.int",
)


class TfDtypeAndShapeHelpers(Rule):
    id = "KM204"
    name = "tf-dtype-and-shape-helpers"
    summary = (
        "TensorFlow dtype constants (tf.float32) and TensorShape helpers "
        "(x.shape.as_list(), x.get_shape()) in model code."
    )
    rationale = (
        'Keras 3 names dtypes with strings ("float32") on every backend, and shapes are '
        "tuples: TensorShape's as_list() and get_shape() exist only on TensorFlow tensors "
        "(a build() input_shape is a plain tuple in Keras 3)."
    )
    fix_safety = (
        'tf.float32 -> "float32" (keras.ops, layers and add_weight accept dtype names); '
        "x.shape.as_list() -> list(x.shape), layer.compute_output_shape(s).as_list() -> "
        "list(layer.compute_output_shape(s)) (a tuple in Keras 3, a TensorShape in Keras 2: "
        "list() of either is its dims) and input_shape.as_list() -> list(input_shape) "
        "in build() and compute_output_shape() (input_shape[0].as_list() -> "
        "list(input_shape[0]) where a multi-input layer gets a list of shapes; there too "
        "input_shape.rank / .ndims -> len(input_shape), .dims -> list(input_shape), "
        ".is_fully_defined() -> all(d is not None for d in input_shape)); "
        "x.shape.rank / .ndims -> len(x.shape) in model code (a Keras 3 tensor's rank is "
        "always known); x.get_shape() -> x.shape. A dtype compared with == is reported instead "
        "(x.dtype is a torch.dtype on PyTorch, which never equals a string): compare "
        'keras.backend.standardize_dtype(x.dtype) == "float32".'
    )
    severity = Severity.WARNING
    contexts = frozenset({Context.MODEL})
    reference_prefixes = _DTYPE_PREFIXES
    method_names = frozenset({"as_list", "get_shape", "is_fully_defined"})
    visit_types = (ast.FunctionDef,)  # build / compute_output_shape: their shape's attributes
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Pool(keras.layers.Layer):
                def build(self, input_shape):
                    dims = input_shape.as_list()
                    self.w = self.add_weight(shape=(dims[-1],), dtype=tf.float32)

                def call(self, x):
                    n = x.shape.as_list()[-1]
                    m = x.get_shape().as_list()[0]
                    return x * self.w / n / m
            """,
            """
            from tensorflow import keras


            class Pool(keras.layers.Layer):
                def build(self, input_shape):
                    dims = list(input_shape)
                    self.w = self.add_weight(shape=(dims[-1],), dtype="float32")

                def call(self, x):
                    n = list(x.shape)[-1]
                    m = list(x.shape)[0]
                    return x * self.w / n / m
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Guard(keras.layers.Layer):
                def call(self, x):
                    if x.dtype == tf.float16:
                        x = x * 2
                    return x
            """
        ),
        Clean(
            """
            import tensorflow as tf

            DTYPE = tf.float32


            def parse(record):
                return tf.io.parse_tensor(record, out_type=tf.float32)
            """
        ),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        symbol = site.symbol
        base, _, attribute = symbol.rpartition(".")
        name = dtype_of_symbol(symbol)
        if name is None:
            name = dtype_of_symbol(base) if attribute else None
            if name is None:
                return
            if attribute != "name":
                yield Report(
                    site,
                    f"`{symbol}` uses a TensorFlow DType attribute; Keras 3 dtypes are "
                    "strings. Instead: keras.backend.standardize_dtype / "
                    "keras.backend.is_float_dtype, np.finfo(name) for limits",
                )
                return
        if name == "string":
            yield Report(site, f"`{symbol}`: string tensors exist only on TensorFlow")
            return
        parent = site.module.parent_of(site.node)
        if isinstance(parent, ast.Compare):
            yield Report(
                site,
                f"`{symbol}` compared to a dtype: on PyTorch x.dtype is a torch.dtype and "
                "never equals a TensorFlow dtype or a string. Instead: "
                f'keras.backend.standardize_dtype(x.dtype) == "{name}"',
            )
            return
        argument = argument_of(site, site.node)
        if argument is not None and site.module.resolve(argument[0].func) in by_symbol():
            return  # KM201/KM202 translate (or report) the whole call
        fix = EditPlan((ReplaceNode(site.span, py_literal(name)),))
        yield Report(site, f'`{symbol}` -> `"{name}"`: Keras 3 names dtypes with strings', fix=fix)

    def check_node(self, site: Node) -> Iterable[Report]:
        """``input_shape.rank`` / ``.ndims`` / ``.dims`` in build / compute_output_shape, and
        ``x.shape.rank`` / ``.ndims`` in any model function: TensorShape attributes a
        Keras 3 tuple lacks."""
        function = site.node
        if not isinstance(function, ast.FunctionDef):
            return
        yield from _tensor_rank(site, function)
        if function.name not in _SHAPE_METHODS:
            return
        params = function.args.args
        if len(params) < 2 or not isinstance(site.module.parent_of(function), ast.ClassDef):
            return
        for node in site.module.nodes_in(function, ast.Attribute):
            if node.attr not in _SHAPE_ATTRIBUTES or not _names_the_shape(  # type: ignore[attr-defined]
                site,
                node.value,
                params[1].arg,  # type: ignore[attr-defined]
            ):
                continue
            shape = site.module.node_text(node.value)  # type: ignore[attr-defined]
            text = _SHAPE_ATTRIBUTES[node.attr].format(shape)  # type: ignore[attr-defined]
            span = site.module.span_of(node)
            yield Report(
                site,
                f"`.{node.attr}` is a TensorShape attribute; Keras 3 shapes are tuples: use "  # type: ignore[attr-defined]
                f"`{text}`",
                fix=EditPlan((ReplaceNode(span, text),)),
                severity=Severity.ERROR,
                span=span,
            )

    def check_call(self, site: CallSite) -> Iterable[Report]:
        receiver = site.receiver
        if receiver is None or site.args or site.keywords:
            return
        method = site.symbol.rpartition(".")[2]
        if method == "is_fully_defined":
            yield from _fully_defined(site, receiver)
            return
        if method == "get_shape":
            if as_list_call(site) is not None:
                return  # `x.get_shape().as_list()`: the `as_list` call's finding covers both
            text = site.text(receiver)
            if not isinstance(receiver, ATOMS):
                text = f"({text})"
            fix = EditPlan((ReplaceNode(site.span, f"{text}.shape"),))
            yield Report(
                site,
                "`x.get_shape()` is TensorFlow-only: use `x.shape`",
                fix=fix,
                severity=Severity.ERROR,
            )
            return
        if isinstance(receiver, ast.Attribute) and receiver.attr == "shape":
            shape_text = site.text(receiver)
        elif isinstance(receiver, ast.Name) and _is_shape_parameter(site, receiver.id):
            shape_text = receiver.id
        elif _is_one_of_the_shapes(site, receiver):  # a multi-input layer's list of shapes
            shape_text = site.text(receiver)
        elif _is_output_shape_call(receiver):  # a wrapped layer's shape: a tuple in Keras 3
            shape_text = site.text(receiver)
        elif _is_get_shape_call(receiver):  # one rewrite, not one per round
            inner = receiver.func.value  # type: ignore[attr-defined]
            text = site.text(inner)
            shape_text = f"{text if isinstance(inner, ATOMS) else f'({text})'}.shape"
        else:
            return
        fix = EditPlan((ReplaceNode(site.span, f"list({shape_text})"),))
        yield Report(
            site,
            "`.as_list()` is a TensorShape method; Keras 3 shapes are tuples: use "
            f"`list({shape_text})`",
            fix=fix,
            severity=Severity.ERROR,
        )


def _is_output_shape_call(node: ast.AST) -> bool:
    """``layer.compute_output_shape(shape)``: a TensorShape in Keras 2 (``as_list()`` was
    how to read it), a tuple in Keras 3; ``list()`` of either is the list of its dims."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "compute_output_shape"
    )


def _is_get_shape_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get_shape"
        and not node.args
        and not node.keywords
    )


def _is_shape_parameter(site: CallSite, name: str) -> bool:
    """Whether ``name`` is the shape parameter of ``build`` or ``compute_output_shape``
    (a TensorShape, or a list of them, in Keras 2; tuples in Keras 3)."""
    function = site.scope.function_node
    if site.scope.function_name not in _SHAPE_METHODS or not isinstance(function, ast.FunctionDef):
        return False
    params = function.args.args
    return len(params) >= 2 and params[1].arg == name


def _is_one_of_the_shapes(site: CallSite, node: ast.AST) -> bool:
    """``input_shape[0]``: a multi-input layer called on a list gets a list of shapes."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and _is_shape_parameter(site, node.value.id)
        and isinstance(site.module.literal(node.slice), int)
    )


_SHAPE_METHODS = frozenset({"build", "compute_output_shape"})
# TensorShape attributes of a shape parameter -> the same value from a tuple.
_SHAPE_ATTRIBUTES = {"rank": "len({})", "ndims": "len({})", "dims": "list({})"}


def _tensor_rank(site: Node, function: ast.FunctionDef) -> Iterable[Report]:
    """``x.shape.rank`` / ``x.shape.ndims`` in ``function`` (not in a function nested in
    it, which is visited on its own): ``len(x.shape)``. A Keras 3 shape is a tuple whose
    length is always known; Keras 2's ``rank`` is None only for an unknown rank, which no
    Keras 3 tensor or variable has."""
    nested = {
        id(node)
        for inner in site.module.nodes_in(function, ast.FunctionDef, ast.AsyncFunctionDef)
        if inner is not function
        for node in site.module.nodes_in(inner, ast.Attribute)
    }
    for node in site.module.nodes_in(function, ast.Attribute):
        shape = node.value  # type: ignore[attr-defined]
        if (
            node.attr not in ("rank", "ndims")  # type: ignore[attr-defined]
            or id(node) in nested
            or not isinstance(shape, ast.Attribute)
            or shape.attr != "shape"
        ):
            continue
        text = f"len({site.module.node_text(shape)})"
        span = site.module.span_of(node)
        message = (
            f"`.shape.{node.attr}` is a TensorShape attribute; Keras 3 shapes are tuples: "  # type: ignore[attr-defined]
            f"use `{text}`"
        )
        if _compared_to_none(site, node):  # the code handles an unknown rank: TF-only
            message += " (not rewritten: compared with None, an unknown rank that len() raises on)"
            yield Report(site, message, severity=Severity.ERROR, span=span)
            continue
        fix = EditPlan((ReplaceNode(span, text),))
        yield Report(site, message, fix=fix, severity=Severity.ERROR, span=span)


def _compared_to_none(site: Node, node: ast.AST) -> bool:
    """``x.shape.rank is None`` (or ``==``/``!=``/``is not``): the code expects an unknown
    rank, which ``len`` of a TensorFlow shape raises on."""
    parent = site.module.parent_of(node)
    return isinstance(parent, ast.Compare) and any(
        isinstance(n, ast.Constant) and n.value is None for n in (parent.left, *parent.comparators)
    )


def _names_the_shape(site: Node, node: ast.AST, name: str) -> bool:
    """``input_shape`` or ``input_shape[0]`` (one of a multi-input layer's shapes)."""
    if isinstance(node, ast.Subscript):
        if not isinstance(site.module.literal(node.slice), int):
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _fully_defined(site: CallSite, receiver: ast.expr) -> Iterable[Report]:
    function = site.scope.function_node
    if not isinstance(function, ast.FunctionDef) or site.scope.function_name not in (
        _SHAPE_METHODS
    ):
        return
    params = function.args.args
    if len(params) < 2 or not _names_the_shape(site, receiver, params[1].arg):
        return
    text = f"all(d is not None for d in {site.text(receiver)})"
    yield Report(
        site,
        f"`.is_fully_defined()` is a TensorShape method; Keras 3 shapes are tuples: use `{text}`",
        fix=EditPlan((ReplaceNode(site.span, text),)),
        severity=Severity.ERROR,
    )
