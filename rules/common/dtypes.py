"""Dtype names as Keras spells them, and reading one from ``tf.float32``, ``np.float32`` or
``"float32"``: one table for every family.
"""

from __future__ import annotations

import ast

from kmigrate.engine import Node

# Real-valued dtypes: what a random draw (KM3xx) can produce.
REAL_DTYPE_NAMES = frozenset(
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
    }
)
# Every dtype name an op argument can carry (KM2xx).
DTYPE_NAMES = REAL_DTYPE_NAMES | {"complex64", "complex128", "string"}
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
