"""Signatures, templates and reasons that several catalog sections share."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.rules.ops_catalog._model import OpEntry, op

# Shared wording.
# ---------------------------------------------------------------------------

NO_TF_STATE = (
    "no argument, and no function it is given (a lambda, a function of the same function "
    "or module, a method of the class), holds or builds TensorFlow-only state: a "
    "tf.TensorArray, a ragged or sparse tensor or spec (keras.ops loops and branches "
    "carry tensors only on JAX and PyTorch)"
)
RANGE_LOOP = (
    "it is not the iterator of a `for` loop whose bound is read from a tensor's shape "
    "(Keras 2 ran that loop as a graph loop; a Python loop over keras.ops.arange fails in "
    "a TensorFlow functional model with the dimension unknown)"
)
SHAPE_ENTRY_CAST = (
    "A cast to int32 of one entry of a dynamic shape (`K.cast(K.shape(x)[0], 'int32')`), "
    "which is int32 already, becomes the entry itself (`keras.ops.shape(x)[0]`): a Python "
    "int where the dimension is known, so it can still slice and shape under jit on JAX "
    "(ops.cast would make it a traced value), and the int32 tensor Keras 2 had where "
    "TensorFlow does not know it."
)
TF1_RESIZE = (
    "A call to `tf1_resize`, TensorFlow 1's resize on keras.ops (output pixel i reads "
    "input position i * in / out, or (in - 1) / (out - 1) with align_corners, without "
    "the half-pixel centers of ops.image.resize; bilinear returns float32, nearest keeps "
    "the dtype; resize_images returns the images as they are when the size does not "
    "change), which apply writes into `_keras2_compat.py` beside the file (unless the "
    "module uses the name itself)."
)
REDUCE = "input_tensor, axis=None, keepdims=False, name=None"
REDUCE_OUT = "input_tensor, axis=axis, keepdims=keepdims"
REDUCE_LEGACY = {"keep_dims": "keepdims", "reduction_indices": "axis"}
REDUCE_V1 = (
    "input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None"
)
K_REDUCE = "x, axis=None, keepdims=False"
K_REDUCE_OUT = "x, axis=axis, keepdims=keepdims"
INT_RESULT = (
    "TensorFlow returns a tensor of the input's dtype for integer inputs; keras.ops "
    "follows NumPy (a float mean of integers). Identical for floating-point inputs."
)
TRUEDIV = (
    "Integer inputs: TensorFlow's true division returns float64, keras.ops float32 "
    "(floatx). Identical for floating-point inputs."
)
INDEX_DTYPE = (
    "TensorFlow returns int64 indices by default, keras.ops int32 (the index dtype Keras "
    "uses on every backend; JAX has no int64 without x64). The values are identical; "
    '`output_type` is dropped. Cast with ops.cast(..., "int64") if a consumer needs int64.'
)
CHANNELS_LAST = (
    "The TF op is channels-last unless data_format says otherwise; the rewrite writes "
    'data_format="channels_last" explicitly because keras.ops follows '
    "keras.config.image_data_format()."
)
FLOATX = (
    "TensorFlow's default dtype is float32; keras.ops uses keras.config.floatx(), which "
    "is float32 unless the project changed it."
)
COMPLEX = (
    "keras.ops has no complex tensors on every backend: its FFTs take and return "
    "(real, imag) pairs."
)
RANDOM_INITIALIZER = (
    "The same distribution with the same defaults (TF2 and Keras 3 agree); like every "
    "random op in Keras 3 it draws other numbers than TensorFlow, also with a seed (the "
    "differential test compares the distribution's moments)."
)
TF1_INITIALIZER = (
    "in TensorFlow 1 code this is TF1's initializer ({tf1} by default), in TensorFlow 2 "
    "code Keras's {tf2}: a default left out means one or the other"
)
RAGGED = "ragged and sparse tensors exist only on the TensorFlow backend"
GRAPH_ONLY = "graph-building API: there is no graph to build on JAX or PyTorch"
STATE = (
    "in tf_keras this returns a tf.Variable (state), not a tensor; in Keras 3 state is "
    "created with self.add_weight(...) in __init__/build"
)
DATA = (
    "input-pipeline op: keep it in the tf.data pipeline (tf.data is a portable input to "
    "model.fit on every backend) or use a keras.layers preprocessing layer"
)


def same_signature(pairs: Iterable[tuple[str, str]], sig: str = "x, name=None") -> list[OpEntry]:
    return [op(symbols, sig, target) for symbols, target in pairs]
