"""Ops catalog section "Dtypes, shapes, config": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import SHAPE_ENTRY_CAST

SHAPE_OF = (
    "`keras.ops.shape(x)` where the code shows x is a tensor (a layer's input in `call` "
    "not used as a list, a tensor function's result, arithmetic on one) or has just read "
    "`x.shape` (`x.shape[0] or tf.shape(x)[0]`); else `shape_of(x)`, which apply "
    "writes into `_keras2_compat.py` beside the file: Keras 2 converts a Python number or "
    "list first, keras.ops.shape reads `x.shape`, which they lack on JAX and PyTorch."
)

DTYPES_AND_SHAPES = [
    op(
        "tf.cast tf.dtypes.cast tf.compat.v1.cast",
        "x, dtype, name=None",
        "cast",
        "x, dtype(dtype)",
        builder="cast",
        note=SHAPE_ENTRY_CAST,
    ),
    op("K.cast", "x, dtype", "cast", "x, dtype(dtype)", builder="cast", note=SHAPE_ENTRY_CAST),
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
        note=SHAPE_OF,
    ),
    op(
        "K.shape",
        "x",
        builder="shape",
        when="as tf.shape: the result is indexed, unpacked or passed as a shape",
        note=SHAPE_OF,
    ),
    op(
        "tf.broadcast_dynamic_shape",
        "shape_x, shape_y",
        builder="broadcast_shape",
        when="the result is only read as a shape (indexed, unpacked, passed to broadcast_to "
        "/ reshape or broadcast again); tf.broadcast_dynamic_shape returns a tensor, the "
        "helper a tuple of ints and scalar tensors",
        note="A call to `broadcast_dynamic_shape`, TensorFlow's broadcast of two shapes on "
        "keras.ops (a tuple, as ops.shape returns), which apply writes into "
        "`_keras2_compat.py` beside the file (unless the module uses the name itself).",
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
