"""K.resize_images and TensorFlow 1's resizes in model code, without backends: what is
rewritten (to the ``resize_images`` helper, proven in tests/rules/test_resize_images_backends.py)
and what is refused, with the reason."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text

LAYER = (
    "import tensorflow as tf\nfrom tensorflow import keras\n"
    "from tensorflow.keras import backend as K\n\n\n"
    "class Up(keras.layers.Layer):\n    def call(self, x):\n        return {call}\n"
)


@pytest.mark.parametrize(
    "call",
    [
        'K.resize_images(x, 2, 3, "channels_last")',
        'K.resize_images(x, 2, 2, data_format="channels_first", interpolation="bilinear")',
        'K.resize_images(x, self.size[0], self.size[1], K.image_data_format(), "nearest")',
    ],
)
def test_resize_images_calls_the_keras2_helper(call: str) -> None:
    out = apply_to_text(LAYER.format(call=call))
    assert "resize_images(x, " in out and "K.resize_images" not in out, out
    assert "from _keras2_compat import resize_images" in out, out


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ('K.resize_images(x, 2, 2, "channels_last", "bicubic")', "Keys kernel"),
        ('K.resize_images(x, 2, 2, "channels_last", interpolation=self.how)', "only 'nearest'"),
        ("tf.compat.v1.image.resize_images(x, (8, 8))", "half-pixel centers"),
        ("tf.compat.v1.image.resize_images(x, [8, 8], method=1)", "half-pixel centers"),
        ("tf.compat.v1.image.resize_bilinear(x, (8, 8), align_corners=True)", "half-pixel centers"),
        ("tf.compat.v1.image.resize_nearest_neighbor(x, (8, 8))", "half-pixel centers"),
    ],
)
def test_resizes_without_an_exact_form_are_refused(call: str, why: str) -> None:
    found = [f for f in scan_text(LAYER.format(call=call)) if f.rule.startswith("KM2")]
    assert len(found) == 1 and found[0].fix is None, [f.message for f in found]
    assert why in found[0].message, found[0].message
