"""KM3xx: random numbers. ``tf.random`` inside layers becomes ``keras.random`` fed by a
``keras.random.SeedGenerator`` that the layer owns.

Keras 3 random functions are stateless: the state lives in a ``SeedGenerator`` whose
``seed=`` is passed to every draw. In a layer that generator must be an attribute
(``self.seed_generator``) so the layer tracks its state variable: that is what makes
the draws work under ``jax.jit`` and ``torch.compile`` and what ``.keras`` saving
round-trips (through the layer's ``seed`` argument).

The mapping is a table (``TF_RANDOM``, ``BACKEND_RANDOM``, ``NUMPY_RANDOM``): for each
source function its signature in positional order, the ``keras.random`` target, the
argument renames, and the arguments the rewrite must spell out because the defaults
differ (``tf.random.categorical`` returns int64, ``keras.random.categorical`` int32).
What the table cannot express exactly is reported for a manual port, with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kmigrate.model import (
    ArgOut,
    CallEdit,
    CallSite,
    ClassEdit,
    Context,
    EditPlan,
    ReplaceNode,
    Severity,
)
from kmigrate.names import code_walk, statements
from kmigrate.rules.base import Clean, Flagged, Report, Rule

if TYPE_CHECKING:
    from kmigrate.module_info import ModuleInfo

# ---------------------------------------------------------------------------
# The table.
# ---------------------------------------------------------------------------

# keras.random signatures, positional order (keras/src/random/random.py, Keras 3.15).
KERAS_RANDOM: dict[str, tuple[str, ...]] = {
    "keras.random.normal": ("shape", "mean", "stddev", "dtype", "seed"),
    "keras.random.uniform": ("shape", "minval", "maxval", "dtype", "seed"),
    "keras.random.randint": ("shape", "minval", "maxval", "dtype", "seed"),
    "keras.random.truncated_normal": ("shape", "mean", "stddev", "dtype", "seed"),
    "keras.random.categorical": ("logits", "num_samples", "dtype", "seed"),
    "keras.random.dropout": ("inputs", "rate", "noise_shape", "seed"),
    "keras.random.shuffle": ("x", "axis", "seed"),
    "keras.random.gamma": ("shape", "alpha", "dtype", "seed"),
    "keras.random.binomial": ("shape", "counts", "probabilities", "dtype", "seed"),
}


@dataclass(frozen=True)
class RandomMapping:
    """How one source random function maps onto ``keras.random``.

    ``params`` is the source signature in positional order; ``renames`` maps a
    source parameter to its ``keras.random`` name; ``implied`` gives the value a
    ``keras.random`` argument must get when the source omits it (or passes None),
    because the two defaults differ; ``special`` names an extra check below.
    """

    target: str
    params: tuple[str, ...]
    renames: tuple[tuple[str, str], ...] = ()
    implied: tuple[tuple[str, str], ...] = ()
    special: str = ""


def _table(*rows: tuple[tuple[str, ...], RandomMapping]) -> dict[str, RandomMapping]:
    return {symbol: mapping for symbols, mapping in rows for symbol in symbols}


_NORMAL = ("shape", "mean", "stddev", "dtype", "seed", "name")
_UNIFORM = ("shape", "minval", "maxval", "dtype", "seed", "name")
_INT64 = (("dtype", '"int64"'),)  # TF samples categories as int64, Keras as int32
_SIZE_IS_SHAPE = (("size", "shape"),)
_SCALAR = (("shape", "()"),)  # numpy's size=None draws one number

# Signatures from the installed TensorFlow 2.21 (inspect.signature).
TF_RANDOM = _table(
    (
        ("tf.random.normal", "tf.compat.v1.random.normal", "tf.compat.v1.random_normal"),
        RandomMapping("keras.random.normal", _NORMAL),
    ),
    (
        ("tf.random.uniform", "tf.compat.v1.random.uniform", "tf.compat.v1.random_uniform"),
        RandomMapping("keras.random.uniform", _UNIFORM, special="uniform"),
    ),
    (
        (
            "tf.random.truncated_normal",
            "tf.compat.v1.random.truncated_normal",
            "tf.compat.v1.truncated_normal",
        ),
        RandomMapping("keras.random.truncated_normal", _NORMAL),
    ),
    (
        ("tf.random.categorical", "tf.compat.v1.random.categorical"),
        RandomMapping(
            "keras.random.categorical",
            ("logits", "num_samples", "dtype", "seed", "name"),
            implied=_INT64,
        ),
    ),
    (
        ("tf.compat.v1.multinomial", "tf.compat.v1.random.multinomial"),
        RandomMapping(
            "keras.random.categorical",
            ("logits", "num_samples", "seed", "name", "output_dtype"),
            renames=(("output_dtype", "dtype"),),
            implied=_INT64,
        ),
    ),
    (
        ("tf.random.shuffle", "tf.compat.v1.random.shuffle", "tf.compat.v1.random_shuffle"),
        RandomMapping(
            "keras.random.shuffle",
            ("value", "seed", "name"),
            renames=(("value", "x"),),
            special="shuffle",
        ),
    ),
    (
        ("tf.random.gamma", "tf.compat.v1.random.gamma", "tf.compat.v1.random_gamma"),
        RandomMapping(
            "keras.random.gamma",
            ("shape", "alpha", "beta", "dtype", "seed", "name"),
            special="gamma",
        ),
    ),
    (
        ("tf.nn.dropout",),
        RandomMapping(
            "keras.random.dropout",
            ("x", "rate", "noise_shape", "seed", "name"),
            renames=(("x", "inputs"),),
        ),
    ),
    (
        ("tf.compat.v1.nn.dropout",),
        RandomMapping(
            "keras.random.dropout",
            ("x", "keep_prob", "noise_shape", "seed", "name", "rate"),
            renames=(("x", "inputs"),),
            special="keep_prob",
        ),
    ),
)

# tf_keras/src/backend.py: dtype=None means floatx(), as in keras.random.
BACKEND_RANDOM = _table(
    (
        ("K.random_normal",),
        RandomMapping("keras.random.normal", ("shape", "mean", "stddev", "dtype", "seed")),
    ),
    (
        ("K.random_uniform",),
        RandomMapping("keras.random.uniform", ("shape", "minval", "maxval", "dtype", "seed")),
    ),
    (
        ("K.truncated_normal",),
        RandomMapping(
            "keras.random.truncated_normal", ("shape", "mean", "stddev", "dtype", "seed")
        ),
    ),
    (
        # where(uniform <= p, 1, 0) is a Bernoulli(p) draw: a binomial with one trial.
        ("K.random_bernoulli", "K.random_binomial"),
        RandomMapping(
            "keras.random.binomial",
            ("shape", "p", "dtype", "seed"),
            renames=(("p", "probabilities"),),
            implied=(("counts", "1"), ("probabilities", "0.0")),
        ),
    ),
    (
        ("K.dropout",),
        RandomMapping(
            "keras.random.dropout",
            ("x", "level", "noise_shape", "seed"),
            renames=(("x", "inputs"), ("level", "rate")),
        ),
    ),
)

NUMPY_RANDOM = _table(
    (
        ("np.random.normal",),
        RandomMapping(
            "keras.random.normal",
            ("loc", "scale", "size"),
            renames=(("loc", "mean"), ("scale", "stddev"), *_SIZE_IS_SHAPE),
            implied=_SCALAR,
            special="numpy",
        ),
    ),
    (
        ("np.random.uniform",),
        RandomMapping(
            "keras.random.uniform",
            ("low", "high", "size"),
            renames=(("low", "minval"), ("high", "maxval"), *_SIZE_IS_SHAPE),
            implied=_SCALAR,
            special="numpy",
        ),
    ),
    (
        ("np.random.standard_normal",),
        RandomMapping("keras.random.normal", ("size",), _SIZE_IS_SHAPE, _SCALAR),
    ),
    (
        ("np.random.random", "np.random.random_sample", "np.random.ranf", "np.random.sample"),
        RandomMapping("keras.random.uniform", ("size",), _SIZE_IS_SHAPE, _SCALAR),
    ),
    (("np.random.rand",), RandomMapping("keras.random.uniform", (), special="dims")),
    (("np.random.randn",), RandomMapping("keras.random.normal", (), special="dims")),
)

SET_SEED = frozenset(
    {"tf.random.set_seed", "tf.compat.v1.set_random_seed", "tf.compat.v1.random.set_random_seed"}
)
GENERATOR_PREFIXES = (
    "tf.random.Generator",
    "tf.random.experimental.Generator",
    "tf.compat.v1.random.Generator",
    "tf.compat.v1.random.experimental.Generator",
    "tf.random.get_global_generator",
    "tf.random.experimental.get_global_generator",
    "tf.random.set_global_generator",
    "tf.random.experimental.set_global_generator",
)
_TF_RANDOM_PREFIXES = ("tf.random.", "tf.compat.v1.random.", "tf.compat.v1.random_")
_NOT_A_DRAW = frozenset({"tf.random.get_seed", "tf.compat.v1.random.get_seed"})

# Why a TF random function has no keras.random rewrite (first matching fragment wins).
_NO_EQUIVALENT: tuple[tuple[str, str], ...] = (
    (
        "stateless_",
        "a stateless op returns the same numbers for the same seed, and keras.random has no "
        "tensor seeds. If you want a fresh draw per call (the usual intent), use "
        "keras.random.{name}(..., seed=self.seed_generator) with a keras.random.SeedGenerator "
        "made in __init__; if the code relies on repeating the numbers, pass the same Python "
        "int seed instead",
    ),
    ("poisson", "keras.random has no Poisson sampler"),
    (
        "candidate_sampler",
        "candidate sampling has no Keras equivalent; keep it in TensorFlow-only code "
        "(a tf.data pipeline or a TensorFlow-backend-only loss)",
    ),
    (
        "split",
        "seed splitting is TensorFlow RNG plumbing: let a keras.random.SeedGenerator hand out "
        "the seeds",
    ),
    ("fold_in", "seed folding is TensorFlow RNG plumbing: use a keras.random.SeedGenerator"),
    (
        "index_shuffle",
        "no Keras equivalent: permute with ops.argsort(keras.random.uniform((n,), seed=...))",
    ),
    ("create_rng_state", "TensorFlow RNG state: use a keras.random.SeedGenerator"),
)

_DTYPES = frozenset(
    {
        "bfloat16",
        "float16",
        "float32",
        "float64",
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
_NON_LAYER_FAMILIES = (
    "losses.",
    "metrics.",
    "regularizers.",
    "constraints.",
    "initializers.",
    "optimizers.",
    "callbacks.",
)
_SEED_GENERATOR = ("keras.random.SeedGenerator", "tf.keras.random.SeedGenerator")
_GENERATOR_ATTR = "seed_generator"


# ---------------------------------------------------------------------------
# Planning one rewrite.
# ---------------------------------------------------------------------------


class _NotExactError(Exception):
    """Why a call cannot be rewritten exactly; becomes part of the finding's message."""


@dataclass(frozen=True)
class _Bound:
    """One argument of the source call: where it came from and its node."""

    ref: int | str  # positional index or keyword, as ArgOut.source wants it
    node: ast.expr
    positional: bool


def _short(symbol: str) -> str:
    return symbol.replace("keras.random.", "random.", 1) if symbol else symbol


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _bind(site: CallSite, params: tuple[str, ...]) -> dict[str, _Bound]:
    """The call's arguments by source parameter name; literal None counts as omitted."""
    if site.has_star_args:
        raise _NotExactError("it is called with *args/**kwargs, so its arguments cannot be mapped")
    if len(site.args) > len(params):
        raise _NotExactError(f"it has more positional arguments than `{site.symbol}` takes")
    bound = {params[i]: _Bound(i, node, True) for i, node in enumerate(site.args)}
    for keyword, node in site.keywords.items():
        if keyword not in params:
            raise _NotExactError(f"`{site.symbol}` has no argument `{keyword}`")
        bound[keyword] = _Bound(keyword, node, False)
    return {name: arg for name, arg in bound.items() if not _is_none(arg.node)}


def _dtype_name(site: CallSite, node: ast.expr) -> str | None:
    """``"float32"`` for ``tf.float32`` / ``np.float32`` / ``"float32"``, else None."""
    literal = site.module.literal(node)
    if isinstance(literal, str):
        return literal if literal in _DTYPES else None
    symbol = site.module.resolve(node) or ""
    for prefix in ("tf.dtypes.", "tf.", "np."):
        if symbol.startswith(prefix) and symbol[len(prefix) :] in _DTYPES:
            return symbol[len(prefix) :]
    return None


def _dtype_text(site: CallSite, node: ast.expr) -> str | None:
    """Replacement text for a dtype argument, None to keep the expression as written."""
    name = _dtype_name(site, node)
    if name is None or isinstance(site.module.literal(node), str):
        return None
    return f'"{name}"'


def _seed_problem(site: CallSite, seed: _Bound | None) -> str | None:
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


def _check_special(site: CallSite, mapping: RandomMapping, bound: dict[str, _Bound]) -> str:
    """Apply the mapping's extra rule; returns the target (it may change), or raises."""
    target = mapping.target
    if mapping.special == "uniform" and "dtype" in bound:
        name = _dtype_name(site, bound["dtype"].node)
        if name is not None and name.startswith(("int", "uint")):
            if "maxval" not in bound:
                raise _NotExactError("an integer draw needs maxval (TensorFlow raises without it)")
            target = "keras.random.randint"
    elif mapping.special == "gamma":
        if "beta" in bound:
            raise _NotExactError(
                "keras.random.gamma has no `beta` (rate): write "
                "keras.random.gamma(shape, alpha, seed=self.seed_generator) / beta"
            )
        alpha = site.module.literal(bound["alpha"].node) if "alpha" in bound else None
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            raise _NotExactError(
                "TensorFlow draws `shape + alpha.shape` samples while keras.random.gamma "
                "broadcasts alpha to `shape`; the two agree only for a scalar alpha, which "
                "kmigrate can only see for a number literal: give keras.random.gamma the full "
                "output shape"
            )
    elif mapping.special == "keep_prob":
        if ("keep_prob" in bound) == ("rate" in bound):
            raise _NotExactError(
                "give exactly one of keep_prob and rate (TensorFlow raises otherwise)"
            )
    elif mapping.special == "numpy" and "size" not in bound:
        for name in ("loc", "scale", "low", "high"):
            if name in bound and not isinstance(
                site.module.literal(bound[name].node), (int, float)
            ):
                raise _NotExactError(
                    f"without `size`, numpy takes the output shape from `{name}`; pass "
                    "the shape explicitly"
                )
    return target


def _call_arguments(
    site: CallSite, mapping: RandomMapping, target: str, bound: dict[str, _Bound]
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
            out.append(ArgOut(arg.ref, None if positional else param, value))
        elif param in implied:
            positional = False
            out.append(ArgOut(None, param, implied[param]))
        else:
            positional = False
    leftover = sorted(set(bound) - used)
    if leftover:  # table bug or an argument Keras has no counterpart for
        raise _NotExactError(f"keras.random has no counterpart for `{leftover[0]}`")
    return out


def _rewrite(site: CallSite, mapping: RandomMapping, seed_expr: str | None):
    """The edit turning ``site`` into its keras.random call (CallEdit or ReplaceNode)."""
    seed_part = [] if seed_expr is None else [f"seed={seed_expr}"]
    if mapping.special == "dims":  # np.random.rand(d0, d1) -> uniform((d0, d1))
        if site.keywords or site.has_star_args:
            raise _NotExactError("numpy's dimensions are not plain positional arguments")
        if any(isinstance(n, ast.Call) for a in site.args for n in code_walk(a)):
            raise _NotExactError("its dimensions contain calls; pass a shape tuple by hand")
        dims = [site.text(a) for a in site.args]
        shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
        args = [ArgOut(None, None, shape)]
        if seed_expr is not None:
            args.append(ArgOut(None, "seed", seed_expr))
        return CallEdit(site.span, mapping.target, tuple(args))
    bound = _bind(site, mapping.params)
    seed = bound.pop("seed", None)
    target = _check_special(site, mapping, bound)
    if mapping.special == "shuffle":
        return _shuffle_rows(site, bound.get("value"), seed_part)
    args = _call_arguments(site, mapping, target, bound)
    if seed_expr is not None:
        args.append(ArgOut(seed.ref if seed else None, "seed", seed_expr))
    return CallEdit(site.span, target, tuple(args))


def _shuffle_rows(site: CallSite, value: _Bound | None, seed_part: list[str]) -> ReplaceNode:
    """``tf.random.shuffle(x)`` as a row permutation that every backend computes alike.

    ``keras.random.shuffle`` itself is not used: on JAX it calls
    ``jax.random.permutation(..., independent=True)``, which shuffles each column of a
    2-D tensor on its own, and it cannot trace a dynamic (batch) dimension. An argsort
    of uniform draws is how its TensorFlow and PyTorch backends shuffle anyway.
    """
    if value is None or not _is_dotted_name(value.node):
        raise _NotExactError(
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


# ---------------------------------------------------------------------------
# Who owns the generator.
# ---------------------------------------------------------------------------


def _self_attribute_assignments(class_node: ast.ClassDef) -> list[tuple[str, ast.expr, str]]:
    """(attribute, value, method) for every ``self.<attribute> = value`` in the class."""
    found = []
    for method in class_node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in statements(method):
            if node.__class__ is not ast.Assign:
                continue
            for target in node.targets:  # type: ignore[attr-defined]
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    found.append((target.attr, node.value, method.name))  # type: ignore[attr-defined]
    return sorted(found, key=lambda item: (item[1].lineno, item[1].col_offset))


def _assignments_of(site: CallSite, class_node: ast.ClassDef) -> list[tuple[str, ast.expr, str]]:
    """:func:`_self_attribute_assignments`, once per class and module."""
    return site.module.memo(
        ("KM3-self-assignments", class_node), lambda: _self_attribute_assignments(class_node)
    )


def _class_chain(site: CallSite) -> list[ast.ClassDef]:
    """The enclosing class, then its base classes defined in the same module."""
    classes = {n.name: n for n in site.module.tree.body if isinstance(n, ast.ClassDef)}
    chain = [site.scope.class_node]
    for cls in chain:  # grows while walking: breadth-first over local bases
        for base in cls.bases:
            local = classes.get(base.id) if isinstance(base, ast.Name) else None
            if local is not None and local not in chain:
                chain.append(local)
    return chain


def _existing_generator(site: CallSite) -> str | None:
    """``x`` when the class (or a base in this module) does
    ``self.x = keras.random.SeedGenerator(...)``; ``__init__`` assignments first."""
    for cls in _class_chain(site):
        found = [
            (method != "__init__", attribute)
            for attribute, value, method in _assignments_of(site, cls)
            if isinstance(value, ast.Call) and site.module.resolve(value.func) in _SEED_GENERATOR
        ]
        if found:
            return min(found)[1]
    return None


def _inside_lambda(site: CallSite) -> bool:
    """Whether the draw sits in a lambda inside its function."""
    function = site.scope.function_node
    parent = site.module.parent_of(site.node)
    while parent is not None and parent is not function:
        if parent.__class__ is ast.Lambda:
            return True
        parent = site.module.parent_of(parent)
    return False


def _super_init_line(function: ast.AST) -> int | None:
    """The first line calling an ``__init__`` (``super().__init__(...)``) in ``function``."""
    lines = [
        node.lineno  # type: ignore[attr-defined]
        for node in code_walk(function)
        if node.__class__ is ast.Call
        and node.func.__class__ is ast.Attribute  # type: ignore[attr-defined]
        and node.func.attr == "__init__"  # type: ignore[attr-defined]
    ]
    return min(lines, default=None)


def _non_layer_base(bases: tuple[str, ...]) -> str | None:
    for base in bases:
        path = base
        for namespace in ("tf.keras.", "tf_keras.", "keras."):
            if base.startswith(namespace):
                path = base[len(namespace) :]
        if path.startswith(_NON_LAYER_FAMILIES) or base.startswith(
            ("tf.Module", "tf.experimental")
        ):
            return base
    return None


def _class_seed_default(site: CallSite) -> str:
    """The first int literal seed among the class's random calls, else ``None``.

    Every random call of one class must ask for the same ``ClassEdit`` (the editor
    merges identical ones), so the default is a property of the class, not the call.
    """
    return site.module.memo(
        ("KM3-seed-default", site.scope.class_node),
        lambda: _seed_default(site.module, site.scope.class_node),
    )


def _seed_default(module: ModuleInfo, class_node: ast.ClassDef) -> str:
    seeds = []
    for node in code_walk(class_node):
        if not isinstance(node, ast.Call):
            continue
        mapping = _SEEDED.get(module.resolve(node.func) or "")
        if mapping is None or "seed" not in mapping.params:
            continue
        index = mapping.params.index("seed")
        seed = next((k.value for k in node.keywords if k.arg == "seed"), None)
        if seed is None and index < len(node.args):
            seed = node.args[index]
        literal = module.literal(seed) if seed is not None else None
        if isinstance(literal, int) and not isinstance(literal, bool):
            seeds.append((node.lineno, node.col_offset, literal))
    return str(min(seeds)[2]) if seeds else "None"


def _generator_for(site: CallSite) -> tuple[str, ClassEdit | None]:
    """The ``seed=`` expression for a draw in model code, and the class edit it needs."""
    scope = site.scope
    method = scope.function_name or ""
    if scope.class_node is None:
        where = f"the function `{method}`" if method else "a lambda or module-level code"
        raise _NotExactError(
            f"it is in {where}, outside any layer, so nothing owns a keras.random.SeedGenerator: "
            "move the draw into a layer's `call` (or use a built-in noise layer such as "
            "keras.layers.GaussianNoise), or give the function a `seed_generator` argument "
            "and pass seed=seed_generator"
        )
    if not method:
        raise _NotExactError(
            "it runs in the class body, where there is no `self` to own a generator"
        )
    if "." in method or _inside_lambda(site):
        raise _NotExactError(
            f"it is in a function nested in `{method.split('.')[0]}`; such functions are often "
            "traced on their own (tf.map_fn, tf.while_loop, tf.cond), where a SeedGenerator's "
            "state update is not portable: draw the numbers in the method itself with "
            "seed=self.seed_generator and pass them in"
        )
    function = scope.function_node
    args = getattr(function, "args", None)
    decorators = {d.id for d in getattr(function, "decorator_list", ()) if isinstance(d, ast.Name)}
    if not args or not args.args or args.args[0].arg != "self" or "staticmethod" in decorators:
        raise _NotExactError(f"`{method}` has no `self` to hold a keras.random.SeedGenerator")
    base = _non_layer_base(scope.class_bases)
    if base is not None:
        raise _NotExactError(
            f"`{scope.class_name}` derives from `{base}`, not from a Layer or Model: only layers "
            "track a SeedGenerator's state; draw the numbers in a layer instead"
        )
    existing = _existing_generator(site)
    if existing is not None:
        return f"self.{existing}", None
    assignments = _assignments_of(site, scope.class_node)
    if any(attribute == _GENERATOR_ATTR for attribute, _, _ in assignments):
        raise _NotExactError(
            f"`self.{_GENERATOR_ATTR}` already holds something other than a "
            "keras.random.SeedGenerator"
        )
    for attribute, value, _ in assignments:
        if attribute == "seed" and not (isinstance(value, ast.Name) and value.id == "seed"):
            raise _NotExactError(
                f"`self.seed = {site.text(value)}` is not the `seed` argument of __init__, so "
                "the layer's seed cannot be round-tripped through get_config automatically"
            )
    if method == "__init__":
        line = _super_init_line(function)
        if line is None or line > site.node.lineno:
            raise _NotExactError(
                "it runs in __init__ before super().__init__(), when the layer cannot hold a "
                "SeedGenerator yet: move the draw after super().__init__()"
            )
    edit = ClassEdit(
        scope.class_span,
        init_params=(("seed", _class_seed_default(site)),),
        init_statements=(
            "self.seed = seed",
            f"self.{_GENERATOR_ATTR} = {{name:keras.random.SeedGenerator}}(seed)",
        ),
        config_items=(("seed", "self.seed"),),
    )
    return f"self.{_GENERATOR_ATTR}", edit


def _layer_plan(site: CallSite, mapping: RandomMapping) -> tuple[EditPlan, str]:
    """The plan for a draw in model code and the generator it uses; raises _NotExactError."""
    seed_expr, class_edit = _generator_for(site)
    if "seed" in mapping.params:
        problem = _seed_problem(site, _bind(site, mapping.params).get("seed"))
        if problem:
            raise _NotExactError(problem)
    call_edit = _rewrite(site, mapping, seed_expr)
    edits = (call_edit,) if class_edit is None else (call_edit, class_edit)
    return EditPlan(edits, f"use {mapping.target} with seed={seed_expr}"), seed_expr


def _layer_report(site: CallSite, mapping: RandomMapping, why: str) -> Report:
    """The finding for a draw in model code: fixable, or manual with the reason."""
    try:
        plan, seed_expr = _layer_plan(site, mapping)
    except _NotExactError as manual:
        return Report(
            site,
            f"`{site.symbol}` {why} and was not rewritten: {manual}",
        )
    if mapping.special == "shuffle":
        instead = f"ops.take(x, ops.argsort(keras.random.uniform(..., seed={seed_expr})), axis=0)"
    else:
        instead = f"keras.{_short(mapping.target)}(..., seed={seed_expr})"
    return Report(
        site,
        f"`{site.symbol}` {why}: use `{instead}`, with a keras.random.SeedGenerator owned by "
        f"`{site.scope.class_name}`",
        fix=plan,
    )


_SEEDED = {**TF_RANDOM, **BACKEND_RANDOM}


# ---------------------------------------------------------------------------
# The rules.
# ---------------------------------------------------------------------------


class TfRandomInLayer(Rule):
    id = "KM301"
    name = "tf-random-in-layer"
    summary = (
        "`tf.random.*` / `tf.nn.dropout` in model code; Keras 3 uses `keras.random.*` with "
        "a SeedGenerator the layer owns."
    )
    rationale = (
        "TensorFlow's stateful random ops return TensorFlow tensors and keep their state in "
        "TensorFlow's global RNG, so a layer using them only runs on the TensorFlow backend. "
        "`keras.random` functions are stateless and take their state from a "
        "`keras.random.SeedGenerator`; as a layer attribute its state is tracked by the layer, "
        "which is what makes the draws change from call to call under `jax.jit`, and the "
        "layer's `seed` argument makes them reproducible and round-trips through `.keras`."
    )
    fix_safety = (
        "Exact in distribution, not in the numbers: TensorFlow's stateful RNG and the Keras "
        "stateless RNG are different generators, so the draws differ (as between two TF "
        "seeds); same seed -> same numbers, and every call draws anew. Checked against "
        "keras/src/backend/{tensorflow,jax,torch}/random.py: normal, uniform and dropout "
        "(which scales the kept units by 1/(1-rate), like tf.nn.dropout) are the same "
        "distributions; integer tf.random.uniform becomes random.randint; "
        'tf.random.categorical becomes random.categorical with dtype="int64" '
        "(Keras defaults to int32; JAX without x64 still returns int32); tf.random.shuffle(x) "
        "becomes ops.take(x, ops.argsort(random.uniform(ops.shape(x)[:1])), axis=0), the "
        "argsort-of-uniforms permutation Keras's TF and PyTorch backends use, because "
        "keras.random.shuffle on JAX shuffles each column of a 2-D tensor independently "
        "and cannot trace a None batch dimension; "
        "tf.random.gamma only with a scalar literal alpha and no beta (TF draws "
        "shape + alpha.shape samples); truncated_normal on PyTorch redraws at most 4 times, "
        "so about 4 in a million samples lie outside 2 stddev. Omitted dtypes follow "
        "keras.config.floatx() (float32 unless changed) where TF uses float32. An int op "
        "seed becomes the default of the layer's `seed` argument. Manual: tensor seeds, "
        "draws outside a layer, in nested functions or lambdas, in Loss/Metric classes, "
        "gamma with beta or array alpha, shuffle of an expression."
    )
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL})
    call_symbols = frozenset(TF_RANDOM)
    examples = [
        Flagged(
            """
            import keras
            import tensorflow as tf
            from keras import ops


            class Sampling(keras.layers.Layer):
                \"\"\"z = mean + exp(log_var / 2) * eps.\"\"\"

                def call(self, inputs):
                    z_mean, z_log_var = inputs
                    epsilon = tf.random.normal(shape=ops.shape(z_mean))
                    return z_mean + ops.exp(0.5 * z_log_var) * epsilon
            """,
            """
            import keras
            from keras import ops


            class Sampling(keras.layers.Layer):
                \"\"\"z = mean + exp(log_var / 2) * eps.\"\"\"

                def __init__(self, seed=None, **kwargs):
                    super().__init__(**kwargs)
                    self.seed = seed
                    self.seed_generator = keras.random.SeedGenerator(seed)

                def call(self, inputs):
                    z_mean, z_log_var = inputs
                    epsilon = keras.random.normal(shape=ops.shape(z_mean), seed=self.seed_generator)
                    return z_mean + ops.exp(0.5 * z_log_var) * epsilon
            """,
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf
            from keras import ops


            class NoisyDropout(keras.layers.Layer):
                def __init__(self, rate, **kwargs):
                    super().__init__(**kwargs)
                    self.rate = rate

                def call(self, x, training=False):
                    if not training:
                        return x
                    noise = tf.random.uniform(ops.shape(x), -0.1, 0.1, dtype=tf.float32)
                    return tf.nn.dropout(x + noise, rate=self.rate)

                def get_config(self):
                    config = super().get_config()
                    config.update({"rate": self.rate})
                    return config
            """,
            """
            import keras
            from keras import ops


            class NoisyDropout(keras.layers.Layer):
                def __init__(self, rate, seed=None, **kwargs):
                    super().__init__(**kwargs)
                    self.seed = seed
                    self.seed_generator = keras.random.SeedGenerator(seed)
                    self.rate = rate

                def call(self, x, training=False):
                    if not training:
                        return x
                    noise = keras.random.uniform(ops.shape(x), -0.1, 0.1, dtype="float32", seed=self.seed_generator)
                    return keras.random.dropout(x + noise, rate=self.rate, seed=self.seed_generator)

                def get_config(self):
                    config = super().get_config()
                    config.update({"rate": self.rate})
                    return {**config, "seed": self.seed}
            """,  # noqa: E501
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf


            class Sampler(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.rng = keras.random.SeedGenerator(7)

                def call(self, logits, rows):
                    picks = tf.random.categorical(logits, 4, seed=3)
                    return picks, tf.random.shuffle(rows)
            """,
            """
            import keras


            class Sampler(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.rng = keras.random.SeedGenerator(7)

                def call(self, logits, rows):
                    picks = keras.random.categorical(logits, 4, dtype="int64", seed=self.rng)
                    return picks, keras.ops.take(rows, keras.ops.argsort(keras.random.uniform(keras.ops.shape(rows)[:1], seed=self.rng)), axis=0)
            """,  # noqa: E501
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf


            class Jitter(keras.layers.Layer):
                def call(self, x):
                    return x * tf.random.gamma([4], alpha=2.0, beta=0.5)
            """
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf


            def add_noise(x):
                return x + tf.random.normal(tf.shape(x))


            noise = keras.layers.Lambda(add_noise)
            """
        ),
        Clean(
            """
            import keras
            import tensorflow as tf


            class Noise(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.seed_generator = keras.random.SeedGenerator(1)

                def call(self, x):
                    return x + keras.random.normal(tf.shape(x), seed=self.seed_generator)


            dataset = tf.data.Dataset.range(8).map(lambda i: tf.random.uniform(()))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        yield _layer_report(
            site, TF_RANDOM[site.symbol], "draws from TensorFlow's RNG (TensorFlow backend only)"
        )


class BackendRandom(Rule):
    id = "KM302"
    name = "keras2-backend-random"
    summary = "`K.random_*` / `K.dropout` (Keras 2 backend functions), which Keras 3 removed."
    rationale = (
        "`keras.backend.random_normal` and friends do not exist in Keras 3. In a layer they "
        "become `keras.random.*` with the layer's SeedGenerator; elsewhere `keras.random.*` "
        "without a seed, which draws from Keras's global SeedGenerator (seeded by "
        "`keras.utils.set_random_seed`)."
    )
    fix_safety = (
        "Exact in distribution (different generator, so different numbers). dtype=None means "
        "floatx() on both sides. K.random_bernoulli(shape, p) (where(uniform <= p, 1, 0)) "
        "becomes random.binomial(shape, counts=1, probabilities=p), the same Bernoulli "
        "distribution. K.dropout's `level` is random.dropout's `rate` (both scale by "
        "1/(1-rate)). In layers the rules of KM301 apply. Outside layers an int seed is not "
        "rewritten (K gives a fresh draw per call from a seeded op, keras.random.normal(seed=1) "
        "returns the same numbers every call). In tf.data pipelines use tf.random.*: "
        "keras.random would return backend tensors there."
    )
    severity = Severity.ERROR
    call_symbols = frozenset(BACKEND_RANDOM) | {
        "K.random_normal_variable",
        "K.random_uniform_variable",
    }
    examples = [
        Flagged(
            """
            import keras
            from tensorflow.keras import backend as K


            class Dropper(keras.layers.Layer):
                def call(self, x):
                    mask = K.random_bernoulli(K.shape(x), p=0.9)
                    return K.dropout(x * mask, 0.5)
            """,
            """
            import keras
            from tensorflow.keras import backend as K


            class Dropper(keras.layers.Layer):
                def __init__(self, seed=None, **kwargs):
                    super().__init__(**kwargs)
                    self.seed = seed
                    self.seed_generator = keras.random.SeedGenerator(seed)

                def call(self, x):
                    mask = keras.random.binomial(K.shape(x), counts=1, probabilities=0.9, seed=self.seed_generator)
                    return keras.random.dropout(x * mask, 0.5, seed=self.seed_generator)
            """,  # noqa: E501
        ),
        Flagged(
            """
            from tensorflow.keras import backend as K

            noise = K.random_normal((16, 4), stddev=0.5)
            """,
            """
            import keras

            noise = keras.random.normal((16, 4), stddev=0.5)
            """,
        ),
        Flagged(
            """
            from tensorflow.keras import backend as K

            noise = K.random_uniform((16, 4), seed=1)
            """
        ),
        Flagged(
            """
            from keras import backend as K

            class Unrecognised(SomeBase):
                def call(self, x):
                    return K.dropout(x, 0.5)  # no layer-owned SeedGenerator: left manual
            """
        ),
        Clean(
            """
            import keras

            noise = keras.random.normal((16, 4))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        mapping = BACKEND_RANDOM.get(site.symbol)
        if mapping is None:
            yield Report(
                site,
                f"`{site.symbol}` does not exist in Keras 3: create the weight with "
                "self.add_weight(shape, initializer=keras.initializers.RandomNormal(...) / "
                "RandomUniform(...)) or keras.Variable(keras.random.normal(...))",
            )
            return
        why = "does not exist in Keras 3"
        if site.context == Context.MODEL:
            yield _layer_report(site, mapping, why)
            return
        if site.context == Context.DATA:
            yield Report(
                site,
                f"`{site.symbol}` {why}; in a tf.data pipeline use tf.random.* (keras.random "
                "would return backend tensors inside the TensorFlow graph)",
            )
            return
        try:
            if site.scope.class_node is not None:
                # Not recognised as a layer, yet in a class: a draw there must be owned by
                # a layer's SeedGenerator (jax refuses unseeded draws in traced code).
                raise _NotExactError(
                    f"it is in the class `{site.scope.class_name}`, which kmigrate does not "
                    "recognise as a Keras layer, so no SeedGenerator can be given to it: "
                    "if it is a layer, draw with seed=self.seed_generator, a "
                    "keras.random.SeedGenerator created in __init__"
                )
            if "seed" in _bind(site, mapping.params):
                raise _NotExactError(
                    "an int seed gives keras.random the same numbers at every call; pass a "
                    "keras.random.SeedGenerator(seed) kept across calls instead"
                )
            edit = _rewrite(site, mapping, None)
        except _NotExactError as manual:
            yield Report(site, f"`{site.symbol}` {why} and was not rewritten: {manual}")
            return
        yield Report(
            site,
            f"`{site.symbol}` {why}: use `keras.{_short(mapping.target)}` (Keras's global "
            "SeedGenerator, seeded by keras.utils.set_random_seed)",
            fix=EditPlan((edit,), f"use {mapping.target}"),
        )


# Calls that only host-side code makes: it builds a functional model or drives one. A
# function making them is a script or test that feeds NumPy data to a model, not code a
# model traces, even when building from `Input` makes its context `model`.
_DRIVER_METHODS = frozenset(
    {
        "fit",
        "fit_generator",
        "compile",
        "predict",
        "predict_on_batch",
        "evaluate",
        "train_on_batch",
        "test_on_batch",
    }
)
_DRIVER_SYMBOL_SUFFIXES = (".Input", ".Model", ".Sequential")


def _drives_a_model(site: CallSite) -> bool:
    """Whether the outermost function around ``site`` builds or drives a model."""
    outer = next(
        (
            n
            for n in site.module.walk_path
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        ),
        None,
    )
    if outer is None:
        return True  # module-level code runs once, on the host
    return site.module.memo(("KM303-driver", outer), lambda: _calls_drivers(site.module, outer))


def _calls_drivers(module: ModuleInfo, function: ast.AST) -> bool:
    for node in code_walk(function):
        if node.__class__ is not ast.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if isinstance(func, ast.Attribute) and func.attr in _DRIVER_METHODS:
            return True
        symbol = module.resolve(func) or ""
        if symbol.endswith(_DRIVER_SYMBOL_SUFFIXES) or symbol in ("Input", "Model"):
            return True
    return False


class NumpyRandomInCall(Rule):
    id = "KM303"
    name = "numpy-random-in-call"
    summary = "`np.random.*` inside a layer's `call`: constant once the layer is traced."
    rationale = (
        "NumPy draws on the host when `call` runs as Python. Under `tf.function` (Keras 2 "
        "`fit`), `jax.jit` or `torch.compile` that happens once, at tracing, so every batch "
        "sees the same 'random' numbers. `keras.random.*` with the layer's SeedGenerator draws "
        "anew inside the compiled graph on every backend."
    )
    fix_safety = (
        "Changes behaviour on purpose: traced code gets a fresh draw per call, as eager code "
        "did. normal(loc, scale, size), uniform(low, high, size), standard_normal, random, "
        "rand(*dims) and randn(*dims) map to random.normal/uniform with the same parameters; "
        "the result is floatx() (float32) instead of NumPy's float64 (in a layer it met "
        "float32 tensors anyway). Without `size`, only literal loc/scale/low/high are "
        "rewritten (NumPy takes the shape from array parameters). Other np.random functions "
        "are reported for a manual port. NumPy in __init__/build (initial values) is left "
        "alone, and so is NumPy in a function that builds or drives a model (`Input`, "
        "`Model`, `fit`, `predict`...): a test or script making host-side data."
    )
    severity = Severity.WARNING
    contexts = frozenset({Context.MODEL})
    call_prefixes = ("np.random.",)
    examples = [
        Flagged(
            """
            import keras
            import numpy as np


            class Jitter(keras.layers.Layer):
                def __init__(self, scale, **kwargs):
                    super().__init__(**kwargs)
                    self.scale = scale

                def call(self, x):
                    return x + np.random.normal(0.0, self.scale, size=(4,))
            """,
            """
            import keras


            class Jitter(keras.layers.Layer):
                def __init__(self, scale, seed=None, **kwargs):
                    super().__init__(**kwargs)
                    self.seed = seed
                    self.seed_generator = keras.random.SeedGenerator(seed)
                    self.scale = scale

                def call(self, x):
                    return x + keras.random.normal(shape=(4,), mean=0.0, stddev=self.scale, seed=self.seed_generator)
            """,  # noqa: E501
        ),
        Flagged(
            """
            import keras
            import numpy as np


            class Mixer(keras.layers.Layer):
                def call(self, x):
                    return x[np.random.permutation(4)]
            """
        ),
        Clean(
            """
            import keras
            import numpy as np


            def test_model():
                x = np.random.uniform(0, 255, (2, 10))  # host-side test data, not model code
                inputs = keras.Input((10,))
                model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
                model.predict(x)
            """
        ),
        Clean(
            """
            import keras
            import numpy as np


            class Fixed(keras.layers.Layer):
                def build(self, input_shape):
                    self.w = self.add_weight(shape=(4,), initializer="zeros")
                    self.w.assign(np.random.normal(size=(4,)))

                def call(self, x):
                    return x * self.w
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        method = (site.scope.function_name or "").split(".")[0]
        if site.scope.class_node is not None and method != "call":
            return
        if site.scope.class_node is None and _drives_a_model(site):
            return  # host-side: builds inputs for a model it builds or trains, never traced
        why = "draws on the host, once per trace (the same numbers for every batch when compiled)"
        mapping = NUMPY_RANDOM.get(site.symbol)
        if mapping is None:
            yield Report(
                site,
                f"`{site.symbol}` {why} and was not rewritten: it has no direct keras.random "
                "counterpart; use keras.random.* with seed=self.seed_generator",
            )
            return
        yield _layer_report(site, mapping, why)


class TfRandomWithoutKerasEquivalent(Rule):
    id = "KM304"
    name = "tf-random-no-keras-equivalent"
    summary = "A TensorFlow random op in model code that has no exact `keras.random` rewrite."
    rationale = (
        "Stateless TF ops, Poisson sampling, candidate samplers and seed plumbing run only on "
        "the TensorFlow backend, and their semantics (tensor seeds, returning the same numbers "
        "for the same seed) do not map one-to-one onto keras.random."
    )
    fix_safety = "Never fixed: the message says what to use instead."
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL})
    call_prefixes = (*_TF_RANDOM_PREFIXES, "tf.nn.experimental.stateless_dropout")
    examples = [
        Flagged(
            """
            import keras
            import tensorflow as tf


            class Noise(keras.layers.Layer):
                def call(self, x, seed):
                    return x + tf.random.stateless_normal(tf.shape(x), seed=seed)
            """
        ),
        Clean(
            """
            import tensorflow as tf

            counts = tf.random.poisson([10], lam=3.0)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        symbol = site.symbol
        if (
            symbol in TF_RANDOM
            or symbol in SET_SEED
            or symbol in _NOT_A_DRAW
            or symbol.startswith(GENERATOR_PREFIXES)
        ):
            return
        reason = next(
            (why for fragment, why in _NO_EQUIVALENT if fragment in symbol),
            "it has no keras.random equivalent",
        ).format(name=symbol.rsplit("stateless_", 1)[-1])
        yield Report(site, f"`{symbol}` only runs on the TensorFlow backend: {reason}")


class TfSetSeed(Rule):
    id = "KM305"
    name = "tf-set-seed"
    summary = "`tf.random.set_seed` seeds only TensorFlow; use `keras.utils.set_random_seed`."
    rationale = (
        "On the JAX or PyTorch backend `tf.random.set_seed` leaves keras.random, NumPy and "
        "Python's `random` unseeded, so runs are not reproducible. "
        "`keras.utils.set_random_seed(n)` seeds Python, NumPy, TensorFlow (when installed), "
        "PyTorch on the torch backend, and Keras's global SeedGenerator."
    )
    fix_safety = (
        "A superset of the original: it still calls tf.random.set_seed(n) when TensorFlow is "
        "installed (keras/src/utils/rng_utils.py) and also seeds Python, NumPy and the backend. "
        "keras.utils.set_random_seed needs an int: a literal None is reported instead, and a "
        "non-int variable raises ValueError at run time (loudly)."
    )
    severity = Severity.WARNING
    call_symbols = SET_SEED
    examples = [
        Flagged(
            """
            import tensorflow as tf

            tf.random.set_seed(42)
            """,
            """
            import keras

            keras.utils.set_random_seed(42)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            tf.random.set_seed(None)
            """
        ),
        Clean(
            """
            import keras

            keras.utils.set_random_seed(42)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        seed = site.arg(0, "seed")
        message = f"`{site.symbol}` seeds only TensorFlow, not the Keras backend, NumPy or Python"
        if site.has_star_args or seed is None or _is_none(seed):
            yield Report(
                site,
                f"{message}; keras.utils.set_random_seed needs an int seed (use it, or drop "
                "the call to keep unseeded runs)",
            )
            return
        yield Report(
            site,
            f"{message}: use `keras.utils.set_random_seed`",
            fix=EditPlan(
                (CallEdit(site.span, "keras.utils.set_random_seed"),),
                "use keras.utils.set_random_seed",
            ),
        )


class TfRandomGenerator(Rule):
    id = "KM306"
    name = "tf-random-generator"
    summary = "`tf.random.Generator` (TensorFlow's RNG object) in code that should be portable."
    rationale = (
        "A `tf.random.Generator` holds TensorFlow state and returns TensorFlow tensors. "
        "Its Keras 3 counterpart is `keras.random.SeedGenerator`, passed as `seed=` to the "
        "`keras.random` functions."
    )
    fix_safety = (
        "Never fixed: the generator's methods (`g.normal(shape)`) must each become "
        "`keras.random.normal(shape, seed=g)`, and `split`/`make_seeds` have no counterpart. "
        "Once the attribute is a keras.random.SeedGenerator, KM301 reuses it."
    )
    severity = Severity.WARNING
    contexts = frozenset({Context.MODEL, Context.TRAINING_LOOP, Context.OTHER})
    call_prefixes = GENERATOR_PREFIXES
    examples = [
        Flagged(
            """
            import keras
            import tensorflow as tf


            class Noise(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.rng = tf.random.Generator.from_seed(1)

                def call(self, x):
                    return x + self.rng.normal(tf.shape(x))
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            rng = tf.random.get_global_generator()
            """
        ),
        Clean(
            """
            import keras

            rng = keras.random.SeedGenerator(1)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context == Context.MODEL:
            yield Report(
                site,
                f"`{site.symbol}` is TensorFlow-only RNG state in model code: make it "
                "`keras.random.SeedGenerator(seed)` and call `keras.random.normal(shape, "
                "seed=<it>)` (etc.) instead of its methods",
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` keeps TensorFlow RNG state: fine in TensorFlow-only scripts; for a "
            "backend-agnostic script use keras.random.* with a keras.random.SeedGenerator",
            severity=Severity.INFO,
        )


class TfRandomGlobalState(Rule):
    id = "KM307"
    name = "tf-random-global-state"
    summary = "TensorFlow's global-state random ops outside model code (scripts, training loops)."
    rationale = (
        "Outside layers, `tf.random.*` works on any backend as long as TensorFlow is installed, "
        "but the numbers are TensorFlow tensors from TensorFlow's global RNG. A script meant to "
        "run without TensorFlow, or seeded only through Keras, should draw with keras.random "
        "(with a SeedGenerator) or NumPy. Inside tf.data pipelines tf.random is the right tool "
        "and is not reported."
    )
    fix_safety = "Never fixed (informational): the code works; it is a dependency on TensorFlow."
    severity = Severity.INFO
    contexts = frozenset({Context.TRAINING_LOOP, Context.OTHER})
    call_prefixes = _TF_RANDOM_PREFIXES
    call_symbols = frozenset(s for s in TF_RANDOM if not s.startswith(_TF_RANDOM_PREFIXES))
    examples = [
        Flagged(
            """
            import tensorflow as tf

            x_train = tf.random.normal((256, 8))
            """
        ),
        Clean(
            """
            import tensorflow as tf

            tf.random.set_seed(1)
            dataset = tf.data.Dataset.range(8).map(lambda i: tf.random.uniform(()))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        symbol = site.symbol
        if symbol in SET_SEED or symbol in _NOT_A_DRAW or symbol.startswith(GENERATOR_PREFIXES):
            return
        mapping = TF_RANDOM.get(symbol)
        instead = f"keras.{_short(mapping.target)}" if mapping else "keras.random / NumPy"
        yield Report(
            site,
            f"`{symbol}` draws from TensorFlow's global RNG: fine with TensorFlow installed; for "
            f"backend-agnostic code use {instead} with a keras.random.SeedGenerator, seeded via "
            "keras.utils.set_random_seed",
        )
