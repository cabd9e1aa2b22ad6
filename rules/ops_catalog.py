"""The ops catalog: what every TensorFlow / Keras 2 backend op becomes in ``keras.ops``.

This module is data. Each :class:`OpEntry` says, for one TF symbol and its aliases
(``tf.math.reduce_mean`` = ``tf.reduce_mean``; ``K.*`` functions are their own
entries because their signatures differ), either how a call maps onto a Keras 3
function or why it cannot be mapped and what to write instead. ``rules/km2_ops/``
interprets the table; ``scripts/gen_ops_doc.py`` renders it as ``docs/ops.md``.

An entry is written with three small strings, parsed once:

- ``sig``: the TF signature exactly as ``inspect.signature`` shows it in the installed
  TensorFlow 2.21 / tf_keras 2.21 (``tests/differential/test_signatures.py`` checks
  this), e.g. ``"input_tensor, axis=None, keepdims=False, name=None"``;
- ``out``: the Keras argument list, in Python call syntax, naming TF parameters:
  ``"input_tensor, axis=axis, keepdims=keepdims"``. An item is

  - ``p`` - the TF argument ``p``, kept as written (omitted when not given);
  - ``p | 0`` - the same, with ``0`` written when the call does not give it (for
    defaults that differ, e.g. ``tf.argmax`` axis 0 versus ``ops.argmax`` axis None);
  - ``f(p, ...)`` - the argument translated by the value translator ``f``
    (``dtype``, ``padding``, ``window`` ..., see ``TRANSLATORS``); a translator may
    refuse (non-literal value whose meaning depends on the value): the call is manual;
  - a literal (``-1``, ``"channels_last"``, ``False``) - a new argument;
  - ``*p`` - a TF ``*args`` parameter, passed on positionally.

  A TF parameter that ``out`` does not mention must be absent or equal to an accepted
  value (its TF default unless ``accept`` says otherwise); ``name`` is always dropped.
- ``template``: instead of ``out``, an expression with ``{p}`` for the source text
  of argument ``p`` (``{(p)}`` parenthesises it unless it is atomic); ``ops.x`` and
  ``keras.x.y`` become qualified names the editor spells from the module's imports.

``builder`` names the few entries whose mapping depends on argument values in a way
the strings cannot say (``tf.matmul`` transpose flags, ``tf.shape``'s tensor-versus-
tuple result, ``tf.linalg.band_part`` -> ``tril``/``triu`` ...); the builders live in
``rules/km2_ops/_builders.py`` and each has an explanation here (``when``).

Nothing here imports TensorFlow; the module is imported by ``scan``.
"""

from __future__ import annotations

import ast
import enum
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------------------
# The vocabulary of the table.
# ---------------------------------------------------------------------------


class Status(str, enum.Enum):
    """How a catalog entry converts.

    ``exact``: always rewritten, for every call whose arguments can be bound.
    ``conditional``: rewritten when the call's arguments meet the entry's conditions
    (literal flags, arguments that must be absent ...); otherwise reported as manual.
    ``manual``: never rewritten; the finding gives the reason and a suggestion.
    """

    EXACT = "exact"
    CONDITIONAL = "conditional"
    MANUAL = "manual"


@dataclass(frozen=True)
class Param:
    """One TF parameter: its name and its default as source text (None = required)."""

    name: str
    default: str | None = None
    varargs: bool = False

    @property
    def default_value(self) -> Any:
        if self.default is None:
            return _NO_DEFAULT
        try:
            return ast.literal_eval(self.default)
        except (ValueError, SyntaxError):
            return self.default  # tf.float32 and other non-literals: compared as text


_NO_DEFAULT = object()


@dataclass(frozen=True)
class OutArg:
    """One argument of the Keras call (see the module docstring for the syntax)."""

    keyword: str | None  # None: positional
    param: str | None = None  # TF parameter it comes from; None: a new literal argument
    translator: str | None = None  # name of a value translator (km2_ops._translators.TRANSLATORS)
    translator_args: tuple[Any, ...] = ()
    default: str | None = None  # text written when the TF argument is absent
    literal: str | None = None  # text of a new argument (param None)
    star: bool = False  # a *args parameter


@dataclass(frozen=True)
class OpEntry:
    """One TF symbol (with its aliases) and how it converts."""

    symbols: tuple[str, ...]
    params: tuple[Param, ...] = ()
    target: str | None = None  # "keras.ops.mean"; None for manual entries and templates
    out: tuple[OutArg, ...] = ()
    template: str | None = None
    builder: str | None = None
    legacy: Mapping[str, str] = field(default_factory=dict)  # old keyword -> parameter
    accept: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    drop: frozenset[str] = frozenset({"name"})
    needs: tuple[str, ...] = ()  # parameters the automatic rewrite needs given
    when: str = ""  # the conditions, in words (builders; extra conditions)
    note: str = ""  # what a user should know about an automatic rewrite
    reason: str = ""  # manual entries: why there is no rewrite
    suggestion: str = ""  # manual entries: what to write instead
    section: str = ""

    @property
    def symbol(self) -> str:
        return self.symbols[0]

    @functools.cached_property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @functools.cached_property
    def mentioned(self) -> frozenset[str]:
        """TF parameters the rewrite uses (``out``, the template or the builder)."""
        names = {o.param for o in self.out if o.param}
        if self.template:
            names |= {p.name for p in self.params if _mentions(self.template, p.name)}
        return frozenset(names)

    @functools.cached_property
    def checked(self) -> tuple[Param, ...]:
        """Parameters the rewrite drops but only when absent or at an accepted value."""
        if self.builder:
            return tuple(p for p in self.params if p.name in self.accept)
        return tuple(
            p
            for p in self.params
            if p.name not in self.mentioned and p.name not in self.drop and not p.varargs
        )

    def accepted(self, name: str) -> tuple[Any, ...]:
        if name in self.accept:
            return self.accept[name]
        param = self.param(name)
        return () if param is None or param.default is None else (param.default_value,)

    @functools.cached_property
    def automatic(self) -> bool:
        return bool(self.target or self.template or self.builder)

    @functools.cached_property
    def renames_only(self) -> bool:
        """Called with one positional argument, the rewrite only renames the function
        (so a reference such as ``activation=tf.nn.relu`` can be renamed too)."""
        if not self.target or self.builder or self.template or not self.out or not self.params:
            return False
        first, *rest = self.out
        if first.param != self.params[0].name or first.keyword or first.translator:
            return False
        for out in rest:
            param = self.param(out.param) if out.param else None
            if param is None or param.default is None or out.default is not None:
                return False
        return all(p.default is not None or p.varargs for p in self.params[1:])

    @functools.cached_property
    def status(self) -> Status:
        if not self.automatic:
            return Status.MANUAL
        if self.conditions():
            return Status.CONDITIONAL
        return Status.EXACT

    def conditions(self) -> list[str]:
        """When the automatic rewrite applies, in words (empty: always)."""
        found: list[str] = []
        if self.when:
            found.append(self.when)
        for name in self.needs:
            found.append(f"`{name}` is given")
        for out in self.out:
            if out.translator and out.translator in REFUSING_TRANSLATORS:
                found.append(f"`{out.param}` {REFUSING_TRANSLATORS[out.translator]}")
        for param in self.checked:
            values = " or ".join(_show(v) for v in self.accepted(param.name))
            found.append(f"`{param.name}` is absent or {values}" if values else "")
        return [c for c in found if c]


def _mentions(template: str, name: str) -> bool:
    return "{" + name + "}" in template or "{(" + name + ")}" in template


def _show(value: Any) -> str:
    return value if isinstance(value, str) and value.startswith("tf.") else repr(value)


# Translators that can refuse a value, and the condition they impose (for the docs).
# The translators themselves are in km2_ops._translators.TRANSLATORS (tests check both agree).
REFUSING_TRANSLATORS: dict[str, str] = {
    "lit": "is a literal",
    "lower": "is a literal string",
    "padding": 'is "SAME" or "VALID"',
    "data_format": "is a literal channels-last or channels-first format",
    "window": "is a literal int or list (batch and channel entries 1)",
    "split": "is an int or a literal list of sizes",
    "sqrt_eps": "is a literal number",
    "not_none": "is not None",
    "qr_mode": "is a literal bool",
    "resize_method": 'is a literal "bilinear" or "nearest"',
    "norm_ord": "is a literal order",
    "int_lit": "is a literal int",
    "sizes": "is a literal list of non-negative sizes",
    "scalar": "is a literal number or a math.sqrt/exp/log... call",
    "k_padding": 'is "valid" or "same"',
}
# Translators that never refuse: they translate literals and keep anything else.
SAFE_TRANSLATORS = frozenset({"dtype", "none_to", "axes", "as_tensor"})


# ---------------------------------------------------------------------------
# Parsing the strings of an entry.
# ---------------------------------------------------------------------------


def py_literal(value: Any) -> str:
    """Source text of a literal, strings in double quotes (the project's style)."""
    if isinstance(value, str):
        text = repr(value)
        if text.startswith("'") and '"' not in value:
            text = '"' + text[1:-1] + '"'
        return text
    if isinstance(value, tuple):
        inner = ", ".join(py_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    return repr(value)


def _parse_sig(sig: str) -> tuple[Param, ...]:
    func = ast.parse(f"def f({sig}): pass").body[0]
    assert isinstance(func, ast.FunctionDef)
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    params = [
        Param(a.arg, None if d is None else ast.unparse(d)) for a, d in zip(positional, defaults)
    ]
    if args.vararg:
        params.append(Param(args.vararg.arg, None, varargs=True))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        params.append(Param(a.arg, None if d is None else ast.unparse(d)))
    return tuple(params)


def _out_item(keyword: str | None, node: ast.expr, params: set[str]) -> OutArg:
    default = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        try:
            default = py_literal(ast.literal_eval(node.right))
        except ValueError:  # an expression such as keras.config.floatx()
            default = qualify_names(ast.unparse(node.right))
        node = node.left
    if isinstance(node, ast.Starred) and isinstance(node.value, ast.Name):
        return OutArg(keyword, node.value.id, star=True)
    if isinstance(node, ast.Name) and node.id in params:
        return OutArg(keyword, node.id, default=default)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        first, *rest = node.args
        assert isinstance(first, ast.Name) and first.id in params, ast.unparse(node)
        extra = tuple(ast.literal_eval(a) for a in rest)
        return OutArg(keyword, first.id, node.func.id, extra, default=default)
    return OutArg(keyword, literal=py_literal(ast.literal_eval(node)))


def _parse_out(out: str, params: tuple[Param, ...]) -> tuple[OutArg, ...]:
    call = ast.parse(f"f({out})", mode="eval").body
    assert isinstance(call, ast.Call)
    names = {p.name for p in params}
    items = [_out_item(None, a, names) for a in call.args]
    items += [_out_item(k.arg, k.value, names) for k in call.keywords]
    return tuple(items)


_QUALIFIED = re.compile(r"(?<![\w.{])(ops|keras)((?:\.[A-Za-z_]\w*)+)")


def qualify_names(text: str) -> str:
    """``ops.sum(...)`` -> ``{name:keras.ops.sum}(...)``: the editor spells the names."""

    def qualify(match: re.Match[str]) -> str:
        root, rest = match.groups()
        return "{name:" + ("keras.ops" if root == "ops" else "keras") + rest + "}"

    return _QUALIFIED.sub(qualify, text)


def _target(name: str | None) -> str | None:
    if name is None or name.startswith("keras."):
        return name
    return f"keras.ops.{name}"


def op(
    symbols: str,
    sig: str,
    target: str | None = None,
    out: str | None = None,
    **extra: Any,
) -> OpEntry:
    """An automatic entry. ``out`` defaults to the required parameters, positionally."""
    params = _parse_sig(sig)
    if target is not None and out is None:  # the required parameters, in order
        out = ", ".join(p.name for p in params if p.default is None and not p.varargs)
    parsed = _parse_out(out, params) if out else ()
    for key in ("accept",):
        if key in extra:
            extra[key] = {k: tuple(v) for k, v in extra[key].items()}
    if "drop" in extra:
        extra["drop"] = frozenset({"name", *extra["drop"]})
    return OpEntry(
        symbols=tuple(symbols.split()),
        params=params,
        target=_target(target),
        out=parsed,
        **extra,
    )


def manual(symbols: str, reason: str, suggestion: str) -> OpEntry:
    """An entry with no automatic rewrite: why, and what to write instead."""
    return OpEntry(symbols=tuple(symbols.split()), reason=reason, suggestion=suggestion)


# ---------------------------------------------------------------------------
# Shared wording.
# ---------------------------------------------------------------------------

_REDUCE = "input_tensor, axis=None, keepdims=False, name=None"
_REDUCE_OUT = "input_tensor, axis=axis, keepdims=keepdims"
_REDUCE_LEGACY = {"keep_dims": "keepdims", "reduction_indices": "axis"}
_REDUCE_V1 = (
    "input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None"
)
_K_REDUCE = "x, axis=None, keepdims=False"
_K_REDUCE_OUT = "x, axis=axis, keepdims=keepdims"
_INT_RESULT = (
    "TensorFlow returns a tensor of the input's dtype for integer inputs; keras.ops "
    "follows NumPy (a float mean of integers). Identical for floating-point inputs."
)
_TRUEDIV = (
    "Integer inputs: TensorFlow's true division returns float64, keras.ops float32 "
    "(floatx). Identical for floating-point inputs."
)
_INDEX_DTYPE = (
    "TensorFlow returns int64 indices by default, keras.ops int32 (the index dtype Keras "
    "uses on every backend; JAX has no int64 without x64). The values are identical; "
    '`output_type` is dropped. Cast with ops.cast(..., "int64") if a consumer needs int64.'
)
_CHANNELS_LAST = (
    "The TF op is channels-last unless data_format says otherwise; the rewrite writes "
    'data_format="channels_last" explicitly because keras.ops follows '
    "keras.config.image_data_format()."
)
_FLOATX = (
    "TensorFlow's default dtype is float32; keras.ops uses keras.config.floatx(), which "
    "is float32 unless the project changed it."
)
_COMPLEX = (
    "keras.ops has no complex tensors on every backend: its FFTs take and return "
    "(real, imag) pairs."
)
_RANDOM_INITIALIZER = (
    "The same distribution with the same defaults (TF2 and Keras 3 agree); like every "
    "random op in Keras 3 it draws other numbers than TensorFlow, also with a seed (the "
    "differential test compares the distribution's moments)."
)
_RAGGED = "ragged and sparse tensors exist only on the TensorFlow backend"
_GRAPH_ONLY = "graph-building API: there is no graph to build on JAX or PyTorch"
_STATE = (
    "in tf_keras this returns a tf.Variable (state), not a tensor; in Keras 3 state is "
    "created with self.add_weight(...) in __init__/build"
)
_DATA = (
    "input-pipeline op: keep it in the tf.data pipeline (tf.data is a portable input to "
    "model.fit on every backend) or use a keras.layers preprocessing layer"
)


# ---------------------------------------------------------------------------
# The table, by section.
# ---------------------------------------------------------------------------


def _same_signature(pairs: Iterable[tuple[str, str]], sig: str = "x, name=None") -> list[OpEntry]:
    return [op(symbols, sig, target) for symbols, target in pairs]


ELEMENTWISE = [
    *_same_signature(
        [
            ("tf.math.abs tf.abs", "abs"),
            ("tf.math.negative tf.negative", "negative"),
            ("tf.math.sign tf.sign", "sign"),
            ("tf.math.sqrt tf.sqrt tf.compat.v1.sqrt", "sqrt"),
            ("tf.math.rsqrt", "rsqrt"),
            ("tf.math.square tf.square tf.compat.v1.math.square tf.compat.v1.square", "square"),
            ("tf.math.exp tf.exp tf.compat.v1.exp", "exp"),
            ("tf.math.expm1", "expm1"),
            ("tf.math.log tf.compat.v1.log", "log"),
            ("tf.math.log1p", "log1p"),
            ("tf.math.sin tf.sin", "sin"),
            ("tf.math.cos tf.cos", "cos"),
            ("tf.math.tan tf.tan", "tan"),
            ("tf.math.asin tf.asin", "arcsin"),
            ("tf.math.acos tf.acos", "arccos"),
            ("tf.math.atan tf.atan", "arctan"),
            ("tf.math.sinh tf.sinh", "sinh"),
            ("tf.math.cosh tf.cosh", "cosh"),
            ("tf.math.tanh tf.tanh tf.nn.tanh", "tanh"),
            ("tf.math.asinh tf.asinh", "arcsinh"),
            ("tf.math.acosh tf.acosh", "arccosh"),
            ("tf.math.atanh tf.atanh", "arctanh"),
            ("tf.math.floor tf.floor", "floor"),
            ("tf.math.ceil", "ceil"),
            ("tf.math.round tf.round", "round"),
            ("tf.math.rint", "round"),
            ("tf.math.reciprocal", "reciprocal"),
            ("tf.math.erf", "erf"),
            ("tf.math.erfc", "erfc"),
            ("tf.math.erfinv", "erfinv"),
            ("tf.math.sigmoid tf.sigmoid tf.nn.sigmoid", "sigmoid"),
            ("tf.math.log_sigmoid", "log_sigmoid"),
            ("tf.math.is_nan", "isnan"),
            ("tf.math.is_inf", "isinf"),
            ("tf.math.is_finite", "isfinite"),
            ("tf.math.logical_not tf.logical_not", "logical_not"),
            ("tf.math.bessel_i0", "i0"),
            ("tf.math.conj", "conj"),
            ("tf.bitwise.invert", "bitwise_invert"),
        ]
    ),
    *_same_signature(
        [("tf.math.real", "real"), ("tf.math.angle", "angle")],
        "input, name=None",
    ),
    *_same_signature(
        [
            ("tf.math.softplus tf.nn.softplus", "softplus"),
            ("tf.math.softsign tf.nn.softsign", "softsign"),
        ],
        "features, name=None",
    ),
    op(
        "tf.math.invert_permutation",
        "x, name=None",
        "argsort",
        note="The inverse of a permutation is its argsort (no ties in a permutation).",
    ),
    manual(
        "tf.math.imag",
        "keras.ops.imag raises for real tensors on PyTorch (TF returns zeros), and complex "
        "tensors are not portable",
        "ops.zeros_like(x) for real tensors; keep (real, imag) pairs for complex values",
    ),
    manual(
        "tf.math.lgamma",
        "keras.ops has no log-gamma function",
        "keep the math in a backend-specific helper or approximate with a Stirling series",
    ),
    manual(
        "tf.math.digamma",
        "keras.ops has no digamma function",
        "keep the math in a backend-specific helper",
    ),
    manual(
        "tf.math.ndtri",
        "keras.ops has no inverse normal CDF",
        "use ops.erfinv: ndtri(p) = sqrt(2) * ops.erfinv(2 * p - 1)",
    ),
    manual(
        "tf.math.bessel_i0e tf.math.bessel_i1 tf.math.bessel_i1e",
        "keras.ops has only i0 among the Bessel functions",
        "for i0e use ops.i0(x) * ops.exp(-ops.abs(x)) (overflows for large |x|)",
    ),
    manual(
        "tf.math.reciprocal_no_nan",
        "keras.ops has no reciprocal_no_nan",
        "use ops.divide_no_nan(ops.ones_like(x), x)",
    ),
    manual(
        "tf.math.xlogy tf.math.xlog1py tf.math.xdivy",
        "keras.ops has no xlogy-style functions (0 where x == 0, including the gradient)",
        "use ops.where(x == 0, 0.0, x * ops.log(y)) and check the gradient at x == 0",
    ),
    manual(
        "tf.math.polyval",
        "keras.ops has no polynomial evaluation",
        "write Horner's rule with a Python loop over the coefficients",
    ),
    manual(
        "tf.math.lbeta tf.math.igamma tf.math.igammac tf.math.betainc tf.math.zeta "
        "tf.math.polygamma",
        "keras.ops has no special functions beyond erf/erfinv/i0",
        "keep the computation in a backend-specific helper",
    ),
]

BINARY = [
    *_same_signature(
        [
            ("tf.math.add tf.add", "add"),
            ("tf.math.subtract tf.subtract", "subtract"),
            ("tf.math.multiply tf.multiply", "multiply"),
            ("tf.math.maximum tf.maximum", "maximum"),
            ("tf.math.minimum tf.minimum", "minimum"),
            ("tf.math.pow tf.pow", "power"),
            ("tf.math.floordiv", "floor_divide"),
            ("tf.math.floormod tf.math.mod", "mod"),
            ("tf.truncatemod", "fmod"),
            ("tf.math.divide_no_nan", "divide_no_nan"),
            ("tf.math.equal tf.equal", "equal"),
            ("tf.math.not_equal tf.not_equal", "not_equal"),
            ("tf.math.greater tf.greater", "greater"),
            ("tf.math.greater_equal tf.greater_equal", "greater_equal"),
            ("tf.math.less tf.less", "less"),
            ("tf.math.less_equal tf.less_equal", "less_equal"),
            ("tf.math.logical_and tf.logical_and", "logical_and"),
            ("tf.math.logical_or tf.logical_or", "logical_or"),
            ("tf.bitwise.bitwise_and", "bitwise_and"),
            ("tf.bitwise.bitwise_or", "bitwise_or"),
            ("tf.bitwise.bitwise_xor", "bitwise_xor"),
            ("tf.bitwise.left_shift", "left_shift"),
            ("tf.bitwise.right_shift", "right_shift"),
        ],
        "x, y, name=None",
    ),
    op("tf.math.logical_xor", "x, y, name='LogicalXor'", "logical_xor", "x, y"),
    op("tf.math.nextafter", "x1, x2, name=None", "nextafter", "x1, x2"),
    op("tf.math.atan2 tf.atan2", "y, x, name=None", "arctan2", "y, x"),
    op("tf.math.divide tf.divide", "x, y, name=None", "divide", "x, y", note=_TRUEDIV),
    op("tf.math.truediv tf.truediv", "x, y, name=None", "true_divide", "x, y", note=_TRUEDIV),
    op("tf.realdiv", "x, y, name=None", "divide", "x, y"),
    op("tf.math.scalar_mul tf.scalar_mul", "scalar, x, name=None", "multiply", "scalar, x"),
    op(
        "tf.math.squared_difference",
        "x, y, name=None",
        template="ops.square(ops.subtract({x}, {y}))",
    ),
    op(
        "tf.math.add_n tf.add_n",
        "inputs, name=None",
        template="ops.sum(ops.stack({inputs}, axis=0), axis=0)",
        note="Sums the stacked inputs; the inputs must have one shape, as tf.add_n requires.",
    ),
    manual(
        "tf.truncatediv",
        "keras.ops has no truncating integer division (floor_divide rounds toward -inf)",
        "for integers of one sign use ops.floor_divide; otherwise "
        "ops.sign(x) * ops.sign(y) * ops.floor_divide(ops.abs(x), ops.abs(y))",
    ),
    manual(
        "tf.math.multiply_no_nan",
        "keras.ops has no multiply_no_nan (0 where y == 0 even if x is nan or inf)",
        "use ops.where(y == 0, 0.0, x * y)",
    ),
]

REDUCTIONS = [
    *(
        op(symbols, _REDUCE, target, _REDUCE_OUT, legacy=_REDUCE_LEGACY, note=note)
        for symbols, target, note in [
            ("tf.math.reduce_sum tf.reduce_sum", "sum", ""),
            ("tf.math.reduce_mean tf.reduce_mean", "mean", _INT_RESULT),
            ("tf.math.reduce_max tf.reduce_max", "max", ""),
            ("tf.math.reduce_min tf.reduce_min", "min", ""),
            ("tf.math.reduce_prod tf.reduce_prod", "prod", ""),
            ("tf.math.reduce_all tf.reduce_all", "all", ""),
            ("tf.math.reduce_any tf.reduce_any", "any", ""),
            ("tf.math.reduce_logsumexp tf.reduce_logsumexp", "logsumexp", ""),
            ("tf.math.reduce_std", "std", _INT_RESULT),
            ("tf.math.reduce_variance", "var", _INT_RESULT),
        ]
    ),
    op(
        "tf.math.reduce_euclidean_norm",
        _REDUCE,
        "norm",
        "input_tensor, axis=axes(axis), keepdims=keepdims",
        note=_INT_RESULT,
    ),
    *(
        op(
            f"tf.compat.v1.reduce_{name} tf.compat.v1.math.reduce_{name}",
            _REDUCE_V1,
            name,
            "input_tensor, axis=axis, keepdims=none_to(keepdims, False)",
            legacy=_REDUCE_LEGACY,
            drop=["reduction_indices", "keep_dims"],
            note="TF1 spelling: keep_dims and reduction_indices are the old names of "
            "keepdims and axis.",
        )
        for name in ("sum", "mean", "max", "min", "prod", "any", "all")
    ),
    *(
        op(symbols, _K_REDUCE, target, _K_REDUCE_OUT)
        for symbols, target in [
            ("K.sum", "sum"),
            ("K.mean", "mean"),
            ("K.max", "max"),
            ("K.min", "min"),
            ("K.prod", "prod"),
            ("K.std", "std"),
            ("K.var", "var"),
            ("K.any", "any"),
            ("K.all", "all"),
            ("K.logsumexp", "logsumexp"),
        ]
    ),
    op(
        "tf.math.argmax tf.argmax",
        "input, axis=None, output_type=tf.int64, name=None",
        "argmax",
        "input, axis=none_to(axis, 0) | 0",
        legacy={"dimension": "axis"},
        accept={"output_type": ["int32", "int64"]},
        note="TensorFlow reduces axis 0 when axis is absent or None; keras.ops would "
        "flatten, so the rewrite writes axis=0. " + _INDEX_DTYPE,
    ),
    op(
        "tf.math.argmin tf.argmin",
        "input, axis=None, output_type=tf.int64, name=None",
        "argmin",
        "input, axis=none_to(axis, 0) | 0",
        legacy={"dimension": "axis"},
        accept={"output_type": ["int32", "int64"]},
        note="As tf.argmax: axis=0 written explicitly; int32 indices.",
    ),
    op(
        "K.argmax",
        "x, axis=-1",
        "argmax",
        "x, axis=axis | -1",
        note="K.argmax defaults to the last axis; written explicitly. " + _INDEX_DTYPE,
    ),
    op("K.argmin", "x, axis=-1", "argmin", "x, axis=axis | -1", note="As K.argmax."),
    op(
        "tf.math.count_nonzero",
        "input, axis=None, keepdims=None, dtype=tf.int64, name=None",
        "count_nonzero",
        "input, axis=axes(axis)",
        accept={"keepdims": [None, False], "dtype": ["int32", "int64"]},
        note=_INDEX_DTYPE.replace("indices", "counts"),
    ),
    op(
        "tf.math.cumsum tf.cumsum",
        "x, axis=0, exclusive=False, reverse=False, name=None",
        "cumsum",
        "x, axis=axis | 0",
        note="keras.ops.cumsum flattens when axis is None; TF's default axis 0 is written.",
    ),
    op(
        "tf.math.cumprod",
        "x, axis=0, exclusive=False, reverse=False, name=None",
        "cumprod",
        "x, axis=axis | 0",
    ),
    op("K.cumsum", "x, axis=0", "cumsum", "x, axis=axis | 0"),
    op("K.cumprod", "x, axis=0", "cumprod", "x, axis=axis | 0"),
    op(
        "tf.math.top_k tf.nn.top_k",
        "input, k=1, sorted=True, index_type=tf.int32, name=None",
        builder="top_k",
        accept={"index_type": ["int32"]},
        note="keras.ops.top_k returns a plain (values, indices) tuple: `.values` and "
        "`.indices` are rewritten to [0] and [1]. Indices are int32 (int64 on PyTorch).",
    ),
    op(
        "tf.math.in_top_k tf.nn.in_top_k",
        "targets, predictions, k, name=None",
        "in_top_k",
        "targets, predictions, k",
        note="Ties at the k-th value may be counted differently.",
    ),
    op(
        "K.in_top_k",
        "predictions, targets, k",
        "in_top_k",
        "targets, predictions, k",
        note="Argument order differs: K.in_top_k(predictions, targets, k).",
    ),
    manual(
        "tf.math.segment_sum",
        "tf.math.segment_sum infers the number of segments from the data; "
        "keras.ops.segment_sum needs num_segments on JAX (a static size)",
        "ops.segment_sum(data, segment_ids, num_segments=n, sorted=True) with n known",
    ),
    op(
        "tf.math.unsorted_segment_sum",
        "data, segment_ids, num_segments, name=None",
        "segment_sum",
        "data, segment_ids, num_segments=num_segments",
    ),
    op(
        "tf.math.unsorted_segment_prod",
        "data, segment_ids, num_segments, name=None",
        "segment_prod",
        "data, segment_ids, num_segments=num_segments",
    ),
    manual(
        "tf.math.segment_max tf.math.segment_min tf.math.unsorted_segment_max "
        "tf.math.unsorted_segment_min",
        "an empty segment gives 0 (sorted) or the dtype's lowest value in TensorFlow, and "
        "-inf/+inf in keras.ops.segment_max/segment_min",
        "use ops.segment_max(data, ids, num_segments=n) and replace the infinities with "
        "ops.where if empty segments can occur",
    ),
    manual(
        "tf.math.segment_mean tf.math.unsorted_segment_mean",
        "keras.ops has no segment mean",
        "divide ops.segment_sum(data, ids, n) by ops.segment_sum(ops.ones_like(data), ids, n)",
    ),
    manual(
        "tf.math.cumulative_logsumexp",
        "keras.ops has no cumulative logsumexp",
        "use ops.log(ops.cumsum(ops.exp(x - m), axis)) + m with m = ops.max(x)",
    ),
    manual(
        "tf.math.bincount",
        "tf.math.bincount flattens any input and has maxlength/axis options; "
        "keras.ops.bincount counts 1-D rows and needs a static length under jit",
        "use ops.bincount(ops.reshape(x, (-1,)), minlength=n) for non-negative ints",
    ),
    manual(
        "tf.math.confusion_matrix",
        "keras.ops has no confusion matrix",
        "use ops.segment_sum(ops.ones_like(labels), labels * n + predictions, n * n) and reshape "
        "(n, n), or keras.metrics",
    ),
    manual(
        "tf.math.is_non_decreasing tf.math.is_strictly_increasing",
        "keras.ops has no monotonicity predicates",
        "use ops.all(ops.diff(ops.reshape(x, (-1,))) >= 0) (> 0 for strict)",
    ),
    manual(
        "tf.histogram_fixed_width tf.histogram_fixed_width_bins",
        "keras.ops.histogram returns (counts, edges) with NumPy binning rules",
        "use ops.histogram(x, bins=n, range=(lo, hi))[0] and check the edge handling",
    ),
]

ARRAYS = [
    op("tf.reshape", "tensor, shape, name=None", "reshape", "tensor, shape"),
    op("K.reshape", "x, shape", "reshape", "x, shape"),
    op("K.flatten", "x", "reshape", "x, (-1,)"),
    op(
        "K.batch_flatten",
        "x",
        template="ops.reshape({x}, (ops.shape({x})[0], -1))",
    ),
    op(
        "tf.transpose",
        "a, perm=None, conjugate=False, name='transpose'",
        "transpose",
        "a, axes=perm",
    ),
    op("K.transpose", "x", "transpose"),
    op("K.permute_dimensions", "x, pattern", "transpose", "x, axes=pattern"),
    op(
        "tf.linalg.matrix_transpose",
        "a, name='matrix_transpose', conjugate=False",
        "swapaxes",
        "a, -1, -2",
    ),
    op(
        "tf.expand_dims",
        "input, axis, name=None",
        "expand_dims",
        "input, axis",
        legacy={"dim": "axis"},
    ),
    op(
        "K.expand_dims",
        "x, axis=-1",
        "expand_dims",
        "x, axis | -1",
        note="K.expand_dims defaults to the last axis; keras.ops needs it: written.",
    ),
    op(
        "tf.squeeze",
        "input, axis=None, name=None",
        "squeeze",
        "input, axis=axis",
        legacy={"squeeze_dims": "axis"},
    ),
    op("K.squeeze", "x, axis", "squeeze", "x, axis=axis"),
    op("tf.concat", "values, axis, name='concat'", "concatenate", "values, axis=axis"),
    op(
        "K.concatenate",
        "tensors, axis=-1",
        "concatenate",
        "tensors, axis=axis | -1",
        note="K.concatenate joins on the last axis by default, keras.ops on axis 0: the "
        "rewrite writes axis=-1.",
    ),
    op("tf.stack", "values, axis=0, name='stack'", "stack", "values, axis=axis"),
    op(
        "tf.split",
        "value, num_or_size_splits, axis=0, num=None, name='split'",
        "split",
        "value, split(num_or_size_splits), axis=axis",
        note="tf.split takes section SIZES, keras.ops.split cut INDICES: an int (equal "
        "sections) is kept, a literal list of sizes [2, 3, 5] becomes the indices [2, 5].",
    ),
    op(
        "tf.parallel_stack",
        "values, name='parallel_stack'",
        "stack",
        "values",
        note="tf.parallel_stack works only in graph mode; ops.stack works everywhere.",
    ),
    op("K.stack", "x, axis=0", "stack", "x, axis=axis"),
    op(
        "tf.unstack",
        "value, num=None, axis=0, name='unstack'",
        "unstack",
        "value, num=num, axis=axis",
    ),
    op("tf.tile", "input, multiples, name=None", "tile", "input, multiples"),
    op("K.tile", "x, n", "tile", "x, n"),
    op("tf.repeat", "input, repeats, axis=None, name=None", "repeat", "input, repeats, axis=axis"),
    op("K.repeat_elements", "x, rep, axis", "repeat", "x, rep, axis=axis"),
    op(
        "K.repeat",
        "x, n",
        template="ops.repeat(ops.expand_dims({x}, 1), {n}, axis=1)",
    ),
    op("tf.broadcast_to", "input, shape, name=None", "broadcast_to", "input, shape"),
    op("tf.reverse", "tensor, axis, name=None", "flip", "tensor, axis=axis"),
    op("K.reverse", "x, axes", "flip", "x, axis=axes"),
    op("tf.roll", "input, shift, axis, name=None", "roll", "input, shift, axis=axis"),
    op(
        "tf.slice",
        "input_, begin, size, name=None",
        builder="slice",
        when="`size` is a literal list of non-negative sizes (keras.ops.slice(input_, "
        "begin, size)), or `begin` and `size` are literal lists and `size` uses -1, TF's "
        "'to the end' that keras.ops.slice lacks (a subscript, input_[b:b + s, b:])",
    ),
    op(
        "tf.pad",
        "tensor, paddings, mode='CONSTANT', constant_values=0, name=None",
        "pad",
        "tensor, paddings, mode=lower(mode, 'constant', 'reflect'), "
        "constant_values=constant_values",
        note='Modes are lower case in keras.ops ("CONSTANT" -> "constant"). "SYMMETRIC" '
        'stays manual: keras.ops.pad(mode="symmetric") gives different numbers on PyTorch '
        "(Keras 3.15; found by the differential test).",
        suggestion='for mode="SYMMETRIC" mirror with ops.concatenate of ops.flip slices',
    ),
    op(
        "tf.gather",
        "params, indices, validate_indices=None, axis=None, batch_dims=0, name=None",
        "take",
        "params, indices, axis=none_to(axis, 0) | 0",
        drop=["validate_indices"],
        note="tf.gather reads axis 0 by default, keras.ops.take flattens: axis=0 is written.",
    ),
    op("K.gather", "reference, indices", "take", "reference, indices, axis=0"),
    op(
        "tf.where",
        "condition, x=None, y=None, name=None",
        "where",
        "condition, x, y",
        needs=("x", "y"),
        reason="tf.where(condition) with one argument returns the (num_true, rank) int64 "
        "matrix of the true coordinates, a data-dependent shape that JAX cannot trace",
        suggestion="keep the three-argument form (ops.where(c, x, y)); if you need the "
        "coordinates, ops.stack(ops.nonzero(c), axis=1) works eagerly only",
    ),
    op(
        "tf.one_hot",
        "indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None",
        "one_hot",
        "indices, depth, axis=none_to(axis, -1), dtype=dtype(dtype)",
        note=_FLOATX,
    ),
    op("K.one_hot", "indices, num_classes", "one_hot", "indices, num_classes"),
    op(
        "tf.sequence_mask",
        "lengths, maxlen=None, dtype=tf.bool, name=None",
        template="ops.less(ops.arange({maxlen}), ops.expand_dims({lengths}, -1))",
        needs=("maxlen",),
        accept={"dtype": ["bool"]},
        reason="without maxlen the mask width is max(lengths), a data-dependent shape",
        suggestion="pass maxlen; or ops.arange(n) < ops.expand_dims(lengths, -1)",
    ),
    op(
        "tf.clip_by_value",
        "t, clip_value_min, clip_value_max, name=None",
        "clip",
        "t, clip_value_min, clip_value_max",
    ),
    op(
        "K.clip",
        "x, min_value, max_value",
        "clip",
        "x, not_none(min_value), not_none(max_value)",
        note="K.clip raised max_value to min_value when max_value < min_value.",
    ),
    op("tf.meshgrid", "*args, indexing='xy', name=None", "meshgrid", "*args, indexing=indexing"),
    op(
        "tf.searchsorted",
        "sorted_sequence, values, side='left', out_type=tf.int32, name=None",
        "searchsorted",
        "sorted_sequence, values, side=side",
        accept={"out_type": ["int32", "int64"]},
        note="keras.ops.searchsorted takes a 1-D sorted_sequence (batched TF inputs raise).",
    ),
    op(
        "tf.sort",
        "values, axis=-1, direction='ASCENDING', name=None",
        builder="sort",
        when='`direction` is a literal "ASCENDING" or "DESCENDING"',
    ),
    op(
        "tf.argsort",
        "values, axis=-1, direction='ASCENDING', stable=False, name=None",
        builder="sort",
        accept={"stable": [False, True]},
        when='`direction` is a literal "ASCENDING" or "DESCENDING"',
        note="Ties may be ordered differently (keras.ops.argsort is not guaranteed stable).",
    ),
    op(
        "tf.scatter_nd",
        "indices, updates, shape, bad_indices_policy='', name=None",
        "scatter",
        "as_tensor(indices), updates, shape",
        note="Duplicate indices are summed, as in TensorFlow.",
    ),
    op(
        "tf.tensor_scatter_nd_update",
        "tensor, indices, updates, name=None",
        "scatter_update",
        "tensor, indices, updates",
    ),
    *(
        op(
            f"tf.tensor_scatter_nd_{kind}",
            "tensor, indices, updates, bad_indices_policy='', name=None",
            "scatter_update",
            f"tensor, indices, updates, reduction={kind!r}",
        )
        for kind in ("add", "max", "min")
    ),
    manual(
        "tf.tensor_scatter_nd_sub",
        "keras.ops.scatter_update has no subtract reduction",
        'use ops.scatter_update(tensor, indices, -updates, reduction="add")',
    ),
    manual(
        "tf.gather_nd",
        "keras.ops has no gather_nd",
        "for indices over the leading axes flatten them and use ops.take; per-row gathers "
        "are ops.take_along_axis",
    ),
    manual(
        "tf.strided_slice",
        "explicit begin/end masks have no keras.ops equivalent",
        "use Python slicing, x[a:b:s, ...], which works on every backend",
    ),
    manual(
        "tf.boolean_mask tf.ragged.boolean_mask",
        "the result's shape depends on the data (number of true entries); JAX cannot trace it",
        "keep the shape: ops.where(mask[..., None], x, 0) and a mask downstream",
    ),
    manual(
        "tf.dynamic_partition tf.dynamic_stitch",
        "data-dependent shapes",
        "use masks (ops.where) or ops.segment_sum with fixed num_segments",
    ),
    manual(
        "tf.unique tf.unique_with_counts",
        "the number of unique values is data-dependent",
        "use ops.unique(x, size=n, fill_value=...) with a static size (works under jit)",
    ),
    manual(
        "tf.batch_to_space tf.space_to_batch tf.space_to_batch_nd tf.nn.space_to_batch",
        "keras.ops has no space/batch reshuffles",
        "write the reshape/transpose sequence with ops.reshape and ops.transpose",
    ),
    manual(
        "tf.reverse_sequence",
        "keras.ops has no per-row reverse",
        "build indices with ops.arange and lengths, then ops.take_along_axis",
    ),
    manual(
        "tf.linalg.diag",
        "tf.linalg.diag builds a batch of diagonal matrices from the last axis; "
        "keras.ops.diag (NumPy) builds one matrix from a 1-D input and EXTRACTS the "
        "diagonal of a 2-D input",
        "1-D input: ops.diag(v); batched: ops.expand_dims(v, -1) * ops.eye(n)",
    ),
    manual(
        "tf.linalg.set_diag",
        "keras.ops has no set_diag",
        "x * (1 - ops.eye(n)) + ops.expand_dims(d, -1) * ops.eye(n)",
    ),
    manual(
        "tf.linalg.tensor_diag_part tf.linalg.tensor_diag",
        "rank-generic diagonal ops have no keras.ops equivalent",
        "use ops.diagonal / ops.diag on reshaped inputs",
    ),
    manual(
        "tf.ensure_shape",
        "static shape assertion for the TF graph",
        "drop it, or check x.shape in Python (static shapes are known while tracing)",
    ),
    manual(
        "tf.unravel_index",
        "TF returns a (rank, N) tensor; keras.ops.unravel_index returns a tuple of arrays",
        "ops.stack(ops.unravel_index(indices, shape), axis=0)",
    ),
]

CREATION = [
    op(
        "tf.zeros",
        "shape, dtype=tf.float32, name=None, layout=None",
        "zeros",
        "shape, dtype=dtype(dtype)",
        note=_FLOATX,
    ),
    op(
        "tf.ones",
        "shape, dtype=tf.float32, name=None, layout=None",
        "ones",
        "shape, dtype=dtype(dtype)",
        note=_FLOATX,
    ),
    op(
        "tf.zeros_like",
        "input, dtype=None, name=None, layout=None",
        "zeros_like",
        "input, dtype=dtype(dtype)",
    ),
    op(
        "tf.ones_like",
        "input, dtype=None, name=None, layout=None",
        "ones_like",
        "input, dtype=dtype(dtype)",
    ),
    op("K.zeros_like", "x, dtype=None, name=None", "zeros_like", "x, dtype=dtype(dtype)"),
    op("K.ones_like", "x, dtype=None, name=None", "ones_like", "x, dtype=dtype(dtype)"),
    op(
        "tf.fill",
        "dims, value, name=None, layout=None",
        builder="fill",
        when="`value` is a literal (keras.ops.full defaults to floatx, TF to the value's "
        "dtype, so an int or bool literal gets dtype= written)",
    ),
    op(
        "tf.eye tf.linalg.eye",
        "num_rows, num_columns=None, batch_shape=None, dtype=tf.float32, name=None",
        "eye",
        "num_rows, M=num_columns, dtype=dtype(dtype)",
        note=_FLOATX,
    ),
    op(
        "tf.range",
        "start, limit=None, delta=1, dtype=None, name='range'",
        "arange",
        "start, stop=limit, step=delta, dtype=dtype(dtype)",
    ),
    op(
        "K.arange",
        "start, stop=None, step=1, dtype='int32'",
        "arange",
        "start, stop=stop, step=step, dtype=dtype(dtype) | 'int32'",
        note="K.arange returns int32 by default (even for float bounds): written.",
    ),
    op(
        "tf.linspace",
        "start, stop, num, name=None, axis=0",
        "linspace",
        "start, stop, num, axis=axis",
    ),
    op(
        "tf.constant",
        "value, dtype=None, shape=None, name='Const'",
        "convert_to_tensor",
        "value, dtype=dtype(dtype)",
        note="Python floats become float32 (floatx) tensors, ints int32, as in TensorFlow.",
    ),
    op(
        "tf.convert_to_tensor",
        "value, dtype=None, dtype_hint=None, name=None",
        "convert_to_tensor",
        "value, dtype=dtype(dtype)",
    ),
    op(
        "K.constant",
        "value, dtype=None, shape=None, name=None",
        "convert_to_tensor",
        "value, dtype=dtype(dtype) | keras.config.floatx()",
        note="K.constant uses floatx() when dtype is None (even for ints): written.",
    ),
    op(
        "tf.identity",
        "input, name=None",
        "copy",
        note="keras.ops.identity is the identity MATRIX; the identity function is ops.copy.",
    ),
    op("K.identity", "x, name=None", "copy"),
    op("tf.stop_gradient", "input, name=None", "stop_gradient"),
    op("K.stop_gradient", "variables", "stop_gradient"),
    manual(
        "K.zeros K.ones",
        _STATE,
        "ops.zeros(shape) / ops.ones(shape) for a tensor; "
        'self.add_weight(shape=shape, initializer="zeros") for state',
    ),
    manual("K.eye", _STATE, "ops.eye(n) for a tensor; self.add_weight for state"),
    manual(
        "K.cast_to_floatx",
        "returns a NumPy array cast on the host",
        "np.asarray(x, dtype=keras.config.floatx())",
    ),
]

DTYPES_AND_SHAPES = [
    op(
        "tf.cast tf.dtypes.cast tf.compat.v1.cast", "x, dtype, name=None", "cast", "x, dtype(dtype)"
    ),
    op("K.cast", "x, dtype", "cast", "x, dtype(dtype)"),
    op(
        "tf.saturate_cast tf.dtypes.saturate_cast",
        "value, dtype, name=None",
        "saturate_cast",
        "value, dtype(dtype)",
    ),
    op(
        "tf.shape",
        "input, out_type=None, name=None",
        builder="shape",
        accept={"out_type": [None, "int32", "int64"]},
        when="the result is indexed, unpacked or passed as a shape (tf.shape returns a "
        "tensor, keras.ops.shape a tuple of ints and scalar tensors)",
    ),
    op(
        "K.shape",
        "x",
        builder="shape",
        when="as tf.shape: the result is indexed, unpacked or passed as a shape",
    ),
    op(
        "K.int_shape",
        "x",
        template="tuple({(x)}.shape)",
        note="The static shape: ints and None, like K.int_shape.",
    ),
    op("tf.rank", "input, name=None", "ndim", note="A Python int (static rank)."),
    op("K.ndim", "x", "ndim"),
    op(
        "tf.size",
        "input, out_type=None, name=None",
        "size",
        accept={"out_type": [None, "int32", "int64"]},
        note="An int32 scalar (int64 on PyTorch).",
    ),
    op(
        "K.dtype",
        "x",
        template="keras.backend.standardize_dtype({(x)}.dtype)",
        note='A dtype name such as "float32", like K.dtype.',
    ),
    op("tf.is_tensor", "x", "is_tensor"),
    op(
        "tf.compat.dimension_value",
        "dimension",
        template="{dimension}",
        note="Keras 3 shapes hold ints and None, never Dimension objects.",
    ),
    op("K.floatx", "", "keras.config.floatx", ""),
    op("K.epsilon", "", "keras.config.epsilon", ""),
    op("K.image_data_format", "", "keras.config.image_data_format", ""),
    manual(
        "tf.as_dtype tf.dtypes.as_dtype",
        "returns a tf.DType object (with .is_floating, .max ...)",
        'keras.backend.standardize_dtype(x) gives the dtype name ("float32"); '
        "keras.backend.is_float_dtype / is_int_dtype answer the usual questions",
    ),
    manual(
        "tf.get_static_value",
        "TensorFlow constant folding",
        "static shapes are Python ints in Keras 3 (x.shape); values are only known eagerly",
    ),
    manual(
        "tf.TensorSpec tf.RaggedTensorSpec tf.SparseTensorSpec",
        "TensorFlow type specs (for tf.function signatures)",
        "describe inputs with keras.Input(shape=..., dtype=...) or keras.InputSpec",
    ),
    manual(
        "K.is_keras_tensor",
        "Keras 2 backend helper",
        "keras.backend.is_keras_tensor(x) (or isinstance(x, keras.KerasTensor))",
    ),
    manual(
        "K.backend",
        "the answer now depends on the backend in use; code that branches on 'tensorflow' "
        "needs review",
        'keras.config.backend() returns "tensorflow", "jax" or "torch"',
    ),
    op(
        "K.get_uid",
        "prefix=''",
        "keras.backend.get_uid",
        "prefix",
        note="The same per-prefix counter (1 on the first call); Keras 3 keeps one "
        "counter per process where tf_keras kept one per graph.",
    ),
]

NN = [
    *_same_signature(
        [
            ("tf.nn.relu", "relu"),
            ("tf.nn.relu6", "relu6"),
            ("tf.nn.elu", "elu"),
            ("tf.nn.selu", "selu"),
        ],
        "features, name=None",
    ),
    *_same_signature(
        [
            ("K.abs", "abs"),
            ("K.sigmoid", "sigmoid"),
            ("K.tanh", "tanh"),
            ("K.softplus", "softplus"),
            ("K.softsign", "softsign"),
            ("K.exp", "exp"),
            ("K.log", "log"),
            ("K.sqrt", "sqrt"),
            ("K.square", "square"),
            ("K.round", "round"),
            ("K.sign", "sign"),
            ("K.sin", "sin"),
            ("K.cos", "cos"),
        ],
        "x",
    ),
    *_same_signature(
        [
            ("K.equal", "equal"),
            ("K.not_equal", "not_equal"),
            ("K.greater", "greater"),
            ("K.greater_equal", "greater_equal"),
            ("K.less", "less"),
            ("K.less_equal", "less_equal"),
            ("K.maximum", "maximum"),
            ("K.minimum", "minimum"),
        ],
        "x, y",
    ),
    op("K.pow", "x, a", "power", "x, a"),
    op(
        "K.dot",
        "x, y",
        "dot",
        "x, y",
        note="K.dot follows np.dot for N-D inputs, as keras.ops.dot does.",
    ),
    op(
        "tf.nn.gelu",
        "features, approximate=False, name=None",
        "gelu",
        "features, approximate=lit(approximate) | False",
        note="tf.nn.gelu is the exact (erf) GELU by default, keras.ops.gelu the tanh "
        "approximation: the rewrite always writes approximate=.",
    ),
    op(
        "tf.nn.silu tf.nn.swish",
        "features, beta=1.0",
        "silu",
        "features",
        accept={"beta": [1.0]},
    ),
    op(
        "tf.nn.leaky_relu",
        "features, alpha=0.2, name=None",
        "leaky_relu",
        "features, negative_slope=alpha",
    ),
    op(
        "tf.nn.softmax tf.math.softmax",
        "logits, axis=None, name=None",
        "softmax",
        "logits, axis=none_to(axis, -1)",
        legacy={"dim": "axis"},
    ),
    op(
        "tf.nn.log_softmax tf.math.log_softmax",
        "logits, axis=None, name=None",
        "log_softmax",
        "logits, axis=none_to(axis, -1)",
        legacy={"dim": "axis"},
    ),
    op("K.softmax", "x, axis=-1", "softmax", "x, axis=axis"),
    op("K.elu", "x, alpha=1.0", "elu", "x, alpha=alpha"),
    op(
        "K.relu",
        "x, alpha=0.0, max_value=None, threshold=0.0",
        "relu",
        "x",
        accept={"alpha": [0, 0.0], "max_value": [None], "threshold": [0, 0.0]},
        reason="K.relu with alpha/max_value/threshold is a leaky/capped/thresholded ReLU",
        suggestion="ops.leaky_relu(x, negative_slope=alpha), ops.relu6(x) or "
        "ops.minimum(ops.relu(x), max_value); keras.layers.ReLU(max_value, negative_slope, "
        "threshold) has all three",
    ),
    manual(
        "K.hard_sigmoid",
        "K.hard_sigmoid is clip(0.2 * x + 0.5, 0, 1); keras.ops.hard_sigmoid is "
        "relu6(x + 3) / 6 (slope 1/6): different numbers",
        "ops.clip(0.2 * x + 0.5, 0.0, 1.0)",
    ),
    manual(
        "tf.nn.crelu",
        "keras.ops has no concatenated ReLU",
        "ops.concatenate([ops.relu(x), ops.relu(-x)], axis=-1)",
    ),
    op(
        "tf.nn.l2_normalize tf.math.l2_normalize tf.linalg.l2_normalize",
        "x, axis=None, epsilon=1e-12, name=None, dim=None",
        "normalize",
        "x, axis=axis | None, epsilon=sqrt_eps(epsilon) | 1e-06",
        legacy={"dim": "axis"},
        drop=["dim"],
        note="TF bounds the squared norm below by epsilon, keras.ops.normalize the norm: "
        "the rewrite writes epsilon=sqrt(epsilon) (1e-6 for TF's 1e-12) and axis=None "
        "(all axes) when absent, TF's default.",
    ),
    op(
        "K.l2_normalize",
        "x, axis=None",
        "normalize",
        "x, axis=axis | None, epsilon=1e-06",
        note="As tf.math.l2_normalize (epsilon 1e-12 on the squared norm).",
    ),
    op(
        "tf.nn.moments",
        "x, axes, shift=None, keepdims=False, name=None",
        "moments",
        "x, axes, keepdims=keepdims",
        note="Returns (mean, variance) as TF does.",
    ),
    op(
        "tf.nn.bias_add",
        "value, bias, data_format=None, name=None",
        "add",
        "value, bias",
        accept={"data_format": [None, "NHWC", "NWC", "NDHWC", "N..C"]},
    ),
    op(
        "K.bias_add",
        "x, bias, data_format=None",
        "add",
        "x, bias",
        accept={"data_format": [None, "channels_last"]},
        note="data_format=None means keras.config.image_data_format() (channels_last "
        "unless changed); a channels-first bias needs reshaping.",
    ),
    op(
        "tf.nn.embedding_lookup",
        "params, ids, max_norm=None, name=None",
        "take",
        "params, ids, axis=0",
        when="`params` is one tensor (not a list of shards)",
    ),
    op(
        "tf.nn.l2_loss",
        "t, name=None",
        template="ops.multiply(ops.sum(ops.square({t})), 0.5)",
    ),
    op(
        "tf.nn.softmax_cross_entropy_with_logits",
        "labels, logits, axis=-1, name=None",
        "categorical_crossentropy",
        "labels, logits, from_logits=True, axis=axis",
    ),
    op(
        "tf.nn.sigmoid_cross_entropy_with_logits",
        "labels=None, logits=None, name=None",
        "binary_crossentropy",
        "labels, logits, from_logits=True",
        needs=("labels", "logits"),
    ),
    op(
        "tf.nn.sparse_softmax_cross_entropy_with_logits",
        "labels, logits, name=None",
        "sparse_categorical_crossentropy",
        "labels, logits, from_logits=True",
    ),
    op(
        "K.binary_crossentropy",
        "target, output, from_logits=False",
        "binary_crossentropy",
        "target, output, from_logits=from_logits",
        note="tf_keras adds epsilon inside the log and, in graph mode, reads logits back "
        "from a Sigmoid op; keras.ops clips to [epsilon, 1 - epsilon]. Within 1e-6 for "
        "probabilities away from 0 and 1.",
    ),
    op(
        "K.categorical_crossentropy",
        "target, output, from_logits=False, axis=-1",
        "categorical_crossentropy",
        "target, output, from_logits=from_logits, axis=axis",
    ),
    op(
        "K.sparse_categorical_crossentropy",
        "target, output, from_logits=False, axis=-1, ignore_class=None",
        "sparse_categorical_crossentropy",
        "target, output, from_logits=from_logits, axis=axis",
    ),
    manual(
        "K.binary_focal_crossentropy K.categorical_focal_crossentropy",
        "no keras.ops equivalent",
        "keras.losses.binary_focal_crossentropy / categorical_focal_crossentropy",
    ),
    manual(
        "tf.nn.weighted_cross_entropy_with_logits",
        "no keras.ops equivalent",
        "write it: (1 - z) * x + (1 + (q - 1) * z) * ops.softplus(-x) with z=labels, "
        "x=logits, q=pos_weight",
    ),
    manual(
        "tf.nn.log_poisson_loss",
        "no keras.ops equivalent",
        "ops.exp(log_input) - targets * log_input (add the Stirling term for full loss)",
    ),
    manual(
        "tf.nn.batch_normalization",
        "keras.ops.batch_normalization needs the channel axis; TF broadcasts mean/variance",
        "(x - mean) * ops.rsqrt(variance + eps) * scale + offset, or "
        "ops.batch_normalization(x, mean, variance, axis=-1, offset=..., scale=..., epsilon=...)",
    ),
    manual(
        "tf.compat.v1.nn.fused_batch_norm K.batch_normalization K.normalize_batch_in_training",
        "fused/backend batch norm",
        "keras.layers.BatchNormalization, or ops.moments + ops.batch_normalization",
    ),
    manual(
        "tf.nn.local_response_normalization tf.nn.lrn",
        "keras.ops has no LRN",
        "write it with ops.conv over the squared channels, or drop it (modern nets do)",
    ),
    manual(
        "tf.nn.zero_fraction",
        "no keras.ops equivalent",
        'ops.mean(ops.cast(ops.equal(x, 0), "float32"))',
    ),
    manual(
        "tf.nn.compute_average_loss tf.nn.scale_regularization_loss",
        "tf.distribute loss scaling",
        "let model.fit reduce the loss (keras.losses reduction) or use keras.distribution",
    ),
    manual(
        "tf.nn.nce_loss tf.nn.sampled_softmax_loss",
        "candidate-sampling losses have no keras.ops equivalent",
        "use a full softmax (ops.sparse_categorical_crossentropy) or keep a TF-only loss",
    ),
    manual(
        "tf.nn.embedding_lookup_sparse tf.nn.safe_embedding_lookup_sparse",
        _RAGGED,
        "pad the ids, ops.take the rows and reduce with a mask",
    ),
    manual(
        "tf.nn.ctc_loss K.ctc_batch_cost",
        "keras.ops.ctc_loss takes batch-major probabilities and lengths (target, output, "
        "target_length, output_length)",
        "ops.ctc_loss(labels, ops.softmax(logits), label_length, logit_length) after "
        "moving time to axis 1",
    ),
    manual(
        "tf.nn.ctc_greedy_decoder tf.nn.ctc_beam_search_decoder K.ctc_decode",
        "TF returns SparseTensors",
        'ops.ctc_decode(inputs, lengths, strategy="greedy" | "beam_search")',
    ),
    manual(
        "tf.nn.normalize_moments tf.nn.sufficient_statistics tf.nn.weighted_moments",
        "no keras.ops equivalent",
        "compute with ops.sum / ops.mean and the weights",
    ),
    manual(
        "tf.nn.isotonic_regression",
        "no keras.ops equivalent",
        "keep it in a backend-specific helper",
    ),
]

CONV_POOL = [
    op(
        "tf.nn.conv1d",
        "input, filters, stride, padding, data_format='NWC', dilations=None, name=None",
        "conv",
        "input, filters, strides=window(stride, 1), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 1)",
        note=_CHANNELS_LAST,
    ),
    op(
        "tf.nn.conv2d",
        "input, filters, strides, padding, data_format='NHWC', dilations=None, name=None",
        "conv",
        "input, filters, strides=window(strides, 2), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 2)",
        note=_CHANNELS_LAST,
    ),
    op(
        "tf.nn.conv3d",
        "input, filters, strides, padding, data_format='NDHWC', dilations=None, name=None",
        "conv",
        "input, filters, strides=window(strides, 3), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 3)",
        note=_CHANNELS_LAST,
    ),
    op(
        "tf.nn.convolution",
        "input, filters, strides=None, padding='VALID', data_format=None, dilations=None, "
        "name=None",
        "conv",
        "input, filters, strides=window(strides, 0), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 0)",
        note=_CHANNELS_LAST,
    ),
    op(
        "tf.nn.atrous_conv2d",
        "value, filters, rate, padding, name=None",
        "conv",
        "value, filters, padding=padding(padding), data_format='channels_last', dilation_rate=rate",
    ),
    op(
        "tf.nn.depthwise_conv2d",
        "input, filter, strides, padding, data_format=None, dilations=None, name=None",
        "depthwise_conv",
        "input, filter, strides=window(strides, 2), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 2)",
        note=_CHANNELS_LAST,
    ),
    op(
        "tf.nn.separable_conv2d",
        "input, depthwise_filter, pointwise_filter, strides, padding, data_format=None, "
        "dilations=None, name=None",
        "separable_conv",
        "input, depthwise_filter, pointwise_filter, strides=window(strides, 2), "
        "padding=padding(padding), data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 2)",
        note=_CHANNELS_LAST,
    ),
    *(
        op(
            symbols,
            f"input, ksize, strides, padding, data_format={fmt}, name=None",
            target,
            f"input, window(ksize, {n}), strides=window(strides, {n}), padding=padding(padding), "
            "data_format=data_format(data_format) | 'channels_last'",
            note=_CHANNELS_LAST,
        )
        for symbols, fmt, target, n in [
            ("tf.nn.max_pool", "None", "max_pool", 0),
            ("tf.nn.max_pool1d", "'NWC'", "max_pool", 1),
            ("tf.nn.max_pool2d", "'NHWC'", "max_pool", 2),
            ("tf.nn.max_pool3d", "'NDHWC'", "max_pool", 3),
            ("tf.nn.avg_pool", "None", "average_pool", 0),
            ("tf.nn.avg_pool1d", "'NWC'", "average_pool", 1),
            ("tf.nn.avg_pool2d", "'NHWC'", "average_pool", 2),
            ("tf.nn.avg_pool3d", "'NDHWC'", "average_pool", 3),
        ]
    ),
    *(
        op(
            symbols,
            f"x, kernel, strides={strides}, padding='valid', data_format=None, "
            f"dilation_rate={strides}",
            "conv",
            "x, kernel, strides=strides, padding=k_padding(padding), data_format=data_format, "
            "dilation_rate=dilation_rate",
        )
        for symbols, strides in [
            ("K.conv1d", "1"),
            ("K.conv2d", "(1, 1)"),
            ("K.conv3d", "(1, 1, 1)"),
        ]
    ),
    op(
        "K.depthwise_conv2d",
        "x, depthwise_kernel, strides=(1, 1), padding='valid', data_format=None, "
        "dilation_rate=(1, 1)",
        "depthwise_conv",
        "x, depthwise_kernel, strides=strides, padding=k_padding(padding), "
        "data_format=data_format, dilation_rate=dilation_rate",
    ),
    op(
        "K.separable_conv2d",
        "x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding='valid', "
        "data_format=None, dilation_rate=(1, 1)",
        "separable_conv",
        "x, depthwise_kernel, pointwise_kernel, strides=strides, padding=k_padding(padding), "
        "data_format=data_format, dilation_rate=dilation_rate",
    ),
    op(
        "tf.nn.depth_to_space",
        "input, block_size, data_format='NHWC', name=None",
        "depth_to_space",
        "input, block_size, data_format=data_format(data_format) | 'channels_last'",
    ),
    op(
        "tf.nn.space_to_depth",
        "input, block_size, data_format='NHWC', name=None",
        "space_to_depth",
        "input, block_size, data_format=data_format(data_format) | 'channels_last'",
    ),
    manual(
        "tf.nn.conv2d_transpose tf.nn.conv1d_transpose tf.nn.conv3d_transpose "
        "tf.nn.conv_transpose tf.nn.atrous_conv2d_transpose K.conv2d_transpose",
        "TF takes the output shape, keras.ops.conv_transpose an output_padding; the "
        "kernel layout also differs ((h, w, out, in) in TF)",
        "ops.conv_transpose(x, kernel, strides, padding, output_padding=...) with the "
        "kernel's last two axes as Keras expects, or keras.layers.Conv2DTranspose",
    ),
    manual(
        "tf.nn.pool K.pool2d K.pool3d",
        "the pooling type is an argument",
        "ops.max_pool / ops.average_pool with pool_size, strides, padding",
    ),
    manual(
        "tf.nn.max_pool_with_argmax tf.nn.fractional_max_pool tf.nn.fractional_avg_pool",
        "no keras.ops equivalent",
        "ops.max_pool; argmax positions need a custom op",
    ),
    manual(
        "tf.nn.dilation2d tf.nn.erosion2d",
        "morphological ops have no keras.ops equivalent",
        "ops.image.extract_patches + ops.max over the patch axis",
    ),
    manual(
        "K.resize_images K.resize_volumes",
        "Keras 2 backend resize",
        'ops.repeat(ops.repeat(x, h, axis=1), w, axis=2) for "nearest", or ops.image.resize',
    ),
    manual(
        "K.spatial_2d_padding K.spatial_3d_padding K.temporal_padding",
        "Keras 2 backend padding",
        "ops.pad(x, [[0, 0], [top, bottom], [left, right], [0, 0]]) (channels_last)",
    ),
    manual(
        "K.local_conv1d K.local_conv2d",
        "locally connected layers are gone from Keras 3",
        "ops.image.extract_patches + ops.einsum with a per-position kernel",
    ),
]

LINALG = [
    op(
        "tf.linalg.matmul tf.matmul",
        "a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, "
        "a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, "
        "name=None",
        builder="matmul",
        accept={
            "adjoint_a": [False],
            "adjoint_b": [False],
            "a_is_sparse": [False],
            "b_is_sparse": [False],
            "output_type": [None],
            "grad_a": [False],
            "grad_b": [False],
        },
        when="`transpose_a`/`transpose_b` are literals (True swaps the last two axes of "
        "that operand: ops.swapaxes(b, -1, -2))",
    ),
    op(
        "tf.einsum tf.linalg.einsum",
        "equation, *inputs, name=None",
        "einsum",
        "equation, *inputs",
    ),
    op(
        "tf.tensordot tf.linalg.tensordot",
        "a, b, axes, name=None",
        "tensordot",
        "a, b, axes=axes",
    ),
    op("tf.linalg.inv", "input, adjoint=False, name=None", "inv", "input"),
    op("tf.linalg.det", "input, name=None", "det", "input"),
    op("tf.linalg.slogdet", "input, name=None", "slogdet", "input"),
    op(
        "tf.linalg.logdet",
        "matrix, name=None",
        "logdet",
        "matrix",
        note="For Hermitian positive-definite matrices, as tf.linalg.logdet requires.",
    ),
    op("tf.linalg.cholesky", "input, name=None", "cholesky", "input"),
    op("tf.linalg.solve", "matrix, rhs, adjoint=False, name=None", "solve", "matrix, rhs"),
    op(
        "tf.linalg.triangular_solve",
        "matrix, rhs, lower=True, adjoint=False, name=None",
        "solve_triangular",
        "matrix, rhs, lower=lower | True",
        note="TF solves with the lower triangle by default, keras.ops the upper: lower= "
        "is written.",
    ),
    op(
        "tf.linalg.qr",
        "input, full_matrices=False, name=None",
        "qr",
        "input, mode=qr_mode(full_matrices)",
    ),
    op(
        "tf.linalg.eigvalsh",
        "tensor, name=None",
        template="ops.eigh({tensor})[0]",
        note="Eigenvalues in ascending order, as in TensorFlow.",
    ),
    op(
        "tf.linalg.trace",
        "x, name=None",
        "trace",
        "x, axis1=-2, axis2=-1",
        note="keras.ops.trace (NumPy) sums axes 0 and 1 by default; TF the last two: written.",
    ),
    op(
        "tf.linalg.diag_part",
        "input, name='diag_part', k=0, padding_value=0, align='RIGHT_LEFT'",
        "diagonal",
        "input, offset=int_lit(k), axis1=-2, axis2=-1",
    ),
    op(
        "tf.norm tf.linalg.norm",
        "tensor, ord='euclidean', axis=None, keepdims=None, name=None",
        "norm",
        "tensor, ord=norm_ord(ord), axis=axes(axis), keepdims=none_to(keepdims, False)",
    ),
    op(
        "tf.linalg.band_part",
        "input, num_lower, num_upper, name=None",
        builder="band_part",
        when="`num_lower` and `num_upper` are literal ints (-1, 0 -> ops.tril; 0, -1 -> "
        "ops.triu; other bands -> ops.triu(ops.tril(x, upper), -lower))",
    ),
    op("tf.linalg.cross", "a, b, name=None", "cross", "a, b"),
    manual(
        "tf.linalg.svd",
        "TF returns (s, u, v), keras.ops.svd (u, s, vh) with v transposed, and the "
        "full_matrices defaults differ",
        "u, s, vh = ops.svd(x, full_matrices=False); v = ops.swapaxes(vh, -1, -2)",
    ),
    manual(
        "tf.linalg.eigh",
        "eigenvectors are unique only up to sign, which differs between LAPACK builds",
        "ops.eigh(x) returns (eigenvalues, eigenvectors) like TF; make the sign canonical "
        "if downstream code depends on it",
    ),
    manual(
        "tf.linalg.eig tf.linalg.eigvals tf.eig tf.eigvals",
        _COMPLEX,
        "ops.eig(x) where the backend supports it, or restrict to symmetric matrices (ops.eigh)",
    ),
    manual(
        "tf.linalg.adjoint",
        "conjugate transpose of complex matrices",
        "for real matrices ops.swapaxes(x, -1, -2)",
    ),
    manual(
        "tf.linalg.cholesky_solve",
        "keras.ops has no cholesky_solve",
        "ops.solve_triangular twice: y = solve_triangular(L, b, lower=True); "
        "x = solve_triangular(ops.swapaxes(L, -1, -2), y)",
    ),
    manual(
        "tf.linalg.lstsq",
        "TF adds l2_regularizer and a fast Cholesky path",
        "ops.lstsq(a, b) for the plain least-squares solution",
    ),
    manual(
        "tf.linalg.pinv",
        "rcond conventions differ",
        "ops.pinv(a, rcond=...) after checking the cutoff",
    ),
    manual(
        "tf.linalg.expm tf.linalg.logm tf.linalg.sqrtm tf.matrix_square_root",
        "no keras.ops equivalent",
        "keep it in a backend-specific helper",
    ),
    manual(
        "tf.linalg.lu tf.linalg.lu_solve tf.linalg.lu_matrix_inverse tf.linalg.lu_reconstruct",
        "TF's packed LU format differs from ops.lu_factor's",
        "ops.lu_factor(x) returns (lu, pivots) in SciPy's format; ops.solve for solving",
    ),
    manual(
        "tf.linalg.matvec",
        "no keras.ops matvec",
        "ops.matmul(a, ops.expand_dims(b, -1))[..., 0]",
    ),
    manual(
        "tf.linalg.matrix_rank",
        "tolerance conventions differ",
        "ops.matrix_rank(a, tol=...)",
    ),
    manual(
        "tf.linalg.global_norm tf.clip_by_global_norm",
        "gradient-list utility (training loop)",
        "optimizers take clipnorm=/global_clipnorm=",
    ),
    manual(
        "tf.clip_by_norm",
        "no keras.ops equivalent",
        "x * ops.minimum(1.0, clip_norm / ops.maximum(ops.norm(x, axis=axes, keepdims=True), "
        "1e-12))",
    ),
    manual(
        "tf.linalg.normalize",
        "returns (normalized, norm)",
        "n = ops.norm(x, axis=axis, keepdims=True); x / n",
    ),
    manual(
        "tf.linalg.tridiagonal_solve tf.linalg.tridiagonal_matmul "
        "tf.linalg.banded_triangular_solve tf.linalg.eigh_tridiagonal",
        "structured linear algebra has no keras.ops equivalent",
        "build the dense matrix and use ops.solve / ops.matmul",
    ),
    op(
        "K.batch_dot",
        "x, y, axes=None",
        builder="batch_dot",
        when="both ranks are stated in the code (a literal shape given to reshape, "
        "permute_dimensions or keras.Input, directly or through a local name bound once) "
        "and `axes` is absent or a literal int or pair: the einsum subscripts depend on them",
        note="Two rank-2 inputs give shape (batch, 1), as K.batch_dot does: the einsum is "
        "wrapped in ops.expand_dims(..., -1).",
        suggestion='ops.einsum with explicit subscripts, e.g. ops.einsum("bij,bkj->bik", x, y) '
        "for K.batch_dot(x, y, axes=[2, 2]) on rank-3 inputs",
    ),
]

IMAGE = [
    op(
        "tf.image.resize",
        "images, size, method='bilinear', preserve_aspect_ratio=False, antialias=False, name=None",
        "image.resize",
        "images, size, interpolation=resize_method(method), antialias=antialias, "
        "data_format='channels_last'",
        note="TF returns float32 for every method but nearest; cast integer images first. "
        + _CHANNELS_LAST,
    ),
    op(
        "tf.image.rgb_to_grayscale",
        "images, name=None",
        "image.rgb_to_grayscale",
        "images, data_format='channels_last'",
    ),
    op(
        "tf.image.rgb_to_hsv",
        "images, name=None",
        "image.rgb_to_hsv",
        "images, data_format='channels_last'",
    ),
    op(
        "tf.image.hsv_to_rgb",
        "images, name=None",
        "image.hsv_to_rgb",
        "images, data_format='channels_last'",
    ),
    op("tf.image.grayscale_to_rgb", "images, name=None", "repeat", "images, 3, axis=-1"),
    op("tf.image.flip_left_right", "image", "flip", "image, axis=-2"),
    op("tf.image.flip_up_down", "image", "flip", "image, axis=-3"),
    op("tf.image.transpose", "image, name=None", "swapaxes", "image, -3, -2"),
    op("tf.image.rot90", "image, k=1, name=None", "rot90", "image, k=k, axes=(-3, -2)"),
    op(
        "tf.image.crop_to_bounding_box",
        "image, offset_height, offset_width, target_height, target_width",
        "image.crop_images",
        "image, top_cropping=offset_height, left_cropping=offset_width, "
        "target_height=target_height, target_width=target_width, data_format='channels_last'",
    ),
    op(
        "tf.image.pad_to_bounding_box",
        "image, offset_height, offset_width, target_height, target_width",
        "image.pad_images",
        "image, top_padding=offset_height, left_padding=offset_width, "
        "target_height=target_height, target_width=target_width, data_format='channels_last'",
    ),
    op(
        "tf.image.extract_patches",
        "images, sizes, strides, rates, padding, name=None",
        "image.extract_patches",
        "images, window(sizes, 2), strides=window(strides, 2), "
        "dilation_rate=window(rates, 2), padding=padding(padding), "
        "data_format='channels_last'",
    ),
    manual(
        "tf.image.resize_with_pad tf.image.resize_with_crop_or_pad tf.image.central_crop",
        "keras.ops.image.resize's pad_to_aspect_ratio/crop_to_aspect_ratio place the image "
        "differently",
        "keras.layers.Resizing(h, w, pad_to_aspect_ratio=True) or crop_images/pad_images "
        "with computed offsets",
    ),
    manual(
        "tf.image.crop_and_resize",
        "box-based crops have no keras.ops equivalent",
        "keras_hub/keras_cv ROI ops, or ops.image.crop_images + ops.image.resize per box",
    ),
    manual(
        "tf.image.non_max_suppression tf.image.non_max_suppression_padded "
        "tf.image.combined_non_max_suppression tf.image.non_max_suppression_with_scores "
        "tf.image.non_max_suppression_overlaps",
        "NMS has no keras.ops equivalent (data-dependent output size)",
        "keras_hub's / keras_cv's NonMaxSuppression layers, which run on every backend",
    ),
    manual(
        "tf.image.ssim tf.image.ssim_multiscale tf.image.psnr",
        "TF computes one value per image; check ops.image.ssim / ops.psnr reductions",
        "ops.image.ssim(a, b, max_val) / ops.psnr(a, b, max_val), averaged as you need",
    ),
    manual(
        "tf.image.sobel_edges tf.image.image_gradients tf.image.total_variation",
        "output layouts differ",
        "ops.image.sobel_edges, or ops.conv with explicit kernels",
    ),
    manual(
        "tf.image.per_image_standardization",
        "no keras.ops equivalent",
        "(x - m) / ops.maximum(s, 1 / sqrt(n)) with m, s the per-image mean and std",
    ),
    manual(
        "tf.image.convert_image_dtype",
        "it rescales integers to [0, 1] as well as casting",
        'ops.cast(x, "float32") / 255.0 for uint8 images',
    ),
    manual(
        "tf.image.adjust_brightness tf.image.adjust_contrast tf.image.adjust_gamma "
        "tf.image.adjust_hue tf.image.adjust_saturation",
        "image adjustments with dtype conversions",
        "keras.layers.RandomBrightness/RandomContrast/... or ops arithmetic on float images",
    ),
    manual(
        "tf.image.random_flip_left_right tf.image.random_flip_up_down "
        "tf.image.random_brightness tf.image.random_contrast tf.image.random_crop "
        "tf.image.random_hue tf.image.random_saturation",
        "random augmentation",
        "keras.layers.RandomFlip / RandomBrightness / RandomContrast / RandomCrop / "
        "RandomHue / RandomSaturation, or keep it in the tf.data pipeline",
    ),
    manual(
        "tf.image.draw_bounding_boxes tf.image.yuv_to_rgb tf.image.rgb_to_yuv "
        "tf.image.yiq_to_rgb tf.image.rgb_to_yiq",
        "no keras.ops equivalent",
        "a 3x3 color matrix with ops.tensordot for the color spaces",
    ),
    manual(
        "tf.image.decode_image tf.image.decode_jpeg tf.image.decode_png tf.image.encode_jpeg "
        "tf.image.encode_png",
        _DATA,
        "decode in the input pipeline",
    ),
]

SIGNAL = [
    op(
        "tf.signal.hann_window",
        "window_length, periodic=True, dtype=tf.float32, name=None",
        builder="window",
        accept={"dtype": ["float32"]},
        when="`periodic` is a literal (True: ops.hanning(n + 1)[:-1], TF's default)",
    ),
    op(
        "tf.signal.hamming_window",
        "window_length, periodic=True, dtype=tf.float32, name=None",
        builder="window",
        accept={"dtype": ["float32"]},
        when="`periodic` is a literal (True: ops.hamming(n + 1)[:-1], TF's default)",
    ),
    op(
        "tf.signal.frame",
        "signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None",
        "extract_sequences",
        "signal, frame_length, frame_step",
    ),
    manual(
        "tf.signal.fft tf.signal.ifft tf.signal.fft2d tf.signal.ifft2d tf.signal.fft3d "
        "tf.signal.ifft3d tf.signal.rfft tf.signal.irfft tf.signal.rfft2d tf.signal.irfft2d",
        _COMPLEX,
        "ops.fft((real, imag)) / ops.rfft(x) return (real, imag); keep the pair instead of "
        "a complex tensor",
    ),
    manual(
        "tf.signal.stft tf.signal.inverse_stft",
        "keras.ops.stft returns (real, imag), centers frames by default and takes the window "
        "by name. " + _COMPLEX,
        'ops.stft(x, frame_length, frame_step, fft_length, window="hann", center=False)',
    ),
    manual(
        "tf.signal.dct tf.signal.idct tf.signal.mdct tf.signal.inverse_mdct",
        "no keras.ops DCT",
        "a DCT matrix applied with ops.matmul",
    ),
    manual(
        "tf.signal.linear_to_mel_weight_matrix tf.signal.mfccs_from_log_mel_spectrograms",
        "no keras.ops equivalent",
        "keras.layers.MelSpectrogram, or precompute the matrix with NumPy",
    ),
    manual(
        "tf.signal.overlap_and_add",
        "no keras.ops equivalent",
        "ops.istft, or ops.segment_sum over frame positions",
    ),
    manual(
        "tf.signal.fftshift tf.signal.ifftshift",
        "no keras.ops equivalent",
        "ops.roll(x, n // 2, axis) per axis",
    ),
    manual(
        "tf.signal.kaiser_window tf.signal.kaiser_bessel_derived_window tf.signal.vorbis_window",
        "TF windows are periodic/derived variants of NumPy's",
        "ops.kaiser(n, beta) is NumPy's symmetric window",
    ),
]

CONTROL_FLOW = [
    op(
        "tf.cond",
        "pred, true_fn=None, false_fn=None, name=None",
        "cond",
        "pred, true_fn, false_fn",
        needs=("true_fn", "false_fn"),
        legacy={"fn1": "true_fn", "fn2": "false_fn"},
    ),
    op(
        "tf.while_loop",
        "cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, "
        "back_prop=True, swap_memory=False, maximum_iterations=None, name=None",
        "while_loop",
        "cond, body, loop_vars, maximum_iterations=maximum_iterations",
        drop=["parallel_iterations", "swap_memory"],
        note="parallel_iterations and swap_memory are performance hints, dropped.",
    ),
    op(
        "tf.map_fn",
        "fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, "
        "infer_shape=True, name=None, fn_output_signature=None",
        "map",
        "fn, elems",
        drop=["dtype", "fn_output_signature", "parallel_iterations", "swap_memory", "infer_shape"],
        note="keras.ops.map infers the output structure by calling fn; dtype and "
        "fn_output_signature are dropped.",
    ),
    op("K.map_fn", "fn, elems, name=None, dtype=None", "map", "fn, elems", drop=["dtype"]),
    op(
        "tf.scan",
        "fn, elems, initializer=None, parallel_iterations=10, back_prop=True, "
        "swap_memory=False, infer_shape=True, reverse=False, name=None",
        builder="scan",
        drop=["parallel_iterations", "swap_memory", "infer_shape"],
        accept={"back_prop": [True]},
        needs=("initializer",),
        when="`reverse` is a literal; fn(acc, x) -> acc is wrapped into keras.ops.scan's "
        "f(carry, x) -> (carry, y) and the stacked accumulators ([1]) are returned",
        reason="without an initializer TF starts from elems[0] and emits it first",
        suggestion="pass initializer=elems[0] and drop the first element "
        "(ops.scan(f, elems[0], elems[1:]))",
    ),
    op(
        "tf.vectorized_map",
        "fn, elems, fallback_to_while_loop=True, warn=True",
        "vectorized_map",
        "fn, elems",
        drop=["fallback_to_while_loop", "warn"],
    ),
    manual(
        "tf.switch_case tf.case",
        "out-of-range and negative branch indices run the default (last) branch in TF; "
        "keras.ops.switch clamps the index",
        "ops.switch(ops.clip(index, 0, n - 1), branches) if the index is in range",
    ),
    manual(
        "K.switch",
        "K.switch takes tensors or callables and broadcasts the condition",
        "ops.where(condition, then, else) for tensors; ops.cond for callables",
    ),
    manual(
        "tf.foldl tf.foldr K.foldl K.foldr",
        "keras.ops.scan returns (carry, ys)",
        "ops.scan(lambda c, x: (fn(c, x), None), initializer, elems)[0] (reverse=True for foldr)",
    ),
    manual(
        "K.in_train_phase K.in_test_phase",
        "Keras 3 has no global learning phase",
        "take a `training` argument in call() and branch on it (ops.cond for tensors)",
    ),
    manual(
        "K.rnn",
        "Keras 2 backend RNN loop",
        "keras.layers.RNN with a cell, or ops.scan over the time axis",
    ),
    manual(
        "tf.custom_gradient tf.recompute_grad tf.grad_pass_through",
        "the gradient function conventions differ between backends",
        "ops.custom_gradient(f) (see its docstring for the per-backend grad signature)",
    ),
    manual(
        "tf.gradients tf.hessians K.gradients",
        _GRAPH_ONLY,
        "differentiate in a train_step override or a backend-specific training loop",
    ),
    manual(
        "tf.TensorArray",
        "TensorArray is TensorFlow's loop accumulator",
        "collect results in a Python list and ops.stack them, or return them from ops.scan",
    ),
]

NEST = [
    op("tf.nest.flatten", "structure, expand_composites=False", "keras.tree.flatten", "structure"),
    op(
        "tf.nest.map_structure",
        "func, *structure, check_types=True, expand_composites=False",
        "keras.tree.map_structure",
        "func, *structure",
        accept={"check_types": [True]},
    ),
    op(
        "tf.nest.pack_sequence_as",
        "structure, flat_sequence, expand_composites=False",
        "keras.tree.pack_sequence_as",
        "structure, flat_sequence",
    ),
    op("tf.nest.is_nested", "seq", "keras.tree.is_nested"),
    op(
        "tf.nest.assert_same_structure",
        "nest1, nest2, check_types=True, expand_composites=False",
        "keras.tree.assert_same_structure",
        "nest1, nest2",
        accept={"check_types": [True]},
    ),
]

GRAPH_AND_STATE = [
    op(
        "tf.Variable",
        "initial_value=None, trainable=None, validate_shape=True, caching_device=None, "
        "name=None, variable_def=None, dtype=None, import_scope=None, constraint=None, "
        "synchronization=tf.VariableSynchronization.AUTO, "
        "aggregation=tf.VariableAggregation.NONE, shape=None, "
        "experimental_enable_variable_lifting=True",
        builder="variable",
        when="it is assigned to self.<attr> in __init__ or build of a layer; an initial "
        "value that is tf.zeros(shape)/tf.ones(shape), a number, or an initializer called "
        "with a shape becomes self.add_weight, any other keras.Variable(value, dtype=...) "
        "when the dtype is written (rule KM203)",
    ),
    op(
        "K.variable",
        "value, dtype=None, name=None, constraint=None",
        builder="variable",
        when="as tf.Variable (rule KM203)",
    ),
    manual(
        "tf.control_dependencies",
        _GRAPH_ONLY,
        "drop the block: Keras 3 runs ops in program order on every backend",
    ),
    manual("tf.group tf.tuple tf.no_op", _GRAPH_ONLY, "drop it (program order applies)"),
    op(
        "tf.name_scope K.name_scope",
        "name",
        builder="name_scope",
        when="it opens a `with` block without `as` (TensorFlow binds the scope's name as "
        "a string, Keras the scope object) and `name` is a literal string without '/' "
        "(keras.name_scope raises on '/', TensorFlow's absolute-scope marker)",
        note="keras.name_scope prefixes the paths of variables created inside, as "
        "tf.name_scope prefixed their names; ops inside compute the same numbers.",
        suggestion="keras.name_scope(name) names variables created inside; otherwise drop it",
    ),
    manual("tf.init_scope", _GRAPH_ONLY, "create state in __init__/build instead"),
    manual(
        "tf.device",
        "TensorFlow device placement",
        "Keras 3 places ops itself; use keras.distribution (JAX) for layouts",
    ),
    manual(
        "tf.executing_eagerly tf.inside_function",
        "TensorFlow execution mode",
        "drop the branch; Keras 3 code must work traced and eagerly",
    ),
    manual(
        "tf.print K.print_tensor",
        "TensorFlow graph print",
        "print() in eager code; jax.debug.print under jit on JAX",
    ),
    manual(
        "tf.debugging.assert_equal tf.debugging.assert_greater tf.debugging.assert_less "
        "tf.debugging.assert_rank tf.debugging.assert_shapes tf.debugging.check_numerics "
        "tf.debugging.assert_near tf.debugging.assert_non_negative "
        "tf.debugging.assert_positive tf.debugging.Assert tf.Assert tf.assert_equal "
        "tf.assert_rank tf.assert_less tf.assert_greater",
        "graph assertions have no keras.ops equivalent",
        "check static shapes in Python (x.shape), drop value checks or move them to tests",
    ),
    manual(
        "K.update K.update_add K.update_sub K.moving_average_update",
        "Keras 2 graph-mode variable updates",
        "variable.assign(new) / assign_add / assign_sub",
    ),
    manual("K.count_params", "Keras 2 backend helper", "int(np.prod(v.shape))"),
    manual(
        "K.pattern_broadcast",
        "Theano-era backend function (a no-op on TensorFlow); added to K by third-party libraries",
        "remove the call and keep its first argument",
    ),
    manual(
        "K.symbolic",
        "graph-mode decorator added to K by third-party libraries",
        "remove the decorator",
    ),
    manual(
        "K.where",
        "not a Keras 2 backend function (added to K by third-party libraries such as "
        "bert4keras); its semantics depend on that library",
        "if it is tf.where(c, x, y), write ops.where(c, x, y)",
    ),
    manual(
        "K.is_sparse K.to_dense tf.sparse.to_dense tf.sparse.from_dense tf.SparseTensor "
        "tf.sparse.sparse_dense_matmul",
        _RAGGED,
        "use dense tensors (ops.convert_to_tensor) and masks",
    ),
    manual(
        "tf.RaggedTensor.from_tensor tf.RaggedTensor.from_row_splits "
        "tf.RaggedTensor.from_row_lengths tf.ragged.constant tf.ragged.stack",
        _RAGGED,
        "pad to a dense tensor and carry a mask (keras.layers accept mask=)",
    ),
    manual(
        "tf.lookup.StaticHashTable tf.lookup.KeyValueTensorInitializer "
        "tf.lookup.StaticVocabularyTable",
        "TensorFlow lookup tables",
        "keras.layers.StringLookup / IntegerLookup, or do the lookup in the tf.data pipeline",
    ),
    manual(
        "tf.strings.split tf.strings.lower tf.strings.regex_replace tf.strings.to_number "
        "tf.strings.join tf.strings.length tf.strings.bytes_split tf.as_string",
        "string tensors exist only on the TensorFlow backend",
        "do text processing in the tf.data pipeline or with keras.layers.TextVectorization",
    ),
    manual(
        "tf.bitcast",
        "reinterpreting bits",
        "ops.view(x, dtype) (same size dtypes)",
    ),
    manual("tf.complex tf.dtypes.complex", _COMPLEX, "keep real and imaginary parts apart"),
    op("tf.zeros_initializer", "", "keras.initializers.Zeros", ""),
    op("tf.ones_initializer", "", "keras.initializers.Ones", ""),
    op(
        "tf.constant_initializer",
        "value=0, support_partition=False",
        "keras.initializers.Constant",
        "value=scalar(value)",
        note="A scalar value (a literal number or a math.sqrt/exp/log... call): Keras's "
        "Constant broadcasts it, TensorFlow's reshapes a list.",
    ),
    op(
        "tf.random_normal_initializer tf.initializers.random_normal",
        "mean=0.0, stddev=0.05, seed=None",
        "keras.initializers.RandomNormal",
        "mean=mean, stddev=stddev, seed=seed",
        note=_RANDOM_INITIALIZER,
    ),
    op(
        "tf.random_uniform_initializer tf.initializers.random_uniform",
        "minval=-0.05, maxval=0.05, seed=None",
        "keras.initializers.RandomUniform",
        "minval=minval, maxval=maxval, seed=seed",
        note=_RANDOM_INITIALIZER,
    ),
    manual(
        "tf.compat.v1.random_normal_initializer tf.compat.v1.initializers.random_normal",
        "TF1's random_normal_initializer has stddev 1.0 by default (TF2's and Keras's "
        "0.05) and a dtype argument",
        "keras.initializers.RandomNormal(mean=..., stddev=1.0, seed=...) with stddev written",
    ),
    manual(
        "tf.io.gfile.exists tf.io.gfile.GFile tf.io.gfile.isdir tf.io.gfile.glob "
        "tf.io.gfile.listdir tf.io.gfile.makedirs tf.compat.v1.io.gfile.exists "
        "tf.compat.v1.io.gfile.GFile",
        "TensorFlow file I/O: it works while TensorFlow is installed, but a JAX or PyTorch "
        "deployment may not have TensorFlow",
        "open() / os.path / glob for local files; fsspec (gcsfs, s3fs) for gs:// and s3:// paths",
    ),
    manual(
        "tf.IndexedSlices",
        "sparse gradient slices are a TensorFlow type",
        "use dense tensors (ops.scatter / ops.take)",
    ),
    manual(
        "tf.compat.v1.add_to_collection tf.compat.v1.get_collection "
        "tf.compat.v1.trainable_variables tf.compat.v1.get_default_graph",
        _GRAPH_ONLY,
        "layer.trainable_weights, layer.losses / self.add_loss, model.weights",
    ),
    manual(
        "tf.compat.v1.tpu.cross_replica_sum",
        "a TPU replica collective",
        "let model.fit aggregate across replicas, or use keras.distribution on JAX",
    ),
    manual(
        "tf.autograph.experimental.do_not_convert",
        "an AutoGraph decorator (TensorFlow's graph tracing)",
        "remove it: JAX and PyTorch trace plain Python",
    ),
]

SECTIONS: dict[str, list[OpEntry]] = {
    "Element-wise math": ELEMENTWISE,
    "Binary and comparison ops": BINARY,
    "Reductions, indices, segments": REDUCTIONS,
    "Shapes and indexing": ARRAYS,
    "Creating tensors": CREATION,
    "Dtypes, shapes, config": DTYPES_AND_SHAPES,
    "Neural-network ops": NN,
    "Convolution and pooling": CONV_POOL,
    "Linear algebra": LINALG,
    "Images (keras.ops.image)": IMAGE,
    "Signal processing": SIGNAL,
    "Control flow": CONTROL_FLOW,
    "Nested structures (keras.tree)": NEST,
    "Graph, state and TensorFlow-only types": GRAPH_AND_STATE,
}


def _with_sections() -> tuple[OpEntry, ...]:
    entries = []
    for title, section in SECTIONS.items():
        for entry in section:
            object.__setattr__(entry, "section", title)
            entries.append(entry)
    return tuple(entries)


CATALOG: tuple[OpEntry, ...] = _with_sections()


@functools.lru_cache(maxsize=1)
def by_symbol() -> dict[str, OpEntry]:
    """Every spelling (canonical symbol) -> its entry. Duplicates are a bug."""
    index: dict[str, OpEntry] = {}
    for entry in CATALOG:
        for symbol in entry.symbols:
            if symbol in index:
                raise ValueError(f"{symbol} is in the ops catalog twice")
            index[symbol] = entry
    return index


def lookup(symbol: str) -> OpEntry | None:
    """The entry for a canonical symbol (``tf.reduce_mean``, ``K.mean``), if any."""
    return by_symbol().get(symbol)


def call_symbols() -> frozenset[str]:
    return frozenset(by_symbol())


# ---------------------------------------------------------------------------
# Size and documentation.
# ---------------------------------------------------------------------------


def catalog_stats() -> dict[str, int]:
    """The catalog's size: TF symbols covered (aliases counted once), by status."""
    counts = {status: 0 for status in Status}
    for entry in CATALOG:
        counts[entry.status] += len(_documented_symbols(entry))
    covered = sum(counts.values())
    return {
        "symbols covered": covered,
        "exact": counts[Status.EXACT],
        "conditional": counts[Status.CONDITIONAL],
        "manual": counts[Status.MANUAL],
        "automatic entries": sum(1 for e in CATALOG if e.automatic),
        "spellings (with aliases)": len(by_symbol()),
        "tf.* symbols": sum(
            len(_documented_symbols(e)) for e in CATALOG if not e.symbol.startswith("K.")
        ),
        "K.* backend functions": sum(
            len(_documented_symbols(e)) for e in CATALOG if e.symbol.startswith("K.")
        ),
    }


def _documented_symbols(entry: OpEntry) -> list[str]:
    """The distinct symbols of an entry: aliases of one function count once.

    An automatic entry is one function under several names. A manual entry may group
    several functions sharing one reason (``tf.math.lgamma``-style families are kept
    one per entry; ``tf.nn.conv2d_transpose tf.nn.conv3d_transpose ...`` are distinct
    functions): those count one each, minus the aliases in ``MANUAL_ALIASES``.
    """
    if entry.automatic:
        return [entry.symbol]
    return [s for s in entry.symbols if s not in MANUAL_ALIASES]


# Spellings of one function inside manual groups (counted once with their first name).
MANUAL_ALIASES = frozenset(
    {
        "tf.eig",
        "tf.eigvals",
        "tf.nn.lrn",
        "tf.Assert",
        "tf.assert_equal",
        "tf.assert_rank",
        "tf.assert_less",
        "tf.assert_greater",
        "tf.dtypes.as_dtype",
        "tf.dtypes.complex",
        "tf.matrix_square_root",
        "tf.nn.space_to_batch",
        "tf.compat.v1.io.gfile.exists",
        "tf.compat.v1.io.gfile.GFile",
    }
)


# What each value translator does, for the docs.
TRANSLATOR_DOCS: dict[str, str] = {
    "dtype": 'tf.float32 -> "float32"',
    "none_to": "None -> {0}",
    "lit": "must be a literal",
    "lower": 'upper case -> lower case ("REFLECT" -> "reflect")',
    "padding": '"SAME"/"VALID" -> "same"/"valid"',
    "k_padding": '"valid"/"same" only',
    "data_format": '"NHWC" -> "channels_last", "NCHW" -> "channels_first"',
    "window": "[1, s, s, 1] -> s",
    "split": "sizes -> cut indices ([2, 3, 5] -> [2, 5])",
    "sqrt_eps": "epsilon -> sqrt(epsilon)",
    "not_none": "must not be None",
    "qr_mode": 'False/True -> "reduced"/"complete"',
    "resize_method": "method -> interpolation (bilinear, nearest)",
    "norm_ord": '"euclidean" -> the default',
    "int_lit": "must be a literal int",
    "sizes": "literal non-negative sizes",
    "scalar": "a literal number",
    "axes": "a list of axes -> a tuple",
    "as_tensor": "a literal list -> ops.convert_to_tensor(...)",
}


_SLOT = re.compile(r"\{\((\w+)\)\}|\{(\w+)\}")


def template_form(template: str) -> str:
    """A template as Python a reader can follow: each argument slot (``{x}``, ``{(x)}``)
    becomes the TF parameter's name, ``ops.`` becomes ``keras.ops.``."""
    text = _SLOT.sub(lambda match: match.group(1) or match.group(2), template)
    return _QUALIFIED.sub(
        lambda m: ("keras.ops" if m.group(1) == "ops" else "keras") + m.group(2), text
    )


def keras_form(entry: OpEntry) -> tuple[str, list[str]]:
    """The Keras call in plain Python plus notes on defaults and translated values."""
    if entry.template:
        return template_form(entry.template), []
    if not entry.target:
        return "", []
    items, notes = [], []
    for out in entry.out:
        if out.param is None:
            text = out.literal or ""
        elif out.star:
            text = f"*{out.param}"
        else:
            text = out.param
        items.append(text if out.keyword is None else f"{out.keyword}={text}")
        name = out.param
        if out.default is not None:
            notes.append(f"{name} absent -> {out.default.replace('{name:', '').replace('}', '')}")
        if out.translator:
            doc = TRANSLATOR_DOCS.get(out.translator, out.translator)
            notes.append(f"{name}: {doc.format(*out.translator_args)}")
    return f"{entry.target}({', '.join(items)})", notes


def describe(entry: OpEntry) -> str:
    """One catalog entry as plain text (``kmigrate explain tf.reduce_mean``)."""
    lines = [f"{entry.symbol}  [{entry.status.value}]"]
    if len(entry.symbols) > 1:
        label = "aliases" if entry.automatic else "same reason"
        lines.append(f"  {label}: {', '.join(entry.symbols[1:])}")
    if entry.params:
        sig = ", ".join(
            (f"*{p.name}" if p.varargs else p.name) + ("" if p.default is None else f"={p.default}")
            for p in entry.params
        )
        lines.append(f"  TensorFlow: {entry.symbol}({sig})")
    form, value_notes = keras_form(entry)
    if form:
        lines.append(f"  Keras 3:    {form}")
        if value_notes:
            lines.append("  values: " + "; ".join(value_notes))
    elif entry.builder:
        lines.append(f"  Keras 3:    depends on the arguments ({entry.builder}, see below)")
    if entry.legacy:
        renamed = ", ".join(f"{old} -> {new}" for old, new in entry.legacy.items())
        lines.append(f"  old keywords: {renamed}")
    dropped = sorted(entry.drop & set(entry.param_names))
    if dropped and entry.automatic:
        lines.append(f"  dropped: {', '.join(dropped)}")
    conditions = entry.conditions()
    if conditions and entry.automatic:
        lines.append("  rewritten when: " + "; ".join(conditions))
    if entry.note:
        lines.append(f"  note: {entry.note}")
    if entry.reason:
        label = "manual because" if not entry.automatic else "otherwise manual because"
        lines.append(f"  {label}: {entry.reason}")
    if entry.suggestion:
        lines.append(f"  instead: {entry.suggestion}")
    return "\n".join(lines) + "\n"


def explain_entry(code: str) -> str | None:
    """``kmigrate explain tf.reduce_mean``: the entry for any spelling of a symbol."""
    from kmigrate.names import canonical

    for candidate in (code, canonical(code), canonical(code.replace("tf.", "tensorflow.", 1))):
        entry = lookup(candidate)
        if entry is not None:
            return describe(entry)
    return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _keras_column(entry: OpEntry) -> str:
    form, value_notes = keras_form(entry)
    if form:
        return f"`{form}`" + "".join(f"<br>{_cell(n)}" for n in value_notes)
    if entry.builder:
        return "depends on the arguments (see conditions)"
    return ""


def catalog_markdown() -> str:
    """The reference page, docs/ops.md (scripts/gen_ops_doc.py writes it)."""
    stats = catalog_stats()
    lines = [
        "# The ops catalog: TensorFlow / Keras 2 backend -> keras.ops",
        "",
        "Generated from `rules/ops_catalog.py` by `python scripts/gen_ops_doc.py`; do not "
        "edit by hand. `kmigrate explain tf.reduce_mean` shows one entry, "
        "`kmigrate rules --catalog` the counts.",
        "",
        "- **exact**: always rewritten (rule KM201);",
        "- **conditional**: rewritten when the call meets the listed conditions, otherwise "
        "reported for a manual port with the reason (KM202);",
        "- **manual**: never rewritten; the finding (KM202) says why and what to write.",
        "",
        "Every automatic entry has at least one differential test "
        "(`tests/differential/cases.py`): the TensorFlow call and its rewrite run on the "
        "same seeded inputs on the tensorflow, jax and torch backends and must agree "
        "(float32 within 1e-5 relative / 1e-6 absolute unless the case says otherwise; "
        "integers exactly; same shape and dtype).",
        "",
        "| | count |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in stats.items()),
        "",
    ]
    for title, section in SECTIONS.items():
        lines += [
            f"## {title}",
            "",
            "| TensorFlow | Keras 3 | status | notes |",
            "|---|---|---|---|",
        ]
        for entry in section:
            symbols = "<br>".join(f"`{s}`" for s in entry.symbols)
            notes = []
            if entry.automatic:
                conditions = entry.conditions()
                if conditions:
                    notes.append("When: " + "; ".join(conditions) + ".")
                if entry.legacy:
                    renamed = ", ".join(f"`{o}` -> `{n}`" for o, n in entry.legacy.items())
                    notes.append(f"Old keywords: {renamed}.")
                if entry.note:
                    notes.append(entry.note)
                if entry.reason:
                    notes.append(f"Otherwise manual: {entry.reason}.")
            else:
                notes.append(f"{entry.reason[:1].upper()}{entry.reason[1:]}.")
            if entry.suggestion:
                notes.append(f"Instead: {entry.suggestion}.")
            row = [symbols, _cell(_keras_column(entry)), entry.status.value, _cell(" ".join(notes))]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)
