"""The value translators the catalog's ``out`` strings name (``"SAME"`` -> ``"same"``,
``tf.float32`` -> ``"float32"``); each refuses with a reason when it cannot be exact.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kmigrate.engine import NOT_LITERAL, CallSite
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError
from kmigrate.rules.common.dtypes import dtype_name
from kmigrate.rules.ops_catalog import py_literal


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
