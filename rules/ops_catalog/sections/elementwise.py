"""Ops catalog section "Element-wise math": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import same_signature

ELEMENTWISE = [
    *same_signature(
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
    *same_signature(
        [("tf.math.real", "real"), ("tf.math.angle", "angle")],
        "input, name=None",
    ),
    *same_signature(
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
