"""Ops catalog section "Images (keras.ops.image)": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import CHANNELS_LAST, DATA, TF1_RESIZE

IMAGE = [
    op(
        "tf.image.resize",
        "images, size, method='bilinear', preserve_aspect_ratio=False, antialias=False, name=None",
        "image.resize",
        "images, size, interpolation=resize_method(method), antialias=antialias, "
        "data_format='channels_last'",
        builder="image_resize",
        accept={"preserve_aspect_ratio": [False]},
        note="TF returns float32 for every method but nearest, whatever the image dtype: "
        "the image is cast to float32 first (refused when it is a TensorFlow call the "
        "cast would hide). " + CHANNELS_LAST,
    ),
    op(
        "tf.image.rgb_to_grayscale",
        "images, name=None",
        "image.rgb_to_grayscale",
        "images, data_format='channels_last'",
    ),
    op(
        "tf.image.rgb_to_hsv",
        "images, name=None",
        "image.rgb_to_hsv",
        "images, data_format='channels_last'",
    ),
    op(
        "tf.image.hsv_to_rgb",
        "images, name=None",
        "image.hsv_to_rgb",
        "images, data_format='channels_last'",
    ),
    op("tf.image.grayscale_to_rgb", "images, name=None", "repeat", "images, 3, axis=-1"),
    op("tf.image.flip_left_right", "image", "flip", "image, axis=-2"),
    op("tf.image.flip_up_down", "image", "flip", "image, axis=-3"),
    op("tf.image.transpose", "image, name=None", "swapaxes", "image, -3, -2"),
    op("tf.image.rot90", "image, k=1, name=None", "rot90", "image, k=k, axes=(-3, -2)"),
    op(
        "tf.image.crop_to_bounding_box",
        "image, offset_height, offset_width, target_height, target_width",
        "image.crop_images",
        "image, top_cropping=offset_height, left_cropping=offset_width, "
        "target_height=target_height, target_width=target_width, data_format='channels_last'",
    ),
    op(
        "tf.image.pad_to_bounding_box",
        "image, offset_height, offset_width, target_height, target_width",
        "image.pad_images",
        "image, top_padding=offset_height, left_padding=offset_width, "
        "target_height=target_height, target_width=target_width, data_format='channels_last'",
    ),
    op(
        "tf.image.extract_patches",
        "images, sizes, strides, rates, padding, name=None",
        "image.extract_patches",
        "images, window(sizes, 2), strides=window(strides, 2), "
        "dilation_rate=window(rates, 2), padding=padding(padding), "
        "data_format='channels_last'",
    ),
    op(
        "tf.compat.v1.image.resize_images tf.compat.v1.image.resize",
        "images, size, method=0, align_corners=False, preserve_aspect_ratio=False, name=None",
        builder="tf1_resize",
        accept={"preserve_aspect_ratio": [False]},
        when="the method is bilinear or nearest (a literal or a ResizeMethod constant) "
        "and `align_corners` a literal",
        note=TF1_RESIZE,
    ),
    op(
        "tf.compat.v1.image.resize_bilinear tf.compat.v1.image.resize_nearest_neighbor",
        "images, size, align_corners=False, name=None, half_pixel_centers=False",
        builder="tf1_resize",
        accept={"half_pixel_centers": [False]},
        when="`align_corners` is a literal",
        note=TF1_RESIZE,
    ),
    manual(
        "tf.image.resize_with_pad tf.image.resize_with_crop_or_pad tf.image.central_crop",
        "keras.ops.image.resize's pad_to_aspect_ratio/crop_to_aspect_ratio place the image "
        "differently",
        "keras.layers.Resizing(h, w, pad_to_aspect_ratio=True) or crop_images/pad_images "
        "with computed offsets",
    ),
    manual(
        "tf.image.crop_and_resize",
        "box-based crops have no keras.ops equivalent",
        "keras_hub/keras_cv ROI ops, or ops.image.crop_images + ops.image.resize per box",
    ),
    manual(
        "tf.image.non_max_suppression tf.image.non_max_suppression_padded "
        "tf.image.combined_non_max_suppression tf.image.non_max_suppression_with_scores "
        "tf.image.non_max_suppression_overlaps",
        "NMS has no keras.ops equivalent (data-dependent output size)",
        "keras_hub's / keras_cv's NonMaxSuppression layers, which run on every backend",
    ),
    manual(
        "tf.image.ssim tf.image.ssim_multiscale tf.image.psnr",
        "TF computes one value per image; check ops.image.ssim / ops.psnr reductions",
        "ops.image.ssim(a, b, max_val) / ops.psnr(a, b, max_val), averaged as you need",
    ),
    manual(
        "tf.image.sobel_edges tf.image.image_gradients tf.image.total_variation",
        "output layouts differ",
        "ops.image.sobel_edges, or ops.conv with explicit kernels",
    ),
    manual(
        "tf.image.per_image_standardization",
        "no keras.ops equivalent",
        "(x - m) / ops.maximum(s, 1 / sqrt(n)) with m, s the per-image mean and std",
    ),
    manual(
        "tf.image.convert_image_dtype",
        "it rescales integers to [0, 1] as well as casting",
        'ops.cast(x, "float32") / 255.0 for uint8 images',
    ),
    manual(
        "tf.image.adjust_brightness tf.image.adjust_contrast tf.image.adjust_gamma "
        "tf.image.adjust_hue tf.image.adjust_saturation",
        "image adjustments with dtype conversions",
        "keras.layers.RandomBrightness/RandomContrast/... or ops arithmetic on float images",
    ),
    manual(
        "tf.image.random_flip_left_right tf.image.random_flip_up_down "
        "tf.image.random_brightness tf.image.random_contrast tf.image.random_crop "
        "tf.image.random_hue tf.image.random_saturation",
        "random augmentation",
        "keras.layers.RandomFlip / RandomBrightness / RandomContrast / RandomCrop / "
        "RandomHue / RandomSaturation, or keep it in the tf.data pipeline",
    ),
    manual(
        "tf.image.draw_bounding_boxes tf.image.yuv_to_rgb tf.image.rgb_to_yuv "
        "tf.image.yiq_to_rgb tf.image.rgb_to_yiq",
        "no keras.ops equivalent",
        "a 3x3 color matrix with ops.tensordot for the color spaces",
    ),
    manual(
        "tf.image.decode_image tf.image.decode_jpeg tf.image.decode_png tf.image.encode_jpeg "
        "tf.image.encode_png",
        DATA,
        "decode in the input pipeline",
    ),
]
