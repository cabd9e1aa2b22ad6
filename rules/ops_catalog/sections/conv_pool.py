"""Ops catalog section "Convolution and pooling": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import CHANNELS_LAST

CONV_POOL = [
    op(
        "tf.nn.conv1d",
        "input, filters, stride, padding, data_format='NWC', dilations=None, name=None",
        "conv",
        "input, filters, strides=window(stride, 1), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 1)",
        note=CHANNELS_LAST,
    ),
    op(
        "tf.nn.conv2d",
        "input, filters, strides, padding, data_format='NHWC', dilations=None, name=None",
        "conv",
        "input, filters, strides=window(strides, 2), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 2)",
        note=CHANNELS_LAST,
    ),
    op(
        "tf.nn.conv3d",
        "input, filters, strides, padding, data_format='NDHWC', dilations=None, name=None",
        "conv",
        "input, filters, strides=window(strides, 3), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 3)",
        note=CHANNELS_LAST,
    ),
    op(
        "tf.nn.convolution",
        "input, filters, strides=None, padding='VALID', data_format=None, dilations=None, "
        "name=None",
        "conv",
        "input, filters, strides=window(strides, 0), padding=padding(padding), "
        "data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 0)",
        note=CHANNELS_LAST,
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
        note=CHANNELS_LAST,
    ),
    op(
        "tf.nn.separable_conv2d",
        "input, depthwise_filter, pointwise_filter, strides, padding, data_format=None, "
        "dilations=None, name=None",
        "separable_conv",
        "input, depthwise_filter, pointwise_filter, strides=window(strides, 2), "
        "padding=padding(padding), data_format=data_format(data_format) | 'channels_last', "
        "dilation_rate=window(dilations, 2)",
        note=CHANNELS_LAST,
    ),
    *(
        op(
            symbols,
            f"input, ksize, strides, padding, data_format={fmt}, name=None",
            target,
            f"input, window(ksize, {n}), strides=window(strides, {n}), padding=padding(padding), "
            "data_format=data_format(data_format) | 'channels_last'",
            note=CHANNELS_LAST,
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
    op(
        "K.resize_images",
        "x, height_factor, width_factor, data_format, interpolation='nearest'",
        builder="keras2_helper",
        accept={"interpolation": ["nearest", "bilinear"]},
        reason="Keras 3 computes the other interpolations differently on some backends "
        "(bicubic: TensorFlow's Keys kernel a=-0.5, PyTorch's a=-0.75; no area on JAX; no "
        "lanczos on PyTorch)",
        suggestion="ops.image.resize(x, (h * height_factor, w * width_factor), "
        "interpolation=...) where the backends you run agree, checked with kmigrate parity",
        note="A call to `resize_images`, Keras 2's K.resize_images on keras.ops (nearest: "
        "each pixel repeated, as TensorFlow's half-pixel nearest neighbour does for an "
        "integer factor, dtype kept; bilinear: ops.image.resize of the float32 input, "
        "TensorFlow's output dtype), which apply writes into `_keras2_compat.py` beside "
        "the file (unless the module uses the name itself).",
    ),
    manual(
        "K.resize_volumes",
        "Keras 2 backend resize",
        "ops.repeat(ops.repeat(ops.repeat(x, d, axis=1), h, axis=2), w, axis=3) "
        "(channels_last; axes 2, 3, 4 for channels_first)",
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
