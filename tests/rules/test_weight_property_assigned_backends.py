"""KM526 on the real backends, for a layer that sets the kernel of the layer it wraps (the
shape of tensorflow/addons' ``WeightNormalization.call``): Keras 2 (tf_keras) runs it;
after ``kmigrate apply`` the assignment raises on TensorFlow, JAX and PyTorch, the error
the finding quotes, when the wrapped layer is a ``Dense``; a ``Conv2DTranspose`` keeps a
plain ``kernel`` attribute in Keras 3, as the finding says."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import PREDICT_WORKER, assert_fails_on_every_backend, run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf


    class Halved(tf.keras.layers.Wrapper):
        def build(self, input_shape):
            if not self.layer.built:
                self.layer.build(input_shape)
            self.v = self.layer.kernel
            self.built = True

        def call(self, inputs):
            self.layer.kernel = self.v * 0.5
            return self.layer(inputs)


    def build():
        inputs = tf.keras.Input({shape})
        return tf.keras.Model(inputs, Halved({layer})(inputs))
    """
).lstrip("\n")
DENSE = LEGACY.format(shape="(4,)", layer="tf.keras.layers.Dense(3)")
# PREDICT_WORKER, reporting the whole error: Keras 3 wraps the AttributeError raised while
# the functional model is made in "Could not automatically infer the output shape" text
# that the shared worker's 300 characters cut before the cause.
WHOLE_ERROR_WORKER = PREDICT_WORKER.replace('"[:300]', '"')


def test_the_assignment_is_a_warning() -> None:
    (finding,) = [f for f in scan_text(DENSE) if f["rule"] == "KM526"]
    assert (finding["line"], finding["severity"], finding["fixable"]) == (12, "warning", False)
    assert "property 'kernel' of 'Dense' object has no setter" in finding["message"]


def test_keras2_runs_it_and_keras3_raises_on_a_dense(tmp_path) -> None:
    original = tmp_path / "original.py"
    original.write_text(DENSE)
    reference = run_module_worker(PREDICT_WORKER, original, "keras2", tmp_path)
    assert "error" not in reference, reference
    assert WHOLE_ERROR_WORKER != PREDICT_WORKER
    assert_fails_on_every_backend(
        WHOLE_ERROR_WORKER,
        apply_to_text(DENSE),
        "AttributeError",
        "property 'kernel' of 'Dense' object has no setter",
        tmp_path,
    )


def test_a_transposed_convolution_keeps_a_plain_kernel(tmp_path) -> None:
    # the worker feeds (3, 4) rows: a (4, 1) image of one channel per row after Reshape
    text = LEGACY.format(shape="(4, 1, 1)", layer="tf.keras.layers.Conv2DTranspose(2, 1)")
    text = text.replace(
        "inputs = tf.keras.Input((4, 1, 1))",
        "inputs = tf.keras.Input((4,))\n    images = tf.keras.layers.Reshape((4, 1, 1))(inputs)",
    ).replace("(inputs))\n", "(images))\n")
    converted = tmp_path / "converted.py"
    converted.write_text(apply_to_text(text))
    for backend in ("tensorflow", "jax", "torch"):
        got = run_module_worker(PREDICT_WORKER, converted, backend, tmp_path)
        assert "error" not in got, (backend, got)
