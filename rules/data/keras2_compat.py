"""Keras 2 backend functions that no single keras.ops function replaces, on keras.ops.

Written by kmigrate: `kmigrate apply` moved this folder's code from Keras 2
(tf.keras / tf_keras) to Keras 3, and where a Keras 2 function has no keras.ops
equivalent with the same result for every input, the call now goes to a helper
here with Keras 2's behaviour (shapes, axes, dtypes), written on keras.ops so that it
runs on every Keras 3 backend (TensorFlow, JAX, PyTorch), under jit too. kmigrate's
tests compare each helper with Keras 2 (tf_keras) on the three backends. Only the
helpers this folder calls are here; edit them freely (kmigrate adds missing helpers
and never changes one that exists).
"""

import keras
import numpy as np
from keras import ops


def batch_dot(x, y, axes=None):
    """Keras 2's ``K.batch_dot``: for each batch entry, the dot product of ``x`` and
    ``y`` over axis ``axes[0]`` of ``x`` and ``axes[1]`` of ``y``.

    The result has the batch axis, then the other axes of ``x``, then those of ``y``;
    two rank-2 inputs give shape ``(batch, 1)``. ``axes`` is an int (the same axis of
    both), a pair, or None: the last axis of ``x`` with the last axis of ``y`` when
    ``y`` has rank 2, else with its second to last.
    """
    x_ndim, y_ndim = len(x.shape), len(y.shape)
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2: {x.shape}, {y.shape}")
    if axes is None:
        axes = (x_ndim - 1, y_ndim - 1 if y_ndim == 2 else y_ndim - 2)
    elif isinstance(axes, int):
        axes = (axes, axes)
    x_axis = axes[0] + x_ndim if axes[0] < 0 else axes[0]
    y_axis = axes[1] + y_ndim if axes[1] < 0 else axes[1]
    if x_axis == 0 or y_axis == 0:
        raise ValueError("Cannot perform batch_dot over axis 0 (the batch axis)")
    # einsum subscripts: "a" is the batch axis; the summed axis shares x's letter
    letters = "bcdefghijklmnopqrstuvwxyz"
    x_letters = "a" + letters[: x_ndim - 1]
    y_letters = "a" + letters[x_ndim - 1 : x_ndim + y_ndim - 2]
    summed = x_letters[x_axis]
    y_letters = y_letters[:y_axis] + summed + y_letters[y_axis + 1 :]
    out = x_letters.replace(summed, "") + y_letters[1:].replace(summed, "")
    result = ops.einsum(f"{x_letters},{y_letters}->{out}", x, y)
    if x_ndim == 2 and y_ndim == 2:
        result = ops.expand_dims(result, -1)
    return result


def cast_to_floatx(x):
    """Keras 2's ``K.cast_to_floatx``: a tensor or variable cast to the float type
    (``keras.config.floatx()``); anything else (a NumPy array, a Python number or
    list) becomes a NumPy array of that type, as in Keras 2. A single number becomes a
    NumPy scalar of that type (the same value and dtype as Keras 2's 0-d array): a 0-d
    array on the left of a PyTorch tensor (``epsilon * x``) raises TypeError, a NumPy
    scalar works on every backend, as the 0-d array did on TensorFlow."""
    if isinstance(x, (keras.Variable, keras.KerasTensor)) or ops.is_tensor(x):
        return ops.cast(x, keras.config.floatx())
    value = np.asarray(x, dtype=keras.config.floatx())
    return value[()] if value.ndim == 0 else value


def int_shape(x):
    """Keras 2's ``K.int_shape``: the static shape as a tuple of ints (None for a
    dimension not known yet), or None for a tensor of unknown rank."""
    try:
        return tuple(x.shape)
    except ValueError:  # TensorFlow: iterating the shape of a tensor of unknown rank
        return None
