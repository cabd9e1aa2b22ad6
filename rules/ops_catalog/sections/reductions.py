"""Ops catalog section "Reductions, indices, segments": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import (
    INDEX_DTYPE,
    INT_RESULT,
    K_REDUCE,
    K_REDUCE_OUT,
    REDUCE,
    REDUCE_LEGACY,
    REDUCE_OUT,
    REDUCE_V1,
)

# The product of a shape's dimensions (K.prod(K.shape(x)[1:3])) is the shape_prod
# helper, a Python int where they are known: ops.prod gives a tensor there, a traced
# value under jit on JAX that ops.reshape cannot take.
SHAPE_PROD = (
    "The product of a shape's dimensions, K.prod(K.shape(x)[1:3]) (a slice of a shape, "
    "directly or through local names, or a list of its entries), becomes a call to "
    "`shape_prod`, which apply writes into `_keras2_compat.py` beside the file: a Python "
    "int where the dimensions are known (ops.prod gives a tensor, a traced value under "
    "jit on JAX that ops.reshape refuses), the product of the dimensions as they are "
    "where a model is being built (a scalar tensor on TensorFlow, a symbolic dimension "
    "on JAX)."
)

REDUCTIONS = [
    *(
        op(
            symbols,
            REDUCE,
            target,
            REDUCE_OUT,
            legacy=REDUCE_LEGACY,
            note=f"{note} {SHAPE_PROD}".strip() if target == "prod" else note,
            **({"builder": "shape_prod"} if target == "prod" else {}),
        )
        for symbols, target, note in [
            ("tf.math.reduce_sum tf.reduce_sum", "sum", ""),
            ("tf.math.reduce_mean tf.reduce_mean", "mean", INT_RESULT),
            ("tf.math.reduce_max tf.reduce_max", "max", ""),
            ("tf.math.reduce_min tf.reduce_min", "min", ""),
            ("tf.math.reduce_prod tf.reduce_prod", "prod", ""),
            ("tf.math.reduce_all tf.reduce_all", "all", ""),
            ("tf.math.reduce_any tf.reduce_any", "any", ""),
            ("tf.math.reduce_logsumexp tf.reduce_logsumexp", "logsumexp", ""),
            ("tf.math.reduce_std", "std", INT_RESULT),
            ("tf.math.reduce_variance", "var", INT_RESULT),
        ]
    ),
    op(
        "tf.math.reduce_euclidean_norm",
        REDUCE,
        "norm",
        "input_tensor, axis=axes(axis), keepdims=keepdims",
        note=INT_RESULT,
    ),
    *(
        op(
            f"tf.compat.v1.reduce_{name} tf.compat.v1.math.reduce_{name}",
            REDUCE_V1,
            name,
            "input_tensor, axis=axis, keepdims=none_to(keepdims, False)",
            legacy=REDUCE_LEGACY,
            drop=["reduction_indices", "keep_dims"],
            note="TF1 spelling: keep_dims and reduction_indices are the old names of "
            "keepdims and axis.",
        )
        for name in ("sum", "mean", "max", "min", "prod", "any", "all")
    ),
    *(
        op(
            symbols,
            K_REDUCE,
            target,
            K_REDUCE_OUT,
            **({"builder": "shape_prod", "note": SHAPE_PROD} if target == "prod" else {}),
        )
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
        "flatten, so the rewrite writes axis=0. " + INDEX_DTYPE,
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
        note="K.argmax defaults to the last axis; written explicitly. " + INDEX_DTYPE,
    ),
    op("K.argmin", "x, axis=-1", "argmin", "x, axis=axis | -1", note="As K.argmax."),
    op(
        "tf.math.count_nonzero",
        "input, axis=None, keepdims=None, dtype=tf.int64, name=None",
        "count_nonzero",
        "input, axis=axes(axis)",
        accept={"keepdims": [None, False], "dtype": ["int32", "int64"]},
        note=INDEX_DTYPE.replace("indices", "counts"),
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
