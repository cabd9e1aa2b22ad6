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

import math

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


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Keras 2's ``K.resize_images``: a 4D batch of images made ``height_factor`` times
    taller and ``width_factor`` times wider (rows and columns are axes 1, 2 for
    ``"channels_last"``, 2, 3 for ``"channels_first"``), for the two interpolations
    Keras 3 computes like TensorFlow on every backend.

    ``"nearest"`` (the default) repeats each pixel: TensorFlow's half-pixel nearest
    neighbour does exactly that for an integer factor, and the dtype is kept.
    ``"bilinear"`` is ``keras.ops.image.resize`` to the new size; TensorFlow returns
    float32 for it whatever the input dtype, so the input is cast to float32 first.
    The factors are ints (Keras 2 truncates them with NumPy's int32 cast).
    """
    if data_format == "channels_first":
        rows, cols = 2, 3
    elif data_format == "channels_last":
        rows, cols = 1, 2
    else:
        raise ValueError(f"Invalid `data_format` argument: {data_format}")
    height_factor, width_factor = int(height_factor), int(width_factor)
    if height_factor < 1 or width_factor < 1:
        raise ValueError(f"The factors must be positive: {height_factor}, {width_factor}")
    if interpolation == "nearest":
        return ops.repeat(ops.repeat(x, height_factor, axis=rows), width_factor, axis=cols)
    if interpolation == "bilinear":
        shape = ops.shape(x)
        size = (shape[rows] * height_factor, shape[cols] * width_factor)
        x = ops.cast(x, "float32")
        return ops.image.resize(x, size, interpolation="bilinear", data_format=data_format)
    raise ValueError(
        f'`interpolation` must be "nearest" or "bilinear" here (Keras 3 computes the '
        f'others differently on some backends). Received: "{interpolation}".'
    )


def rnn(
    step_function,
    inputs,
    initial_states,
    go_backwards=False,
    mask=None,
    constants=None,
    unroll=False,
    input_length=None,
    time_major=False,
    zero_output_for_mask=False,
    return_all_outputs=True,
):
    """Keras 2's ``K.rnn``: ``step_function(input_t, states + constants)`` returns
    ``(output_t, new_states)`` at each step over the time axis (axis 1, or 0 when
    ``time_major``). Returns ``(last_output, outputs, new_states)``; ``outputs`` has the
    time axis, of length one (the last step) unless ``return_all_outputs``.

    Where ``mask`` (batch, time) is false, a step keeps the previous states and repeats
    the previous output (zeros with ``zero_output_for_mask``). A tensor ``input_length``
    masks each sample's steps past its length in the same way, except with ``unroll``
    (Keras 2 ignores it there). ``go_backwards`` walks the time axis from the end and
    returns the outputs in that order. The loop is ``keras.ops.scan``, so it runs under
    jit and in a functional model; ``unroll`` changes nothing else, as in Keras 2.
    """
    constants = tuple(constants or ())
    states = tuple(initial_states)
    flat_inputs = [x if time_major else ops.swapaxes(x, 0, 1) for x in keras.tree.flatten(inputs)]
    if go_backwards:
        flat_inputs = [ops.flip(x, 0) for x in flat_inputs]
    steps = ops.shape(flat_inputs[0])[0]
    step_mask = None  # per step, (batch, 1): whether the step counts
    if mask is not None:
        step_mask = ops.cast(mask, "bool")
        step_mask = step_mask if len(step_mask.shape) == 3 else ops.expand_dims(step_mask, -1)
        step_mask = step_mask if time_major else ops.swapaxes(step_mask, 0, 1)
        step_mask = ops.flip(step_mask, 0) if go_backwards else step_mask
    elif input_length is not None and ops.is_tensor(input_length) and not unroll:
        lengths = ops.cast(input_length, "int32")
        time = ops.expand_dims(ops.arange(steps, dtype="int32"), -1)
        if go_backwards:
            step_mask = ops.expand_dims(ops.max(lengths) - 1 - lengths, 0) < time
        else:
            step_mask = ops.expand_dims(lengths, 0) > time
        step_mask = ops.expand_dims(step_mask, -1)

    def run_step(step_states, flat_input):
        output, new_states = step_function(
            keras.tree.pack_sequence_as(inputs, list(flat_input)), step_states + constants
        )
        new_states = keras.tree.pack_sequence_as(states, keras.tree.flatten(new_states))
        return output, new_states

    def expand(keep, rank):
        # trailing axes of one, so that the mask broadcasts over a value of that rank
        for _ in range(rank - len(keep.shape)):
            keep = ops.expand_dims(keep, -1)
        return keep

    def masked(keep, new, old):
        return tuple(
            ops.where(expand(keep, len(n.shape)), n, o)
            for n, o in zip(keras.tree.flatten(new), keras.tree.flatten(old))
        )

    first, _ = run_step(states, [x[0] for x in flat_inputs])
    output_like = first

    def scan_step(carry, xs):
        # the carry and what each step stacks are one structure: TensorFlow's scan needs
        # them to agree in shape and dtype
        step_states, previous = carry
        output, new_states = run_step(step_states, xs[0])
        if step_mask is not None:
            zeros = [ops.zeros_like(o) for o in keras.tree.flatten(output)]
            fallback = zeros if zero_output_for_mask and not unroll else list(previous)
            output = keras.tree.pack_sequence_as(output_like, masked(xs[1], output, fallback))
            kept = masked(xs[1], new_states, step_states)
            new_states = keras.tree.pack_sequence_as(states, list(kept))
        carry = (new_states, tuple(keras.tree.flatten(output)))
        return carry, carry

    start = (states, tuple(ops.zeros_like(o) for o in keras.tree.flatten(first)))
    xs = (tuple(flat_inputs), step_mask) if step_mask is not None else (tuple(flat_inputs),)
    (final_states, _), (_, flat_outputs) = ops.scan(scan_step, start, xs)
    flat_outputs = list(flat_outputs)
    if not return_all_outputs:
        flat_outputs = [o[-1:] for o in flat_outputs]
    flat_last = [o[-1] for o in flat_outputs]
    if step_mask is not None and zero_output_for_mask and unroll:
        # Keras 2's unrolled loop zeroes masked outputs afterwards: the last output by
        # the last step's mask, the outputs by the whole mask in its original time order
        # (even when the steps went backwards; broadcast over a single kept step)
        flat_last = list(masked(step_mask[-1], flat_last, [ops.zeros_like(o) for o in flat_last]))
        in_order = ops.flip(step_mask, 0) if go_backwards else step_mask
        flat_outputs = [
            ops.where(expand(in_order, len(o.shape)), o, ops.zeros_like(o)) for o in flat_outputs
        ]
    last_output = keras.tree.pack_sequence_as(output_like, flat_last)
    if not time_major:
        flat_outputs = [ops.swapaxes(o, 0, 1) for o in flat_outputs]
    outputs = keras.tree.pack_sequence_as(output_like, flat_outputs)
    return last_output, outputs, list(final_states)


def tf1_resize(images, size, method="bilinear", align_corners=False, skip_same_size=False):
    """TensorFlow 1's resizes (``tf.compat.v1.image.resize_images`` / ``resize``,
    ``resize_bilinear``, ``resize_nearest_neighbor``), whose pixel mapping Keras 3's
    ``ops.image.resize`` does not have: output pixel ``i`` reads input position
    ``i * scale``, with ``scale = in / out`` (``(in - 1) / (out - 1)`` with
    ``align_corners`` and ``out > 1``), no half-pixel offset, computed in float32.

    ``"nearest"`` takes input pixel ``floor(i * scale)`` (rounded half up with
    ``align_corners``), at most ``in - 1``, and keeps the dtype. ``"bilinear"``
    interpolates between ``floor`` and ``ceil`` of the position (at most ``in - 1``)
    in float32 and returns float32, as TensorFlow 1 does. ``images`` is a batch
    (batch, height, width, channels), or one image (resize_images only).
    ``skip_same_size``: resize_images returns the images as they are (dtype
    included) when their static height and width already are ``size``.
    """
    if method not in ("bilinear", "nearest"):
        raise ValueError(f'`method` must be "bilinear" or "nearest" here. Received: {method}')
    if len(images.shape) == 3:
        return tf1_resize(images[None], size, method, align_corners, skip_same_size)[0]
    height, width = size[0], size[1]
    static = all(isinstance(n, (int, np.integer)) for n in (height, width))
    if skip_same_size and static and tuple(images.shape[1:3]) == (height, width):
        return images
    shape = ops.shape(images)

    def source(in_size, out_size):
        """Input positions of the output pixels along one axis, as float32."""
        in_f, out_f = ops.cast(in_size, "float32"), ops.cast(out_size, "float32")
        scale = in_f / out_f
        if align_corners:
            scale = ops.where(out_f > 1, (in_f - 1) / ops.maximum(out_f - 1, 1), scale)
        return ops.arange(out_size, dtype="float32") * scale

    rows, cols = source(shape[1], height), source(shape[2], width)
    last_row, last_col = shape[1] - 1, shape[2] - 1
    if method == "nearest":

        def nearest(position, last):
            below = ops.floor(position)
            if align_corners:  # C's roundf: halves go up
                below = below + ops.cast(position - below >= 0.5, "float32")
            return ops.minimum(ops.cast(below, "int32"), last)

        picked = ops.take(images, nearest(rows, last_row), axis=1)
        return ops.take(picked, nearest(cols, last_col), axis=2)
    images = ops.cast(images, "float32")

    def around(position, last):
        below = ops.floor(position)
        lower = ops.maximum(ops.cast(below, "int32"), 0)
        upper = ops.minimum(ops.cast(ops.ceil(position), "int32"), last)
        return lower, upper, position - below

    top_row, bottom_row, row_weight = around(rows, last_row)
    left, right, col_weight = around(cols, last_col)
    row_weight = ops.reshape(row_weight, (1, -1, 1, 1))
    col_weight = ops.reshape(col_weight, (1, 1, -1, 1))
    top = ops.take(images, top_row, axis=1)
    bottom = ops.take(images, bottom_row, axis=1)
    top_left, top_right = ops.take(top, left, axis=2), ops.take(top, right, axis=2)
    bottom_left, bottom_right = ops.take(bottom, left, axis=2), ops.take(bottom, right, axis=2)
    upper_line = top_left + (top_right - top_left) * col_weight
    lower_line = bottom_left + (bottom_right - bottom_left) * col_weight
    return upper_line + (lower_line - upper_line) * row_weight


def shape_of(x):
    """Keras 2's ``K.shape`` / ``tf.shape`` of any value: a tensor's shape, and the shape
    of the tensor TensorFlow makes of anything else (a Python number or bool: ``()``; a
    nested list: its lengths), as ``keras.ops.shape`` gives it (a tuple of ints, and
    scalar int tensors for dimensions known only when the model runs on TensorFlow).

    ``keras.ops.shape`` reads ``x.shape``: on JAX and PyTorch a Python number or list has
    none. Only such a value is converted: tensors, variables, NumPy arrays and the
    symbolic tensors of a model being built (which ``ops.convert_to_tensor`` refuses)
    are read as they are.
    """
    if not hasattr(x, "shape"):  # a Python number, bool or (nested) list
        x = ops.convert_to_tensor(x)
    return ops.shape(x)


def shape_prod(dims):
    """Keras 2's ``K.prod`` / ``tf.reduce_prod`` of a shape's dimensions
    (``K.prod(K.shape(x)[1:3])``): their product.

    A Python int where every dimension is known (eagerly, on PyTorch, under jit on JAX),
    as ``keras.ops`` takes it in a shape: ``ops.prod`` there gives a tensor, a traced
    value under jit on JAX that ``ops.reshape`` cannot take. Where a dimension is not
    known while a model is built, the product of the dimensions as they are: a scalar
    int32 tensor on TensorFlow, a symbolic dimension on JAX (both accepted in a shape).
    A tensor of dimensions is reduced with ``ops.prod``.
    """
    if isinstance(dims, keras.KerasTensor) or ops.is_tensor(dims):
        return ops.prod(dims)
    return math.prod(dims)


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Keras 2's ``tf.split``: an int cuts ``value`` along ``axis`` into that many equal
    pieces (the axis must divide evenly); a list of sizes cuts pieces of those sizes, one
    of which may be -1 (the rest of the axis). ``keras.ops.split`` takes cut *indices*
    (NumPy's meaning), not sizes: ``[2, 3]`` there gives three pieces, here two.

    The sizes are Python ints (or a NumPy array): pieces before a -1 are cut from the
    start, pieces after it from the end, so that no piece needs the length of the axis,
    which a model being built may not know. Where that length is known, sizes that do
    not add up to it raise ``ValueError``, as in Keras 2. ``num`` (needed by TensorFlow
    only for a tensor of sizes) must match the number of sizes; ``name`` is ignored.
    """
    rank = len(value.shape)
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank}")
    axis %= rank
    length = ops.shape(value)[axis]
    # Keras's shape inference while a model is built: a symbolic length on JAX, data-less
    # "meta" tensors on PyTorch (whose unknown lengths are stand-ins, 83 or 89). No value
    # is computed there: the lengths are not checked, and equal pieces are slices, as
    # ops.split cannot split an axis of unknown length.
    backend = keras.config.backend()
    inferring = not isinstance(value, keras.KerasTensor) and (
        (not isinstance(length, int) and backend != "tensorflow")
        or (backend == "torch" and value.device.type == "meta")
    )
    checked = isinstance(length, int) and not inferring

    def piece(start, stop):
        return value[(slice(None),) * axis + (slice(start, stop),)]

    if np.ndim(num_or_size_splits) == 0:
        count = int(num_or_size_splits)
        if num is not None and int(num) != count:
            raise ValueError(f"num={num} does not match num_or_size_splits={count}")
        if count < 1 or checked and length % count:
            raise ValueError(f"{count} equal pieces do not split an axis of length {length}")
        if inferring:
            size = length // count
            return [piece(i * size, (i + 1) * size) for i in range(count)]
        return ops.split(value, count, axis=axis)
    sizes = [int(size) for size in num_or_size_splits]
    if num is not None and int(num) != len(sizes):
        raise ValueError(f"num={num} does not match the {len(sizes)} sizes {sizes}")
    if sizes.count(-1) > 1 or any(size < -1 for size in sizes):
        raise ValueError(f"The sizes may hold one -1 and no other negative number: {sizes}")
    known = sum(size for size in sizes if size != -1)
    if checked and (known > length if -1 in sizes else known != length):
        raise ValueError(f"The sizes {sizes} do not split an axis of length {length}")
    rest = sizes.index(-1) if -1 in sizes else len(sizes)
    pieces, start = [], 0
    for size in sizes[:rest]:
        pieces.append(piece(start, start + size))
        start += size
    if rest < len(sizes):
        stop = -sum(sizes[rest + 1 :])
        pieces.append(piece(start, stop or None))
        for size in sizes[rest + 1 :]:
            # (an empty piece at the very end: stop is 0 there, which starts the axis)
            pieces.append(piece(stop, stop + size or None) if size else piece(0, 0))
            stop += size
    return pieces


def broadcast_dynamic_shape(shape_x, shape_y):
    """TensorFlow's ``tf.broadcast_dynamic_shape``: the shape two shapes broadcast to.
    Each shape is a tuple or list (as ``ops.shape`` gives) or a 1-D int tensor. The result
    is a tuple as ``ops.shape`` returns one (ints, and scalar int tensors for dimensions
    known only when the model runs on TensorFlow), holding the numbers of TensorFlow's int32
    tensor: what ``ops.broadcast_to`` / ``ops.reshape`` take on every backend. Known
    dimensions that do not broadcast raise ValueError (TensorFlow: InvalidArgumentError)."""

    def entries(shape):
        if not isinstance(shape, (tuple, list)):  # a 1-D tensor of dimensions
            shape = [shape[i] for i in range(int(shape.shape[0]))]
        found = []
        for entry in shape:
            try:
                found.append(int(entry))
            except Exception:  # noqa: BLE001 - None, a TensorFlow graph tensor, a JAX tracer
                found.append(entry)  # known only when the model runs
        return found

    x, y = entries(shape_x), entries(shape_y)
    rank = max(len(x), len(y))
    x = [1] * (rank - len(x)) + x
    y = [1] * (rank - len(y)) + y
    result = []
    for a, b in zip(x, y):
        if isinstance(a, int) and isinstance(b, int):
            if a != b and a != 1 and b != 1:
                raise ValueError(f"Incompatible shapes for broadcasting: {x} and {y}")
            result.append(b if a == 1 else a)
        elif isinstance(a, int):
            result.append(b if a == 1 else a)
        elif isinstance(b, int):
            result.append(a if b == 1 else b)
        elif a is None or b is None:
            result.append(None)
        else:
            try:  # a JAX symbolic dimension and itself (jit with an unknown batch)
                same = a is b or bool(a == b)
            except Exception:  # noqa: BLE001 - a TensorFlow graph tensor has no bool
                same = False
            result.append(a if same else ops.where(ops.equal(a, 1), b, a))
    return tuple(result)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """TensorFlow's ``tf.nn.batch_normalization``: ``mean``, ``variance``, ``offset`` and
    ``scale`` broadcast against ``x`` whatever their shapes (moments kept with
    ``keepdims``, a group axis of their own), where ``keras.ops.batch_normalization`` takes
    vectors along one ``axis``. The same arithmetic in the same order as TensorFlow's
    (``x * inv + (offset - mean * inv)``, ``inv = rsqrt(variance + variance_epsilon) *
    scale``), so the results agree to the last bits a backend's ``rsqrt`` allows.
    ``offset`` and ``scale`` may be None; ``name`` is ignored."""
    inv = ops.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = offset - mean * inv if offset is not None else -mean * inv
    return x * ops.cast(inv, x.dtype) + ops.cast(shift, x.dtype)
