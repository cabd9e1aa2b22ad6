"""``K.batch_dot(x, y, axes)`` as ``keras.ops.einsum`` when both ranks are known.

K.batch_dot contracts axis ``axes[0]`` of ``x`` with axis ``axes[1]`` of ``y`` for each
batch entry; the result keeps the batch axis, then ``x``'s other axes, then ``y``'s, in
order, except that two rank-2 inputs give shape ``(batch, 1)``. Which subscripts say
that depends on the ranks, so the rewrite needs them statically: from a literal shape
(``K.reshape(t, (b, n, d))``, ``K.permute_dimensions(t, (0, 2, 1))``,
``keras.Input(shape=(n, d))``), directly or through a local name bound once.
"""

from __future__ import annotations

import ast
import string

from kmigrate.engine import CallSite

# Calls whose result rank is the length of a literal argument: symbol -> (position, keyword).
_RANK_FROM_LITERAL: dict[str, tuple[int, str]] = {
    "tf.reshape": (1, "shape"),
    "K.reshape": (1, "shape"),
    "keras.ops.reshape": (1, "newshape"),
    "tf.transpose": (1, "perm"),
    "K.permute_dimensions": (1, "pattern"),
    "keras.ops.transpose": (1, "axes"),
}
# keras.Input(shape=(n, d)) has rank len(shape) + 1 (the batch axis).
_INPUTS = ("keras.Input", "keras.layers.Input", "tf.keras.Input", "tf.keras.layers.Input")


def static_rank(site: CallSite, node: ast.expr, depth: int = 0) -> int | None:
    """The rank of ``node`` when the code states it, else None."""
    module = site.module
    if isinstance(node, ast.Name) and depth < 3:
        value = single_binding(site, node.id)
        return None if value is None else static_rank(site, value, depth + 1)
    if not isinstance(node, ast.Call):
        return None
    symbol = module.resolve(node.func) or ""
    if symbol in _RANK_FROM_LITERAL:
        position, keyword = _RANK_FROM_LITERAL[symbol]
        literal = _argument(node, position, keyword)
        return _length(literal)
    if symbol in _INPUTS:
        length = _length(_argument(node, 0, "shape"))
        return None if length is None else length + 1
    if symbol == "keras.ops.einsum" and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            _, arrow, out = first.value.partition("->")
            return len(out.strip()) if arrow and "." not in out else None
    if symbol == "K.batch_dot" and len(node.args) >= 2 and depth < 3:
        x_rank = static_rank(site, node.args[0], depth + 1)
        y_rank = static_rank(site, node.args[1], depth + 1)
        if x_rank is None or y_rank is None:
            return None
        return 2 if x_rank == y_rank == 2 else x_rank + y_rank - 3
    return None


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    return call.args[position] if position < len(call.args) else None


def _length(node: ast.expr | None) -> int | None:
    if isinstance(node, (ast.Tuple, ast.List)) and not any(
        isinstance(e, ast.Starred) for e in node.elts
    ):
        return len(node.elts)
    return None


def single_binding(site: CallSite, name: str) -> ast.expr | None:
    """The value ``name`` is bound to, if the enclosing function binds it once, by a
    plain assignment."""
    function = site.scope.function_node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    value: ast.expr | None = None
    count = 0
    kinds = (ast.arg, ast.Name, ast.Global, ast.Nonlocal)
    for node in site.module.nodes_in(function, *kinds):  # the index's: no walk
        if isinstance(node, ast.arg) and node.arg == name:
            return None
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            count += 1
            parent = site.module.parent_of(node)
            if isinstance(parent, ast.Assign) and parent.targets == [node]:
                value = parent.value
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
    return value if count == 1 else None


def einsum_subscripts(x_rank: int, y_rank: int, axes: tuple[int, int]) -> tuple[str, bool]:
    """Subscripts of the einsum that computes K.batch_dot for these ranks and (normalised,
    non-zero) axes, and whether the result needs a trailing axis of 1 (two rank-2 inputs)."""
    letters = iter(string.ascii_lowercase[1:])
    x = ["a"] + [next(letters) for _ in range(x_rank - 1)]
    y = ["a"] + [next(letters) for _ in range(y_rank - 1)]
    y[axes[1]] = x[axes[0]]
    out = ["a"]
    out += [c for i, c in enumerate(x) if i not in (0, axes[0])]
    out += [c for i, c in enumerate(y) if i not in (0, axes[1])]
    return f"{''.join(x)},{''.join(y)}->{''.join(out)}", x_rank == 2 and y_rank == 2


def batch_dot_axes(axes: object, x_rank: int, y_rank: int) -> tuple[int, int] | None:
    """K.batch_dot's axes, normalised as it does; None when they are not literal ints
    or would make it raise (axis 0, or out of range)."""
    if axes is None:
        pair = (x_rank - 1, y_rank - 1 if y_rank == 2 else y_rank - 2)
    elif isinstance(axes, int) and not isinstance(axes, bool):
        pair = (axes, axes)
    elif (
        isinstance(axes, (list, tuple))
        and len(axes) == 2
        and all(isinstance(a, int) and not isinstance(a, bool) for a in axes)
    ):
        pair = (axes[0], axes[1])
    else:
        return None
    first = pair[0] + x_rank if pair[0] < 0 else pair[0]
    second = pair[1] + y_rank if pair[1] < 0 else pair[1]
    if not (0 < first < x_rank and 0 < second < y_rank):
        return None
    return first, second
