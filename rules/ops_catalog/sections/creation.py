"""Ops catalog section "Creating tensors": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import FLOATX, RANGE_LOOP, STATE

CREATION = [
    op(
        "tf.zeros",
        "shape, dtype=tf.float32, name=None, layout=None",
        "zeros",
        "shape, dtype=dtype(dtype)",
        note=FLOATX,
    ),
    op(
        "tf.ones",
        "shape, dtype=tf.float32, name=None, layout=None",
        "ones",
        "shape, dtype=dtype(dtype)",
        note=FLOATX,
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
        note=FLOATX,
    ),
    op(
        "tf.range",
        "start, limit=None, delta=1, dtype=None, name='range'",
        "arange",
        "start, stop=limit, step=delta, dtype=dtype(dtype)",
        when=RANGE_LOOP,
    ),
    op(
        "K.arange",
        "start, stop=None, step=1, dtype='int32'",
        "arange",
        "start, stop=stop, step=step, dtype=dtype(dtype)",
        builder="backend_arange",
        when=RANGE_LOOP,
        note="K.arange casts only to a dtype other than 'int32', so its result has "
        "tf.range's dtype, inferred from the bounds and step: dtype is written for literal "
        "bounds (float32 when one is a float), and left to keras.ops.arange, which infers "
        "it the same way, when a bound is an expression.",
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
        STATE,
        "ops.zeros(shape) / ops.ones(shape) for a tensor; "
        'self.add_weight(shape=shape, initializer="zeros") for state',
    ),
    manual("K.eye", STATE, "ops.eye(n) for a tensor; self.add_weight for state"),
    op(
        "K.cast_to_floatx",
        "x",
        builder="keras2_helper",
        note="A call to `cast_to_floatx`, Keras 2's K.cast_to_floatx on keras.ops (a tensor "
        "or variable cast with ops.cast, anything else a NumPy array, as Keras 2 returns; a "
        "single number a NumPy scalar, which a PyTorch tensor accepts on either side), "
        "which apply writes into `_keras2_compat.py` beside the file (unless the module "
        "uses the name itself).",
    ),
]
