"""Ops catalog section "Shapes and indexing": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import FLOATX

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
    op(
        "tf.stack",
        "values, axis=0, name='stack'",
        "stack",
        "values, axis=axis",
        builder="stack",
        note="As the shape or count argument of tile, reshape, zeros, ones, fill or "
        "broadcast_to, a stack of a literal list along axis 0 becomes that tuple "
        "((1, ops.shape(x)[1], 1)): the same values, where a tensor there cannot be shaped "
        "in a functional model or under jit on JAX. Bound to a name that is read only as "
        "such a shape (or returned from a private method to callers that never read it), "
        "`shape = tf.stack(shape)` becomes `shape = tuple(shape)` (of a list) or the tuple "
        "(of a literal list).",
    ),
    op(
        "tf.split",
        "value, num_or_size_splits, axis=0, num=None, name='split'",
        "split",
        "value, split(num_or_size_splits), axis=axis",
        builder="split",
        note="tf.split takes section SIZES, keras.ops.split cut INDICES: an int (equal "
        "sections) is kept, a literal list of sizes [2, 3, 5] becomes the indices [2, 5]. "
        "A count or sizes that are not literals (self.heads, [self.units, -1]) make a call "
        "to `split`, tf.split's meaning on keras.ops (an int: equal pieces; a list of "
        "sizes with at most one -1), which apply writes into `_keras2_compat.py` beside "
        "the file; unless they are a tensor (a shape, a cast, a stack) or `num` is given.",
    ),
    op(
        "tf.parallel_stack",
        "values, name='parallel_stack'",
        "stack",
        "values",
        note="tf.parallel_stack works only in graph mode; ops.stack works everywhere.",
    ),
    op(
        "K.stack",
        "x, axis=0",
        "stack",
        "x, axis=axis",
        builder="stack",
        note="As the shape or count argument of tile, reshape, zeros, ones, fill or "
        "broadcast_to, a stack of a literal list along axis 0 becomes that tuple "
        "((1, ops.shape(x)[1], 1)): the same values, where a tensor there cannot be shaped "
        "in a functional model or under jit on JAX. Bound to a name that is read only as "
        "such a shape (or returned from a private method to callers that never read it), "
        "`shape = tf.stack(shape)` becomes `shape = tuple(shape)` (of a list) or the tuple "
        "(of a literal list).",
    ),
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
        note=FLOATX,
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
