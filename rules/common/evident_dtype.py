"""The dtype a TensorFlow value has by how it is written, without running it.

``tf.Variable(value)`` takes the value's dtype; ``keras.Variable`` must be told it, since on
JAX and PyTorch the same value may come out another width. Only forms whose dtype
TensorFlow fixes are read: Python number literals and lists of them (int32, float32, bool),
``tf.zeros``/``tf.ones``/``tf.constant`` (their ``dtype=`` or their default), and
``+``/``-``/``*`` of such a value with a number literal (TensorFlow keeps the tensor's
dtype; an int tensor times a float literal raises, so it is not read). Anything else:
unknown (None), never a guess.
"""

from __future__ import annotations

import ast

from kmigrate.engine import NOT_LITERAL, Node
from kmigrate.rules.common.dtypes import dtype_name

_FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16"})
# tf.zeros/tf.ones default to float32 whatever Keras's floatx is; tf.constant takes the
# value's dtype.
_FILLED = frozenset({"tf.zeros", "tf.ones"})
_SAME_DTYPE_OPERATORS = (ast.Add, ast.Sub, ast.Mult)


def literal_dtype(value: object) -> str | None:
    """TensorFlow's dtype for a Python literal: bool, int32, float32 (lists: the widest,
    as ``tf.constant`` reads them; a mix of bools and numbers is an error there)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int32" if -(2**31) <= value < 2**31 else None
    if isinstance(value, float):
        return "float32"
    if isinstance(value, (list, tuple)) and value:
        kinds = {literal_dtype(item) for item in value}
        if None in kinds or ("bool" in kinds and len(kinds) > 1):
            return None
        return "float32" if "float32" in kinds else kinds.pop()
    return None


def evident_dtype(site: Node, node: ast.expr) -> str | None:
    """The dtype TensorFlow gives ``node``'s value, when the text fixes it; else None."""
    literal = site.module.literal(node)
    if literal is not NOT_LITERAL:
        return literal_dtype(literal)
    if isinstance(node, ast.Call):
        return _call_dtype(site, node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return evident_dtype(site, node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _SAME_DTYPE_OPERATORS):
        left, right = evident_dtype(site, node.left), evident_dtype(site, node.right)
        if site.module.literal(node.right) is not NOT_LITERAL:
            return _with_number(left, right)
        if site.module.literal(node.left) is not NOT_LITERAL:
            return _with_number(right, left)
        return left if left is not None and left == right and left != "bool" else None
    return None


def _with_number(tensor: str | None, number: str | None) -> str | None:
    """A tensor's dtype combined with a Python number: the tensor's, where TF allows it."""
    if tensor is None or number is None or "bool" in (tensor, number):
        return None
    if tensor in _FLOAT_DTYPES or number == "int32":
        return tensor
    return None  # an int tensor and a float literal: TensorFlow raises


def _call_dtype(site: Node, node: ast.Call) -> str | None:
    symbol = site.module.resolve(node.func)
    if symbol not in _FILLED and symbol != "tf.constant":
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return None
    dtype_node = node.args[1] if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg == "dtype":
            dtype_node = keyword.value
    if dtype_node is not None:
        if isinstance(dtype_node, ast.Constant) and dtype_node.value is None:
            dtype_node = None
        else:
            return dtype_name(site, dtype_node)
    if symbol in _FILLED:
        return "float32"
    value = node.args[0] if node.args else None
    for keyword in node.keywords:
        if keyword.arg == "value":
            value = keyword.value
    return literal_dtype(site.module.literal(value)) if value is not None else None
