"""KM533 on the real backends: a layer that assigns its trainable kernel in ``call``
while training (tensorflow/addons' ``SpectralNormalization`` normalizes its kernel so).
After ``kmigrate apply`` one SGD step leaves the weights Keras 2 (tf_keras) leaves on
TensorFlow and PyTorch, and other weights on JAX, where Keras 3 trains statelessly and
drops the assignment (2x the reference here): what the finding says. Inference is not
affected, so parity's call and predict checks agree and only its train check fails."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf


    class Shrink(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight(
                name="kernel", shape=(int(input_shape[-1]), 2), initializer="ones"
            )

        def call(self, x, training=None):
            if training:
                self.halve()
            return tf.matmul(x, self.kernel)

        def halve(self):
            self.kernel.assign(self.kernel * 0.5)


    def build():
        inputs = tf.keras.Input((4,))
        return tf.keras.Model(inputs, Shrink(name="shrink")(inputs))
    """
).lstrip("\n")

# Seeded weights, one SGD step on one batch, the weights after it.
TRAIN_WORKER = """
spec.loader.exec_module(subject)
model = subject.build()
rng = np.random.default_rng(0)
model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
x = rng.normal(size=(3, 4)).astype("float32")
model.compile(optimizer="sgd", loss="mse")
model.fit(x, np.zeros((3, 2), "float32"), batch_size=3, epochs=1, shuffle=False, verbose=0)
print("REPORT" + json.dumps({"weights": [w.tolist() for w in model.get_weights()]}))
"""


def test_the_assignment_is_an_error_finding_through_the_method() -> None:
    (finding,) = [f for f in scan_text(LEGACY) if f["rule"] == "KM533"]
    assert (finding["line"], finding["severity"], finding["fixable"]) == (16, "error", False)
    assert "through `halve`" in finding["message"] and "JAX" in finding["message"]


def test_jax_alone_loses_the_assignment_in_fit(tmp_path) -> None:
    original = tmp_path / "original.py"
    original.write_text(LEGACY)
    converted = tmp_path / "converted.py"
    converted.write_text(apply_to_text(LEGACY))
    (reference,) = run_module_worker(TRAIN_WORKER, original, "keras2", tmp_path)["weights"]
    trained = {
        backend: run_module_worker(TRAIN_WORKER, converted, backend, tmp_path)["weights"][0]
        for backend in ("tensorflow", "jax", "torch")
    }
    for backend in ("tensorflow", "torch"):
        np.testing.assert_allclose(trained[backend], reference, rtol=1e-5, atol=1e-6)
    # JAX: the step applied to the kernel before it was halved
    assert not np.allclose(trained["jax"], reference, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(trained["jax"], 2 * np.asarray(reference), rtol=0.2, atol=0.05)
