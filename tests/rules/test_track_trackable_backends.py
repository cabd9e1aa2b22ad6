"""KM509 on the real backends: a wrapper that registers its wrapped layer with TensorFlow's
checkpoint tracking, ``self._track_trackable(layer, name="layer")``, as
tensorflow/addons' ``WeightNormalization`` does. A Keras 3 layer has that method on the
TensorFlow backend only: the converted wrapper raises ``AttributeError`` while it is
constructed on JAX and PyTorch (apply left it with no finding before). With the call
deleted, as the error finding says (Keras 3 tracks ``self.layer`` itself), it matches the
Keras 2 original on TensorFlow, JAX and PyTorch with the same weights."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import assert_matches_keras2, build_and_predict_worker, run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf


    class Twice(tf.keras.layers.Layer):
        def __init__(self, layer, **kwargs):
            super().__init__(**kwargs)
            self.layer = layer
            self._track_trackable(layer, name="layer")

        def call(self, inputs):
            return self.layer(inputs) * 2.0


    def build():
        inputs = tf.keras.Input((4,))
        x = Twice(tf.keras.layers.Dense(3), name="twice")(inputs)
        return tf.keras.Model(inputs, tf.keras.layers.Dense(2)(x))
    """
).lstrip("\n")
TRACK = '        self._track_trackable(layer, name="layer")\n'
ADVISED = LEGACY.replace(TRACK, "")

WORKER = build_and_predict_worker((3, 4))


def test_the_call_is_an_error_finding_apply_leaves() -> None:
    (finding,) = [f for f in scan_text(LEGACY) if f["rule"] == "KM509"]
    assert (finding["line"], finding["severity"]) == (8, "error")
    assert "TensorFlow backend only" in finding["message"]
    assert TRACK in apply_to_text(LEGACY)


def test_the_converted_wrapper_fails_on_jax_and_torch(tmp_path) -> None:
    module = tmp_path / "converted.py"
    module.write_text(apply_to_text(LEGACY))
    got = {
        b: run_module_worker(WORKER, module, b, tmp_path) for b in ("tensorflow", "jax", "torch")
    }
    assert "y" in got["tensorflow"], got["tensorflow"]  # TensorFlow's Keras 3 layers track
    for backend in ("jax", "torch"):
        assert got[backend]["error"].startswith("AttributeError"), (backend, got[backend])
        assert "_track_trackable" in got[backend]["error"], (backend, got[backend])


def test_the_wrapper_without_the_call_matches_keras2(tmp_path) -> None:
    assert "_track_trackable" not in ADVISED
    assert_matches_keras2(WORKER, LEGACY, apply_to_text(ADVISED), tmp_path)
