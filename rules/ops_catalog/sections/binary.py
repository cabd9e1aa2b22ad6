"""Ops catalog section "Binary and comparison ops": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import TRUEDIV, same_signature

BINARY = [
    *same_signature(
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
    op("tf.math.divide tf.divide", "x, y, name=None", "divide", "x, y", note=TRUEDIV),
    op("tf.math.truediv tf.truediv", "x, y, name=None", "true_divide", "x, y", note=TRUEDIV),
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
