"""KM204 on the real backends: a wrapper layer whose ``compute_output_shape`` reads the
wrapped layer's shape with ``.as_list()`` (tensorflow/addons' ``WeightNormalization`` and
``SpectralNormalization``: ``tf.TensorShape(self.layer.compute_output_shape(s).as_list())``).
Keras 3's ``compute_output_shape`` returns a tuple and calls the wrapper's own to build a
functional model, so the ``.as_list()`` left in place raises ``AttributeError`` on every
backend; ``list(self.layer.compute_output_shape(s))`` matches the Keras 2 original on
TensorFlow, JAX and PyTorch with the same weights."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import (
    assert_fails_on_every_backend,
    assert_matches_keras2,
    build_and_predict_worker,
)

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf


    class Halve(tf.keras.layers.Wrapper):
        def call(self, inputs):
            return self.layer(inputs) * 0.5

        def compute_output_shape(self, input_shape):
            return tf.TensorShape(self.layer.compute_output_shape(input_shape).as_list())


    def build():
        inputs = tf.keras.Input((4,))
        x = Halve(tf.keras.layers.Dense(3), name="halve")(inputs)
        return tf.keras.Model(inputs, tf.keras.layers.Dense(2)(x))
    """
).lstrip("\n")

WORKER = build_and_predict_worker((3, 4))
READ = "list(self.layer.compute_output_shape(input_shape))"
LEFT = "self.layer.compute_output_shape(input_shape).as_list()"


def test_the_wrapped_shape_is_read_as_a_list_and_matches_keras2(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert f"return tuple({READ})" in converted and "as_list" not in converted
    assert_matches_keras2(WORKER, LEGACY, converted, tmp_path)


def test_the_as_list_left_in_place_raises_under_keras3(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    left = converted.replace(READ, LEFT)
    assert LEFT in left
    assert_fails_on_every_backend(WORKER, left, "AttributeError", "as_list", tmp_path)
