"""KM2xx: TensorFlow ops inside model code -> ``keras.ops`` (the ops catalog, interpreted).

The knowledge lives in ``rules/ops_catalog.py`` (a table). This module binds a call's
arguments to the TF signature of its catalog entry, translates argument values
(``"SAME"`` -> ``"same"``, ``tf.float32`` -> ``"float32"``, ``[1, s, s, 1]`` -> ``s``),
and either builds an edit plan or says why the call must be ported by hand:

- KM201 ``tf-op-to-keras-ops``: a call with an exact rewrite at this site (fixable);
- KM202 ``tf-op-manual-port``: a call with no rewrite at this site, with the reason;
- KM203 ``tf-variable-in-layer``: ``tf.Variable`` / ``K.variable`` state in a layer;
- KM204 ``tf-dtype-and-shape-helpers``: ``tf.float32`` constants, ``x.shape.as_list()``,
  ``x.get_shape()``.

Rewrites happen in model code only (``Context.MODEL``). Outside it the TF call works
as it is (TensorFlow stays installed for tf.data), so KM201/KM202 report an info
finding without a fix in ``other`` code and nothing in ``data`` or ``training-loop``
code.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kmigrate.model import (
    MISSING,
    NOT_LITERAL,
    ArgOut,
    CallEdit,
    CallSite,
    Context,
    EditPlan,
    Node,
    ReferenceSite,
    ReplaceNode,
    Severity,
)
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.batch_dot import batch_dot_axes, einsum_subscripts, static_rank
from kmigrate.rules.ops_catalog import (
    OpEntry,
    OutArg,
    by_symbol,
    lookup,
    py_literal,
    qualify_names,
)
from kmigrate.rules.shape_uses import argument_of, shape_use_ok

# ---------------------------------------------------------------------------
# Dtypes.
# ---------------------------------------------------------------------------

DTYPE_NAMES = frozenset(
    {
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
        "complex64",
        "complex128",
        "string",
    }
)
_DTYPE_SYNONYMS = {"half": "float16", "double": "float64"}


def dtype_of_symbol(symbol: str | None) -> str | None:
    """``tf.float32`` / ``tf.dtypes.half`` / ``np.float32`` -> the Keras dtype name."""
    if not symbol:
        return None
    for prefix in ("tf.dtypes.", "tf.compat.v1.", "tf.", "np."):
        if symbol.startswith(prefix):
            name = symbol[len(prefix) :]
            name = _DTYPE_SYNONYMS.get(name, name)
            if name in DTYPE_NAMES and not (prefix == "np." and name in ("bool", "string")):
                return name
    if symbol == "np.bool_":
        return "bool"
    return None


def dtype_name(site: Node, node: ast.AST) -> str | None:
    """The dtype an argument names (a dtype constant or string literal), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value in DTYPE_NAMES else None
    if isinstance(node, (ast.Attribute, ast.Name)):
        return dtype_of_symbol(site.module.resolve(node))
    return None


# ---------------------------------------------------------------------------
# Binding a call to its TF signature.
# ---------------------------------------------------------------------------


class ManualPortError(Exception):
    """The call has no automatic rewrite at this site."""

    def __init__(self, reason: str, suggestion: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.suggestion = suggestion


@dataclass
class Arg:
    """One bound argument: where it was written and its expression."""

    source: int | str  # positional index or the keyword as written
    node: ast.expr


@dataclass
class Binding:
    entry: OpEntry
    site: CallSite
    args: dict[str, Arg]
    star: list[int]  # positional indices that went to the *args parameter

    def given(self, name: str) -> bool:
        return name in self.args

    def node(self, name: str) -> ast.expr | None:
        arg = self.args.get(name)
        return None if arg is None else arg.node

    def literal(self, name: str) -> Any:
        node = self.node(name)
        return MISSING if node is None else self.site.module.literal(node)

    def text(self, name: str) -> str:
        node = self.node(name)
        if node is not None:
            return self.site.text(node)
        param = self.entry.param(name)
        if param is None or param.default is None:
            raise ManualPortError(f"`{name}` is not given")
        return param.default

    def source(self, name: str) -> int | str:
        arg = self.args.get(name)
        if arg is None:
            raise ManualPortError(f"`{name}` is not given")
        return arg.source

    def atom(self, name: str) -> str:
        """The argument's text, parenthesised unless it is an atom."""
        text = self.text(name)
        node = self.node(name)
        if node is None or isinstance(node, _ATOMS):
            return text
        return f"({text})"


_ATOMS = (
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Call,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.DictComp,
    ast.SetComp,
    ast.GeneratorExp,
)


def bind(entry: OpEntry, site: CallSite) -> Binding:
    """Match the call's arguments to the entry's TF parameters (or refuse)."""
    if site.has_star_args:
        raise ManualPortError(
            "the call passes *args/**kwargs, so its arguments cannot be matched statically",
            "spell the arguments out",
        )
    positional = [p for p in entry.params if not p.varargs]
    varargs = next((p for p in entry.params if p.varargs), None)
    if varargs is not None:
        positional = positional[: entry.params.index(varargs)]
    bound: dict[str, Arg] = {}
    star: list[int] = []
    for index, node in enumerate(site.args):
        if index < len(positional):
            bound[positional[index].name] = Arg(index, node)
        elif varargs is not None:
            star.append(index)
        else:
            raise ManualPortError(f"more positional arguments than {entry.symbol} takes")
    names = set(entry.param_names)
    for keyword, node in site.keywords.items():
        name = entry.legacy.get(keyword, keyword)
        if name not in names or (varargs is not None and name == varargs.name):
            raise ManualPortError(f"unknown argument `{keyword}=` for {entry.symbol}")
        if name in bound:
            raise ManualPortError(f"`{name}` is given twice")
        bound[name] = Arg(keyword, node)
    return Binding(entry, site, bound, star)


# ---------------------------------------------------------------------------
# Value translators (named in the table's ``out`` strings).
# ---------------------------------------------------------------------------


class _Omit:
    """A translator's answer: leave this argument out of the Keras call."""


OMIT = _Omit()
Translation = str | None | _Omit  # new text, None = keep the argument as written, OMIT


@dataclass
class Value:
    """What a translator sees: one argument of a bound call."""

    binding: Binding
    name: str
    node: ast.expr

    @property
    def site(self) -> CallSite:
        return self.binding.site

    @property
    def literal(self) -> Any:
        return self.site.module.literal(self.node)

    @property
    def text(self) -> str:
        return self.site.text(self.node)

    def refuse(self, why: str) -> ManualPortError:
        return ManualPortError(f"`{self.name}={self.text}` {why}")


def _t_dtype(value: Value) -> Translation:
    name = dtype_name(value.site, value.node)
    if name == "string":
        raise value.refuse("is a string dtype; keras.ops has no string tensors")
    if name is None or isinstance(value.node, ast.Constant):
        return None  # a string already, or an expression Keras standardizes (x.dtype)
    return py_literal(name)


def _t_none_to(value: Value, replacement: Any) -> Translation:
    return py_literal(replacement) if value.literal is None else None


def _t_lit(value: Value) -> Translation:
    if value.literal is NOT_LITERAL:
        raise value.refuse("is not a literal, and the rewrite depends on its value")
    return None


def _t_lower(value: Value, *allowed: str) -> Translation:
    literal = value.literal
    if not isinstance(literal, str) or literal.lower() not in allowed:
        raise value.refuse(f"is not one of {', '.join(a.upper() for a in allowed)}")
    return py_literal(literal.lower())


def _t_padding(value: Value) -> Translation:
    literal = value.literal
    if not isinstance(literal, str) or literal.upper() not in ("SAME", "VALID"):
        raise value.refuse('is not "SAME" or "VALID" (explicit paddings need ops.pad first)')
    return py_literal(literal.lower())


def _t_k_padding(value: Value) -> Translation:
    literal = value.literal
    if literal is NOT_LITERAL:
        return None  # keras.ops raises on anything but "valid"/"same": never silent
    if not isinstance(literal, str) or literal.lower() not in ("valid", "same"):
        raise value.refuse('is not "valid" or "same" ("causal" needs ops.pad first)')
    return None


_CHANNELS_LAST = ("NWC", "NHWC", "NDHWC", "N..C", "CHANNELS_LAST")
_CHANNELS_FIRST = ("NCW", "NCHW", "NCDHW", "NC..", "CHANNELS_FIRST")


def _channels_first(binding: Binding) -> bool:
    literal = binding.literal("data_format")
    return isinstance(literal, str) and literal.upper() in _CHANNELS_FIRST


def _t_data_format(value: Value) -> Translation:
    literal = value.literal
    if literal is None or (isinstance(literal, str) and literal.upper() in _CHANNELS_LAST):
        return py_literal("channels_last")
    if isinstance(literal, str) and literal.upper() in _CHANNELS_FIRST:
        return py_literal("channels_first")
    raise value.refuse("is not a literal data format")


def _t_window(value: Value, spatial: int) -> Translation:
    """strides / ksize / dilations: an int, a per-spatial-axis list, or TF's full-rank
    list whose batch and channel entries are 1 (``[1, s, s, 1]`` -> ``s``)."""
    literal = value.literal
    if literal is None:
        return OMIT
    if isinstance(literal, int) and not isinstance(literal, bool):
        return None
    if not isinstance(literal, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in literal
    ):
        raise value.refuse("is not a literal int or list of ints")
    items = list(literal)
    if spatial and len(items) == spatial + 2:
        if _channels_first(value.binding):
            outer, items = items[:2], items[2:]
        else:
            outer, items = [items[0], items[-1]], items[1:-1]
        if outer != [1, 1]:
            raise value.refuse("moves along the batch or channel axis")
    elif not (len(items) == 1 or (spatial and len(items) == spatial)):
        raise value.refuse("has a length that does not say which axes it covers")
    if len(set(items)) == 1:
        return str(items[0])
    return py_literal(tuple(items))


def _t_split(value: Value) -> Translation:
    """tf.split's sizes become keras.ops.split's cut indices."""
    literal = value.literal
    if isinstance(literal, int) and not isinstance(literal, bool):
        return None
    if not isinstance(literal, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in literal
    ):
        raise value.refuse(
            "is not a literal: tf.split takes sizes, keras.ops.split cut indices, so the "
            "value must be known"
        )
    sizes = list(literal)
    if any(v < 0 for v in sizes[:-1]) or (sizes and sizes[-1] < -1):
        raise value.refuse("has a -1 size before the last one")
    indices, total = [], 0
    for size in sizes[:-1]:
        total += size
        indices.append(total)
    return py_literal(indices)


def _t_sqrt_eps(value: Value) -> Translation:
    literal = value.literal
    if not isinstance(literal, (int, float)) or isinstance(literal, bool) or literal < 0:
        raise value.refuse("is not a literal number (its square root is written)")
    return py_literal(math.sqrt(literal))


def _t_not_none(value: Value) -> Translation:
    if value.literal is None:
        raise value.refuse("is None (no bound); keras.ops.clip needs both bounds")
    return None


def _t_qr_mode(value: Value) -> Translation:
    literal = value.literal
    if not isinstance(literal, bool):
        raise value.refuse("is not a literal bool")
    return py_literal("complete" if literal else "reduced")


# bicubic and area differ between backends (TF's Keys cubic a=-0.5, PyTorch's a=-0.75;
# no area on JAX) and PyTorch has no lanczos: found by the differential test.
_RESIZE_METHODS = {
    "bilinear": "bilinear",
    "nearest": "nearest",
    "nearest_neighbor": "nearest",
}


def _t_resize_method(value: Value) -> Translation:
    literal = value.literal
    if isinstance(literal, str):
        method = literal.lower()
    else:
        symbol = value.site.module.resolve(value.node) or ""
        prefix = "tf.image.ResizeMethod."
        method = symbol[len(prefix) :].lower() if symbol.startswith(prefix) else ""
    if method not in _RESIZE_METHODS:
        raise value.refuse(
            "is not a method keras.ops.image.resize computes like TensorFlow on every "
            "backend (bilinear, nearest)"
        )
    return py_literal(_RESIZE_METHODS[method])


def _t_norm_ord(value: Value) -> Translation:
    literal = value.literal
    if literal == "euclidean":
        return OMIT
    if literal == "fro" or (isinstance(literal, (int, float)) and not isinstance(literal, bool)):
        return None
    if value.site.module.resolve(value.node) in ("np.inf", "math.inf"):
        return None
    raise value.refuse("is not a literal norm order")


def _t_int_lit(value: Value) -> Translation:
    literal = value.literal
    if not isinstance(literal, int) or isinstance(literal, bool):
        raise value.refuse("is not a literal int")
    return None


def _t_sizes(value: Value) -> Translation:
    literal = value.literal
    if not isinstance(literal, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in literal
    ):
        raise value.refuse(
            "is not a literal list of non-negative sizes (TF's -1 'to the end' has no "
            "keras.ops.slice equivalent on every backend)"
        )
    return None


# Standard-library functions that always return one float.
_FLOAT_FUNCTIONS = frozenset(
    f"math.{name}"
    for name in ("sqrt", "exp", "log", "log2", "log10", "pow", "fabs", "sin", "cos", "tanh")
)


def _t_scalar(value: Value) -> Translation:
    literal = value.literal
    node = value.node
    if isinstance(node, ast.Call) and value.site.module.resolve(node.func) in _FLOAT_FUNCTIONS:
        return None  # math.sqrt(1.0 / units): a Python float whatever its argument
    if not isinstance(literal, (int, float)) or isinstance(literal, bool):
        raise value.refuse("is not a literal number (or a math.sqrt/exp/log... call)")
    return None


def _t_axes(value: Value) -> Translation:
    """A literal list of axes becomes a tuple (JAX needs hashable static axes)."""
    literal = value.literal
    if isinstance(literal, list):
        return py_literal(tuple(literal))
    return None


def _t_as_tensor(value: Value) -> Translation:
    """A literal list becomes a tensor (keras.ops.scatter on JAX needs an array)."""
    if isinstance(value.node, (ast.List, ast.Tuple)):
        return "{name:keras.ops.convert_to_tensor}(" + value.text + ")"
    return None


TRANSLATORS: dict[str, Callable[..., Translation]] = {
    "axes": _t_axes,
    "scalar": _t_scalar,
    "as_tensor": _t_as_tensor,
    "dtype": _t_dtype,
    "none_to": _t_none_to,
    "lit": _t_lit,
    "lower": _t_lower,
    "padding": _t_padding,
    "k_padding": _t_k_padding,
    "data_format": _t_data_format,
    "window": _t_window,
    "split": _t_split,
    "sqrt_eps": _t_sqrt_eps,
    "not_none": _t_not_none,
    "qr_mode": _t_qr_mode,
    "resize_method": _t_resize_method,
    "norm_ord": _t_norm_ord,
    "int_lit": _t_int_lit,
    "sizes": _t_sizes,
}


# ---------------------------------------------------------------------------
# Planning one call.
# ---------------------------------------------------------------------------


@dataclass
class Rewrite:
    """An automatic rewrite: the plan and the Keras name it writes."""

    plan: EditPlan
    target: str


_PARAM = re.compile(r"\{\((\w+)\)\}|\{(\w+)\}")
_NAME_SLOT = re.compile(r"\{name:([\w.]+)\}")


def plain_names(text: str) -> str:
    """Filled template text as a message shows it: ``{name:keras.ops.sum}`` -> ``keras.ops.sum``
    (the editor spells the name from the module's imports; a message names it in full)."""
    return _NAME_SLOT.sub(lambda match: match.group(1), text)


def fill_template(template: str, binding: Binding) -> str:
    """The template with each ``{p}`` replaced by argument ``p``'s source text."""

    def value(match: re.Match[str]) -> str:
        atom, plain = match.groups()
        return binding.atom(atom) if atom else binding.text(plain)

    return _PARAM.sub(value, qualify_names(template))


def _check_conditions(binding: Binding) -> None:
    entry = binding.entry
    for name in entry.needs:
        if not binding.given(name) or binding.literal(name) is None:
            raise ManualPortError(entry.reason or f"`{name}` is not given", entry.suggestion)
    for param in entry.checked:
        node = binding.node(param.name)
        if node is None:
            continue
        accepted = entry.accepted(param.name)
        literal = binding.site.module.literal(node)
        named = dtype_name(binding.site, node)
        if named is not None and named in accepted:
            continue
        if literal is not NOT_LITERAL and any(
            literal == v and type(literal) is not bool or literal is v for v in accepted
        ):
            continue
        shown = " or ".join(repr(v) for v in accepted) or "absent"
        reason = f"`{param.name}={binding.site.text(node)}` is not supported (only {shown})"
        if entry.reason and not entry.needs:
            reason = f"{reason}: {entry.reason}"
        raise ManualPortError(reason, entry.suggestion)


def _arg_out(binding: Binding, out: OutArg) -> list[ArgOut]:
    if out.param is None:
        return [ArgOut(None, out.keyword, out.literal)]
    if out.star:
        return [ArgOut(index) for index in binding.star]
    arg = binding.args.get(out.param)
    if arg is None:
        if out.default is not None:
            return [ArgOut(None, out.keyword, out.default)]
        if out.keyword is None and binding.entry.param(out.param).default is None:
            raise ManualPortError(f"`{out.param}` is not given")
        return []
    translated: Translation = None
    if out.translator:
        value = Value(binding, out.param, arg.node)
        translated = TRANSLATORS[out.translator](value, *out.translator_args)
    if translated is OMIT:
        return []
    return [ArgOut(arg.source, out.keyword, translated)]


def _table_rewrite(binding: Binding) -> Rewrite:
    entry = binding.entry
    _check_conditions(binding)
    if entry.template is not None:
        text = fill_template(entry.template, binding)
        return Rewrite(EditPlan((ReplaceNode(binding.site.span, text),)), plain_names(text))
    args: list[ArgOut] = []
    for out in entry.out:
        args.extend(_arg_out(binding, out))
    edit = CallEdit(binding.site.span, callee=entry.target, args=tuple(args))
    assert entry.target is not None
    return Rewrite(EditPlan((edit,)), entry.target)


# -- builders: entries whose mapping depends on argument values -----------------


def _call_text(callee: str, items: Iterable[tuple[str | None, str]]) -> str:
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
    _check_conditions(binding)
    args = []
    for operand, flag in (("a", "transpose_a"), ("b", "transpose_b")):
        arg = binding.args.get(operand)
        if arg is None:
            raise ManualPortError(f"`{operand}` is not given")
        value = None
        if _bool_flag(binding, flag):
            value = _call_text(
                "keras.ops.swapaxes", [(None, binding.text(operand)), (None, "-1"), (None, "-2")]
            )
        args.append(ArgOut(arg.source, None, value))
    edit = CallEdit(binding.site.span, callee="keras.ops.matmul", args=tuple(args))
    return Rewrite(EditPlan((edit,)), "keras.ops.matmul")


def _build_shape(binding: Binding) -> Rewrite:
    _check_conditions(binding)
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
    edit = CallEdit(binding.site.span, "keras.ops.shape", (ArgOut(binding.source(first)),))
    return Rewrite(EditPlan((edit,)), "keras.ops.shape")


def _top_k_items(binding: Binding) -> list[tuple[str | None, str]]:
    items: list[tuple[str | None, str]] = [(None, binding.text("input"))]
    items.append((None, binding.text("k") if binding.given("k") else "1"))
    if binding.given("sorted"):
        items.append(("sorted", binding.text("sorted")))
    return items


def _build_top_k(binding: Binding) -> Rewrite:
    _check_conditions(binding)
    site = binding.site
    parent = site.module.parent_of(site.node)
    if isinstance(parent, ast.Attribute) and parent.value is site.node:
        index = {"values": "0", "indices": "1"}.get(parent.attr)
        if index is None:
            raise ManualPortError(f"`.{parent.attr}` of a top_k result has no keras.ops equivalent")
        text = _call_text("keras.ops.top_k", _top_k_items(binding)) + f"[{index}]"
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
    _check_conditions(binding)
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
        inner = _call_text("keras.ops.tril", [(None, binding.text("input")), (None, str(upper))])
        text = _call_text("keras.ops.triu", [(None, inner), (None, str(-lower))])
        return Rewrite(EditPlan((ReplaceNode(site.span, text),)), "keras.ops.triu")
    return Rewrite(EditPlan((call,)), call.callee or "")


def _build_sort(binding: Binding) -> Rewrite:
    _check_conditions(binding)
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
    inner = _call_text(target, [(None, binding.text("values")), ("axis", axis)])
    text = _call_text("keras.ops.flip", [(None, inner), ("axis", axis)])
    return Rewrite(EditPlan((ReplaceNode(site.span, text),)), target)


def _build_scan(binding: Binding) -> Rewrite:
    _check_conditions(binding)
    reverse = binding.literal("reverse")
    if reverse is not MISSING and not isinstance(reverse, bool):
        raise ManualPortError("`reverse` is not a literal True/False")
    step = (
        "lambda _acc, _elem: (lambda _new: (_new, _new))(" + binding.atom("fn") + "(_acc, _elem))"
    )
    items = [(None, step), (None, binding.text("initializer")), (None, binding.text("elems"))]
    if reverse is True:
        items.append(("reverse", "True"))
    text = _call_text("keras.ops.scan", items) + "[1]"
    return Rewrite(EditPlan((ReplaceNode(binding.site.span, text),)), "keras.ops.scan")


def _build_window(binding: Binding) -> Rewrite:
    _check_conditions(binding)
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
    _check_conditions(binding)
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


def _build_name_scope(binding: Binding) -> Rewrite:
    """``with tf.name_scope("block"):`` -> ``with keras.name_scope("block"):``."""
    _check_conditions(binding)
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
    """K.batch_dot -> ops.einsum with subscripts for the ranks the code states."""
    _check_conditions(binding)
    site = binding.site
    ranks = [static_rank(site, binding.node(name)) for name in ("x", "y")]
    if None in ranks:
        unknown = list(dict.fromkeys(f"`{binding.text(n)}`" for n, r in zip("xy", ranks) if not r))
        which = f"rank of {unknown[0]} is"
        if len(unknown) == 2:
            which = f"ranks of {unknown[0]} and {unknown[1]} are"
        raise ManualPortError(
            f"the {which} not stated in the code (a literal reshape, permute_dimensions or "
            "keras.Input shape), and K.batch_dot's result layout depends on both ranks"
        )
    x_rank, y_rank = ranks
    if x_rank < 2 or y_rank < 2:
        raise ManualPortError("an input of rank < 2 (K.batch_dot raises on it)")
    axes = binding.literal("axes") if binding.given("axes") else None
    pair = batch_dot_axes(axes, x_rank, y_rank)
    if pair is None:
        raise ManualPortError(
            "`axes` is not a literal int or pair of non-batch axes within both ranks"
        )
    subscripts, keep = einsum_subscripts(x_rank, y_rank, pair)
    items = [(None, py_literal(subscripts)), (None, binding.text("x")), (None, binding.text("y"))]
    text = _call_text("keras.ops.einsum", items)
    if keep:
        text = _call_text("keras.ops.expand_dims", [(None, text), (None, "-1")])
    return Rewrite(EditPlan((ReplaceNode(site.span, text),)), plain_names(text))


def _int_list(value: Any) -> list[int] | None:
    if not isinstance(value, (list, tuple)):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return list(value)


def _build_slice(binding: Binding) -> Rewrite:
    """tf.slice -> ops.slice, or a subscript where `size` says 'to the end' (-1)."""
    _check_conditions(binding)
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


BUILDERS: dict[str, Callable[[Binding], Rewrite]] = {
    "slice": _build_slice,
    "batch_dot": _build_batch_dot,
    "name_scope": _build_name_scope,
    "fill": _build_fill,
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
        if entry.builder:
            return BUILDERS[entry.builder](binding)
        return _table_rewrite(binding)
    except ManualPortError as manual:
        if not manual.suggestion:
            manual.suggestion = entry.suggestion or _default_suggestion(entry)
        return manual


def _default_suggestion(entry: OpEntry) -> str:
    target = entry.target or "keras.ops"
    return f"port the call by hand to {target} (see `kmigrate explain {entry.symbol}`)"


# ---------------------------------------------------------------------------
# The rules.
# ---------------------------------------------------------------------------

_CATALOG_SYMBOLS = frozenset(s for s in by_symbol() if lookup(s).builder != "variable")
_VARIABLE_SYMBOLS = frozenset(s for s in by_symbol() if lookup(s).builder == "variable")

# KM201 and KM202 see the same call sites: the plan is made once per call, kept with
# the module (so nothing outlives the module's analysis). The callee nodes of the
# catalog calls are kept too: the walker visits a call before its callee, so a
# reference that is a callee is skipped.
_PLANS = "KM2-plans"
_CALLEES = "KM2-callees"


def _plan_for(site: CallSite) -> tuple[OpEntry, Rewrite | ManualPortError] | None:
    site.module.memo(_CALLEES, set).add(id(site.node.func))  # type: ignore[attr-defined]
    plans: dict[int, Any] = site.module.memo(_PLANS, dict)
    key = id(site.node)
    if key not in plans:
        entry = lookup(site.symbol)
        plans[key] = None if entry is None else (entry, plan_call(entry, site))
    return plans[key]


def _passed_function(site: ReferenceSite) -> OpEntry | None:
    """The catalog entry of a TF function used as a value (``activation=tf.nn.relu``)."""
    if site.context is not Context.MODEL:
        return None
    entry = lookup(site.symbol)
    if entry is None or entry.builder == "variable":
        return None
    if id(site.node) in site.module.memo(_CALLEES, set):
        return None  # the callee of a call: check_call reported the call
    parent = site.module.parent_of(site.node)
    if isinstance(parent, ast.Call) and parent.func is site.node:
        return None  # a call no rule selected here; not a function passed around
    return entry


_REFERENCE_PREFIXES = ("tf.", "K.")


_OUTSIDE = (
    " (outside model code: TensorFlow runs it as it is; convert it if it runs inside a "
    "model on another backend)"
)


class _CatalogRule(Rule):
    """What KM201 and KM202 share: both read the catalog's plan of every catalog call
    (and function reference) in model code; KM201 reports the rewrites, KM202 the rest."""

    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL, Context.OTHER})
    call_symbols = _CATALOG_SYMBOLS
    reference_prefixes = _REFERENCE_PREFIXES


class TfOpToKerasOps(_CatalogRule):
    id = "KM201"
    name = "tf-op-to-keras-ops"
    summary = "A TensorFlow or Keras 2 backend op in model code that has an exact keras.ops form."
    rationale = (
        "Keras 3 runs a layer's call() on TensorFlow, JAX or PyTorch tensors; tf.* and "
        "tf.keras.backend functions only accept TensorFlow tensors (and the K.* functions "
        "are gone from Keras 3). keras.ops is the NumPy-style API every backend implements."
    )
    fix_safety = (
        "The rewrite is exact: arguments are mapped through TensorFlow's real signature "
        '(positional or keyword, old keyword names), values are translated ("SAME" -> '
        '"same", tf.float32 -> "float32", [1, s, s, 1] -> s, split sizes -> split '
        "indices) and defaults that differ are written out (tf.argmax axis=0, "
        "approximate=False for tf.nn.gelu, K.concatenate axis=-1). When a value the rewrite "
        "depends on is not a literal, the call is left alone and KM202 says why. Every "
        "automatic catalog entry is proven by a differential test on the tensorflow, jax "
        "and torch backends. Only model code (layers, models, losses, metrics and what they "
        "call) is rewritten."
    )
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class RMSNorm(keras.layers.Layer):
                def call(self, x):
                    ms = tf.reduce_mean(tf.square(x), axis=-1, keep_dims=True)
                    return x * tf.math.rsqrt(ms + 1e-6)
            """,
            """
            from tensorflow import keras
            from keras import ops


            class RMSNorm(keras.layers.Layer):
                def call(self, x):
                    ms = ops.mean(ops.square(x), axis=-1, keepdims=True)
                    return x * ops.rsqrt(ms + 1e-6)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Heads(keras.layers.Layer):
                def call(self, qkv):
                    q, k, v = tf.split(qkv, 3, axis=-1)
                    a, b = tf.split(v, [8, 24], axis=-1)
                    scores = tf.matmul(q, k, transpose_b=True)
                    top = tf.argmax(a)
                    return tf.nn.gelu(scores), top, tf.cast(b, tf.float32)
            """,
            """
            from tensorflow import keras
            from keras import ops


            class Heads(keras.layers.Layer):
                def call(self, qkv):
                    q, k, v = ops.split(qkv, 3, axis=-1)
                    a, b = ops.split(v, [8], axis=-1)
                    scores = ops.matmul(q, ops.swapaxes(k, -1, -2))
                    top = ops.argmax(a, axis=0)
                    return ops.gelu(scores, approximate=False), top, ops.cast(b, "float32")
            """,
        ),
        Flagged(
            """
            import keras
            from tensorflow.keras import backend as K


            def rmse(y_true, y_pred):
                err = K.square(y_pred - y_true)
                return K.sqrt(K.mean(err, axis=-1) + K.epsilon())


            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(loss=rmse)
            """,
            """
            import keras


            def rmse(y_true, y_pred):
                err = keras.ops.square(y_pred - y_true)
                return keras.ops.sqrt(keras.ops.mean(err, axis=-1) + keras.config.epsilon())


            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(loss=rmse)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            import keras


            def build_model():
                inputs = keras.Input(shape=(8,))
                x = keras.layers.Dense(16, activation=tf.nn.leaky_relu)(inputs)
                return keras.Model(inputs, keras.layers.Lambda(tf.math.square)(x))
            """,
            """
            import keras


            def build_model():
                inputs = keras.Input(shape=(8,))
                x = keras.layers.Dense(16, activation=keras.ops.leaky_relu)(inputs)
                return keras.Model(inputs, keras.layers.Lambda(keras.ops.square)(x))
            """,
        ),
        Clean(
            """
            import tensorflow as tf


            def preprocess(image, label):
                return tf.image.resize(image, (32, 32)), tf.cast(label, tf.int64)


            ds = tf.data.Dataset.from_tensor_slices(([0.0], [1])).map(preprocess)
            """
        ),
        Clean(
            """
            from keras import layers, ops


            class Scale(layers.Layer):
                def call(self, x):
                    tf = ops  # a local name `tf` is not TensorFlow
                    return tf.mean(x, axis=-1)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        found = _plan_for(site)
        if found is None or not isinstance(found[1], Rewrite):
            return
        entry, rewrite = found
        more = f" (see `kmigrate explain {site.symbol}`)" if entry.note else ""
        if site.context is Context.MODEL:
            message = f"`{site.symbol}` is TensorFlow-only: use `{rewrite.target}`{more}"
            yield Report(site, message, fix=rewrite.plan)
        else:
            message = f"`{site.symbol}` has a Keras 3 form, `{rewrite.target}`{_OUTSIDE}"
            yield Report(site, message, severity=Severity.INFO)

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        entry = _passed_function(site)
        if entry is None or not entry.renames_only:
            return
        assert entry.target is not None
        fix = EditPlan((ReplaceNode(site.span, "{name:" + entry.target + "}"),))
        message = (
            f"`{site.symbol}` passed as a function only accepts TensorFlow tensors: "
            f"pass `{entry.target}`"
        )
        yield Report(site, message, fix=fix)


class TfOpManualPort(_CatalogRule):
    id = "KM202"
    name = "tf-op-manual-port"
    summary = "A TensorFlow op in model code with no exact keras.ops rewrite at this call."
    rationale = (
        "The op (or this use of it) has no keras.ops equivalent with the same numbers on "
        "every backend: a different convention (complex tensors, sizes versus indices, "
        "int64 index matrices), a data-dependent shape JAX cannot trace, or an argument "
        "whose value decides the rewrite but is not a literal."
    )
    fix_safety = (
        "Never rewritten automatically: the finding says why and suggests the portable "
        "code to write. `kmigrate explain <symbol>` shows the catalog entry."
    )
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Positions(keras.layers.Layer):
                def call(self, mask):
                    return tf.where(mask)
            """
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Split(keras.layers.Layer):
                def __init__(self, sizes, **kwargs):
                    super().__init__(**kwargs)
                    self.sizes = sizes

                def call(self, x):
                    return tf.split(x, self.sizes, axis=-1)
            """
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Spectrum(keras.layers.Layer):
                def call(self, x):
                    return tf.abs(tf.signal.rfft(x))
            """
        ),
        Clean(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Split(keras.layers.Layer):
                def call(self, x):
                    return tf.split(x, 2, axis=-1)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        found = _plan_for(site)
        if found is None or not isinstance(found[1], ManualPortError):
            return
        entry, manual = found
        message = f"`{site.symbol}` has no exact Keras 3 rewrite here: "
        message += manual.reason.rstrip(".")
        if manual.suggestion:
            message += f". Instead: {manual.suggestion.rstrip('.')}"
        if site.context is Context.MODEL:
            yield Report(site, message)
        else:
            yield Report(site, message + _OUTSIDE, severity=Severity.INFO)

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        entry = _passed_function(site)
        if entry is None or entry.renames_only:
            return
        if entry.automatic:
            why = (
                "called with one argument, its keras.ops form needs other arguments or "
                "defaults (see `kmigrate explain " + site.symbol + "`)"
            )
            instead = "pass a small function, e.g. `lambda t: ...` calling the rewritten op"
        else:
            why, instead = entry.reason.rstrip("."), entry.suggestion.rstrip(".")
        yield Report(
            site,
            f"`{site.symbol}` is used as a value (passed as a function or type) and works "
            f"only with TensorFlow tensors; it has no drop-in keras.ops replacement: {why}. "
            f"Instead: {instead}",
        )


# -- KM203: state ------------------------------------------------------------------

_LAYER_BASE_HINTS = ("Layer", "Model", "Sequential", "Metric", "Block")
_SHAPED_INITIAL = {
    "tf.zeros": '"zeros"',
    "tf.ones": '"ones"',
    "np.zeros": '"zeros"',
    "np.ones": '"ones"',
}
_TF_INITIALIZERS = {
    "tf.zeros_initializer": '"zeros"',
    "tf.ones_initializer": '"ones"',
    "tf.compat.v1.zeros_initializer": '"zeros"',
    "tf.compat.v1.ones_initializer": '"ones"',
}


def _state_owner_ok(site: CallSite) -> bool:
    scope = site.scope
    if scope.class_node is None or scope.function_name not in ("__init__", "build"):
        return False
    bases = list(scope.class_bases) + [
        b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "")
        for b in scope.class_node.bases
    ]
    return any(
        b.rsplit(".", 1)[-1].endswith(_LAYER_BASE_HINTS) or ".layers." in b or ".metrics." in b
        for b in bases
    )


def _shape_text(site: CallSite, node: ast.expr) -> str:
    """A shape add_weight accepts: a tuple or list (written here, or in every assignment
    of the ``self`` attribute or local name that holds it), or an int literal as ``(n,)``.
    Anything else may hold an int, which tf.zeros takes and add_weight refuses."""
    literal = site.module.literal(node)
    if isinstance(literal, int) and not isinstance(literal, bool):
        return f"({literal},)"
    if all(isinstance(value, (ast.Tuple, ast.List)) for value in _assigned_values(site, node)):
        return site.text(node)
    raise ManualPortError("the shape is not known to be a tuple or list")


def _assigned_values(site: CallSite, node: ast.expr) -> list[ast.expr]:
    """``node`` itself, or every value assigned to the ``self.x`` / local name it reads
    (in the class / function); a non-empty list, or ``[node]`` when unknown."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner, wanted = site.scope.class_node, ("self", node.attr)
    elif isinstance(node, ast.Name):
        owner, wanted = site.scope.function_node, (None, node.id)
    else:
        return [node]
    values: list[ast.expr] = []
    for item in ast.walk(owner) if owner is not None else ():
        if isinstance(item, ast.AugAssign | ast.AnnAssign | ast.For | ast.arg):
            if _names(getattr(item, "target", None)) == wanted or (
                isinstance(item, ast.arg) and wanted == (None, item.arg)
            ):
                return [node]
        if isinstance(item, ast.Assign):
            for target in item.targets:
                if _names(target) == wanted:
                    values.append(item.value)
                elif any(_names(t) == wanted for t in ast.walk(target) if t is not target):
                    return [node]  # unpacked: the value is not known
    return values or [node]


def _names(node: ast.AST | None) -> tuple[str | None, str] | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return (node.value.id, node.attr)
    if isinstance(node, ast.Name):
        return (None, node.id)
    return None


def _initializer(site: CallSite, node: ast.expr) -> tuple[str, str, str | None]:
    """(shape text, initializer text, dtype text or None) for an initial value."""
    module = site.module
    literal = module.literal(node)
    if isinstance(literal, (bool, int, float)) and literal is not NOT_LITERAL:
        if isinstance(literal, bool):
            dtype = '"bool"'
        elif isinstance(literal, int):
            dtype = '"int32"'
        else:
            dtype = None
        if literal == 0:
            init = '"zeros"'
        elif literal == 1:
            init = '"ones"'
        else:
            init = "{name:keras.initializers.Constant}(" + site.text(node) + ")"
        return "()", init, dtype
    if isinstance(node, ast.Call):
        symbol = module.resolve(node.func) or ""
        if symbol in _SHAPED_INITIAL and node.args:
            dtype_node = node.args[1] if len(node.args) > 1 else None
            for keyword in node.keywords:
                if keyword.arg == "dtype":
                    dtype_node = keyword.value
            if any(k.arg not in ("shape", "dtype") for k in node.keywords) or len(node.args) > 2:
                raise ManualPortError("the initial value has arguments add_weight cannot take")
            dtype = '"float64"' if symbol.startswith("np.") else None  # NumPy's default
            if dtype_node is not None:
                named = dtype_name(site, dtype_node)
                dtype = py_literal(named) if named else site.text(dtype_node)
            return _shape_text(site, node.args[0]), _SHAPED_INITIAL[symbol], dtype
        if isinstance(node.func, ast.Call):
            maker = module.resolve(node.func.func) or ""
            shape = node.args[0] if node.args else None
            for keyword in node.keywords:
                if keyword.arg == "shape":
                    shape = keyword.value
            extra = [k.arg for k in node.keywords if k.arg not in ("shape", "dtype")]
            if shape is not None and not extra:
                if maker in _TF_INITIALIZERS:
                    return site.text(shape), _TF_INITIALIZERS[maker], None
                if ".initializers." in maker and maker.startswith(("tf.keras.", "keras.")):
                    return site.text(shape), site.text(node.func), None
    raise ManualPortError(
        "its initial value is not tf.zeros/tf.ones(shape), a number, or a Keras "
        "initializer called with a shape, so add_weight's initializer cannot be derived",
        'self.add_weight(shape=..., initializer="zeros" | keras.initializers.X(), '
        "trainable=...) in build(); assign a computed value with .assign()",
    )


def plan_variable(site: CallSite) -> Rewrite | ManualPortError:
    """``self.w = tf.Variable(...)`` in a layer's __init__/build -> ``self.add_weight``."""
    entry = lookup(site.symbol)
    assert entry is not None
    suggestion = "self.w = self.add_weight(shape=..., initializer=..., trainable=...) in build()"
    try:
        binding = bind(entry, site)
        parent = site.module.parent_of(site.node)
        target_ok = (
            isinstance(parent, ast.Assign)
            and parent.value is site.node
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Attribute)
            and isinstance(parent.targets[0].value, ast.Name)
            and parent.targets[0].value.id == "self"
        )
        if not (target_ok and _state_owner_ok(site)):
            raise ManualPortError(
                "Keras 3 tracks (and saves) only state created with self.add_weight in a "
                "layer's __init__ or build, assigned to an attribute",
                suggestion,
            )
        value_name = "initial_value" if "initial_value" in entry.param_names else "value"
        allowed = {value_name, "trainable", "name", "dtype", "constraint"}
        extra = sorted(set(binding.args) - allowed)
        if extra:
            raise ManualPortError(f"`{extra[0]}=` has no add_weight equivalent", suggestion)
        node = binding.node(value_name)
        if node is None:
            raise ManualPortError("no initial value", suggestion)
        try:
            shape, init, dtype = _initializer(site, node)
        except ManualPortError as underivable:
            return _keras_variable(binding, value_name, underivable)
        if binding.given("dtype"):
            named = dtype_name(site, binding.node("dtype"))
            dtype = py_literal(named) if named else binding.text("dtype")
        if entry.symbol == "K.variable" and not binding.given("dtype"):
            dtype = None  # K.variable casts to floatx, like add_weight's default
        trainable = binding.text("trainable") if binding.given("trainable") else None
        if trainable in (None, "None") and dtype not in (
            None,
            '"float16"',
            '"float32"',
            '"float64"',
            '"bfloat16"',
        ):
            trainable = "False"  # TF variables of ints are never trained
        items = [("shape", shape), ("initializer", init)]
        items += [(k, v) for k, v in (("dtype", dtype), ("trainable", trainable)) if v]
        for keyword in ("name", "constraint"):
            if binding.given(keyword):
                items.append((keyword, binding.text(keyword)))
        text = "self.add_weight(" + ", ".join(f"{k}={v}" for k, v in items) + ")"
        return Rewrite(EditPlan((ReplaceNode(site.span, text),)), "self.add_weight")
    except ManualPortError as manual:
        manual.suggestion = manual.suggestion or suggestion
        return manual


_FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16"})
_FLOATX_CALLS = frozenset({"K.floatx", "keras.config.floatx", "keras.backend.floatx"})


def _variable_dtype(binding: Binding) -> str | None:
    """The dtype a keras.Variable must be given to hold what the TF variable held."""
    if binding.given("dtype"):
        node = binding.node("dtype")
        named = dtype_name(binding.site, node)
        if named is not None:
            return named
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            if binding.site.module.resolve(node.func) in _FLOATX_CALLS:
                return "floatx"
        return None
    if binding.entry.symbol == "K.variable":
        return "floatx"
    value = binding.node("initial_value")
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        if binding.site.module.resolve(value.func) in ("tf.zeros", "tf.ones"):
            return "float32"  # their default dtype
    return None


def _keras_variable(binding: Binding, value_name: str, underivable: ManualPortError) -> Rewrite:
    """``self.v = tf.Variable(value, ...)`` -> ``self.v = keras.Variable(value, ...)`` when
    add_weight's initializer cannot be derived from the value: a keras.Variable assigned
    to a layer attribute is tracked, trained and saved like an add_weight weight."""
    if binding.given("constraint"):
        raise underivable  # keras.Variable has no constraint; add_weight needs the initializer
    dtype = _variable_dtype(binding)
    if dtype is None:
        raise ManualPortError(
            "its dtype is not written: tf.Variable takes the value's dtype (float64 for a "
            "NumPy float array), keras.Variable on JAX makes such a value float32",
            "self.w = keras.Variable(value, dtype=...) with the dtype written out, or "
            "self.add_weight(shape=..., initializer=...)",
        )
    items = [(None, binding.text(value_name))]
    items.append(
        ("dtype", "{name:keras.config.floatx}()" if dtype == "floatx" else py_literal(dtype))
    )
    trainable = binding.text("trainable") if binding.given("trainable") else None
    if trainable in (None, "None") and dtype not in _FLOAT_DTYPES | {"floatx"}:
        trainable = "False"  # TF never trains integer or bool variables
    if trainable not in (None, "None"):
        items.append(("trainable", trainable))
    if binding.given("name"):
        name = binding.literal("name")
        if not isinstance(name, str) or "/" in name:
            raise ManualPortError(
                "`name` is not a literal string without '/' (keras.Variable raises on '/')",
                "self.w = keras.Variable(value, dtype=..., name=...) with a plain name",
            )
        items.append(("name", binding.text("name")))
    text = _call_text("keras.Variable", items)
    return Rewrite(EditPlan((ReplaceNode(binding.site.span, text),)), "keras.Variable")


class TfVariableInLayer(Rule):
    id = "KM203"
    name = "tf-variable-in-layer"
    summary = "A tf.Variable / K.variable created inside model code."
    rationale = (
        "A tf.Variable is TensorFlow state: JAX and PyTorch cannot use it, and Keras 3 "
        "neither trains nor saves it. Layer state is created with self.add_weight(), which "
        "makes a backend variable that the layer tracks, trains (if trainable) and saves."
    )
    fix_safety = (
        "Rewritten when it is `self.x = tf.Variable(init, ...)` in __init__ or build of a "
        "layer/model/metric. An initial value that is tf.zeros(shape)/tf.ones(shape), a "
        "number, or an initializer called with a shape becomes `self.add_weight` with the "
        "same initial value, trainability, name, dtype and constraint. Any other value "
        "becomes `keras.Variable(value, dtype=...)` (tracked, trained and saved by the "
        "layer like an add_weight weight) when the dtype is known: written in the call, "
        "floatx for K.variable; a name must be a literal without '/'. Integer and bool "
        "variables get trainable=False (TensorFlow computes no gradient for them). Other "
        "variables are reported."
    )
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL})
    call_symbols = _VARIABLE_SYMBOLS
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Counter(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.count = tf.Variable(0.0, trainable=False)

                def build(self, input_shape):
                    self.scale = tf.Variable(tf.ones((input_shape[-1],)))

                def call(self, x):
                    return x * self.scale
            """,
            """
            from tensorflow import keras


            class Counter(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.count = self.add_weight(shape=(), initializer="zeros", trainable=False)

                def build(self, input_shape):
                    self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones")

                def call(self, x):
                    return x * self.scale
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras
            from tensorflow.keras import backend as K


            class Lookup(keras.layers.Layer):
                def __init__(self, table, **kwargs):
                    super().__init__(**kwargs)
                    self.table = tf.Variable(table, trainable=False, dtype=tf.float32)
                    self.bias = K.variable(table[0], name="bias")

                def call(self, x):
                    return x * self.table + self.bias
            """,
            """
            from tensorflow import keras


            class Lookup(keras.layers.Layer):
                def __init__(self, table, **kwargs):
                    super().__init__(**kwargs)
                    self.table = keras.Variable(table, dtype="float32", trainable=False)
                    self.bias = keras.Variable(table[0], dtype=keras.config.floatx(), name="bias")

                def call(self, x):
                    return x * self.table + self.bias
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Noisy(keras.layers.Layer):
                def call(self, x):
                    state = tf.Variable(x)
                    return state * 2.0
            """
        ),
        Clean(
            """
            import tensorflow as tf


            step = tf.Variable(0, trainable=False)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        result = plan_variable(site)
        if isinstance(result, Rewrite):
            yield Report(
                site,
                f"`{site.symbol}` in a layer is TensorFlow state: create it with "
                f"`{result.target}(...)`, which the layer tracks and saves",
                fix=result.plan,
            )
        else:
            yield Report(
                site,
                f"`{site.symbol}` in model code is TensorFlow state that Keras 3 does not "
                f"track: {result.reason}. Instead: {result.suggestion}",
            )


# -- KM204: dtype constants and shape helpers -------------------------------------

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
        "x.shape.as_list() -> list(x.shape) and input_shape.as_list() -> list(input_shape) "
        "in build(); x.get_shape() -> x.shape. A dtype compared with == is reported instead "
        "(x.dtype is a torch.dtype on PyTorch, which never equals a string): compare "
        'keras.backend.standardize_dtype(x.dtype) == "float32".'
    )
    severity = Severity.WARNING
    contexts = frozenset({Context.MODEL})
    reference_prefixes = _DTYPE_PREFIXES
    method_names = frozenset({"as_list", "get_shape"})
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
                    return x * self.w / n
            """,
            """
            from tensorflow import keras


            class Pool(keras.layers.Layer):
                def build(self, input_shape):
                    dims = list(input_shape)
                    self.w = self.add_weight(shape=(dims[-1],), dtype="float32")

                def call(self, x):
                    n = list(x.shape)[-1]
                    return x * self.w / n
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

    def check_call(self, site: CallSite) -> Iterable[Report]:
        receiver = site.receiver
        if receiver is None or site.args or site.keywords:
            return
        method = site.symbol.rpartition(".")[2]
        if method == "get_shape":
            text = site.text(receiver)
            if not isinstance(receiver, _ATOMS):
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
        elif isinstance(receiver, ast.Name) and _is_build_input_shape(site, receiver.id):
            shape_text = receiver.id
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


def _is_build_input_shape(site: CallSite, name: str) -> bool:
    function = site.scope.function_node
    if site.scope.function_name != "build" or not isinstance(function, ast.FunctionDef):
        return False
    params = function.args.args
    return len(params) >= 2 and params[1].arg == name
