"""Planning one KM3xx rewrite from the table, or saying why it cannot be exact."""

from __future__ import annotations

import ast

from kmigrate.engine import ArgOut, CallEdit, CallSite, ReplaceNode, code_walk
from kmigrate.rules.common.binding import BindError, BoundArg, bind_call
from kmigrate.rules.common.dtypes import REAL_DTYPE_NAMES
from kmigrate.rules.km3_random._table import KERAS_RANDOM, RandomMapping


class NotExactError(Exception):
    """Why a call cannot be rewritten exactly; becomes part of the finding's message."""


def short_symbol(symbol: str) -> str:
    return symbol.replace("keras.random.", "random.", 1) if symbol else symbol


def is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def bind_arguments(site: CallSite, params: tuple[str, ...]) -> dict[str, BoundArg]:
    """The call's arguments by source parameter name; literal None counts as omitted."""
    try:
        bound, _ = bind_call(site, params, params, repeat_ok=True)
    except BindError as error:
        raise NotExactError(_refusal(error, site)) from None
    return {name: arg for name, arg in bound.items() if not is_none(arg.node)}


def _refusal(error: BindError, site: CallSite) -> str:
    if error.kind == BindError.STAR_ARGS:
        return "it is called with *args/**kwargs, so its arguments cannot be mapped"
    if error.kind == BindError.TOO_MANY:
        return f"it has more positional arguments than `{site.symbol}` takes"
    return f"`{site.symbol}` has no argument `{error.name}`"


def _dtype_name(site: CallSite, node: ast.expr) -> str | None:
    """``"float32"`` for ``tf.float32`` / ``np.float32`` / ``"float32"``, else None."""
    literal = site.module.literal(node)
    if isinstance(literal, str):
        return literal if literal in REAL_DTYPE_NAMES else None
    symbol = site.module.resolve(node) or ""
    for prefix in ("tf.dtypes.", "tf.", "np."):
        if symbol.startswith(prefix) and symbol[len(prefix) :] in REAL_DTYPE_NAMES:
            return symbol[len(prefix) :]
    return None


def _dtype_text(site: CallSite, node: ast.expr) -> str | None:
    """Replacement text for a dtype argument, None to keep the expression as written."""
    name = _dtype_name(site, node)
    if name is None or isinstance(site.module.literal(node), str):
        return None
    return f'"{name}"'


def seed_problem(site: CallSite, seed: BoundArg | None) -> str | None:
    """None when the call's seed can become the layer's generator (absent, int, self.seed)."""
    if seed is None:
        return None
    literal = site.module.literal(seed.node)
    if isinstance(literal, int) and not isinstance(literal, bool):
        return None
    node = seed.node
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and node.attr == "seed"
    ):
        return None
    return (
        f"its seed `{site.text(node)}` is not a Python int or `self.seed`: keras.random takes "
        "an int (same numbers at every call) or a keras.random.SeedGenerator (a new draw at "
        "every call). Create `self.seed_generator = keras.random.SeedGenerator(<seed>)` in "
        "__init__ and pass seed=self.seed_generator (kmigrate then reuses it)"
    )


def _parenthesized(site: CallSite, node: ast.expr) -> str:
    text = site.text(node)
    simple = isinstance(node, (ast.Name, ast.Attribute, ast.Constant, ast.Call, ast.Subscript))
    return text if simple else f"({text})"


def _check_special(site: CallSite, mapping: RandomMapping, bound: dict[str, BoundArg]) -> str:
    """Apply the mapping's extra rule; returns the target (it may change), or raises."""
    target = mapping.target
    if mapping.special == "uniform" and "dtype" in bound:
        name = _dtype_name(site, bound["dtype"].node)
        if name is not None and name.startswith(("int", "uint")):
            if "maxval" not in bound:
                raise NotExactError("an integer draw needs maxval (TensorFlow raises without it)")
            target = "keras.random.randint"
    elif mapping.special == "gamma":
        if "beta" in bound:
            raise NotExactError(
                "keras.random.gamma has no `beta` (rate): write "
                "keras.random.gamma(shape, alpha, seed=self.seed_generator) / beta"
            )
        alpha = site.module.literal(bound["alpha"].node) if "alpha" in bound else None
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            raise NotExactError(
                "TensorFlow draws `shape + alpha.shape` samples while keras.random.gamma "
                "broadcasts alpha to `shape`; the two agree only for a scalar alpha, which "
                "kmigrate can only see for a number literal: give keras.random.gamma the full "
                "output shape"
            )
    elif mapping.special == "keep_prob":
        if ("keep_prob" in bound) == ("rate" in bound):
            raise NotExactError(
                "give exactly one of keep_prob and rate (TensorFlow raises otherwise)"
            )
    elif mapping.special == "numpy" and "size" not in bound:
        for name in ("loc", "scale", "low", "high"):
            if name in bound and not isinstance(
                site.module.literal(bound[name].node), (int, float)
            ):
                raise NotExactError(
                    f"without `size`, numpy takes the output shape from `{name}`; pass "
                    "the shape explicitly"
                )
    return target


def _call_arguments(
    site: CallSite, mapping: RandomMapping, target: str, bound: dict[str, BoundArg]
) -> list[ArgOut]:
    """The complete new argument list, seed excluded, in ``target``'s order.

    An argument stays positional while every earlier one did; the rest are keywords.
    """
    renames = dict(mapping.renames)
    implied = dict(mapping.implied)
    if target == "keras.random.randint":
        implied["minval"] = "0"
    overrides: dict[str, str] = {}
    if "keep_prob" in bound:
        keep = bound.pop("keep_prob")
        bound["rate"] = keep
        overrides["rate"] = f"1 - {_parenthesized(site, keep.node)}"
    source_of = {renames.get(p, p): p for p in mapping.params if p != "keep_prob"}
    used = {"seed", "name"}
    out: list[ArgOut] = []
    positional = True
    for param in KERAS_RANDOM[target]:
        if param == "seed":
            continue
        source = source_of.get(param)
        arg = bound.get(source) if source else None
        if arg is not None:
            used.add(source)
            value = overrides.get(param)
            if param == "dtype" and value is None:
                value = _dtype_text(site, arg.node)
            positional = positional and arg.positional
            out.append(ArgOut(arg.source, None if positional else param, value))
        elif param in implied:
            positional = False
            out.append(ArgOut(None, param, implied[param]))
        else:
            positional = False
    leftover = sorted(set(bound) - used)
    if leftover:  # table bug or an argument Keras has no counterpart for
        raise NotExactError(f"keras.random has no counterpart for `{leftover[0]}`")
    return out


def plan_rewrite(site: CallSite, mapping: RandomMapping, seed_expr: str | None):
    """The edit turning ``site`` into its keras.random call (CallEdit or ReplaceNode)."""
    seed_part = [] if seed_expr is None else [f"seed={seed_expr}"]
    if mapping.special == "dims":  # np.random.rand(d0, d1) -> uniform((d0, d1))
        if site.keywords or site.has_star_args:
            raise NotExactError("numpy's dimensions are not plain positional arguments")
        if any(isinstance(n, ast.Call) for a in site.args for n in code_walk(a)):
            raise NotExactError("its dimensions contain calls; pass a shape tuple by hand")
        dims = [site.text(a) for a in site.args]
        shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
        args = [ArgOut(None, None, shape)]
        if seed_expr is not None:
            args.append(ArgOut(None, "seed", seed_expr))
        return CallEdit(site.span, mapping.target, tuple(args))
    bound = bind_arguments(site, mapping.params)
    seed = bound.pop("seed", None)
    target = _check_special(site, mapping, bound)
    if mapping.special == "shuffle":
        return _shuffle_rows(site, bound.get("value"), seed_part)
    args = _call_arguments(site, mapping, target, bound)
    if seed_expr is not None:
        args.append(ArgOut(seed.source if seed else None, "seed", seed_expr))
    return CallEdit(site.span, target, tuple(args))


def _shuffle_rows(site: CallSite, value: BoundArg | None, seed_part: list[str]) -> ReplaceNode:
    """``tf.random.shuffle(x)`` as a row permutation that every backend computes alike.

    ``keras.random.shuffle`` itself is not used: on JAX it calls
    ``jax.random.permutation(..., independent=True)``, which shuffles each column of a
    2-D tensor on its own, and it cannot trace a dynamic (batch) dimension. An argsort
    of uniform draws is how its TensorFlow and PyTorch backends shuffle anyway.
    """
    if value is None or not _is_dotted_name(value.node):
        raise NotExactError(
            "keras.random.shuffle on JAX shuffles every column of a rank >= 2 tensor "
            "independently (tf.random.shuffle moves whole rows); kmigrate writes the exact "
            "form, ops.take(x, ops.argsort(random.uniform(ops.shape(x)[:1])), axis=0), only "
            "when `x` is a plain name (it appears twice): assign the expression to a name first"
        )
    x = site.text(value.node)
    draws = ", ".join([f"{{name:keras.ops.shape}}({x})[:1]", *seed_part])
    order = f"{{name:keras.ops.argsort}}({{name:keras.random.uniform}}({draws}))"
    return ReplaceNode(site.span, f"{{name:keras.ops.take}}({x}, {order}, axis=0)")


def _is_dotted_name(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
