"""KM518's rewrite on the real backends: a cosine-normalised layer in the shape of
keras-contrib's ``CosineConvolution2D`` divides a reshaped view of its bias in place
(``b, xb = 0., 0.`` then ``b = K.reshape(self.b, ...)``, ``b /= norm``). On TensorFlow that
only rebinds ``b``; on PyTorch it writes into the bias's storage (a RuntimeError when
autograd records, the weight itself changed under ``no_grad``), and ``b /= xnorm`` cannot
broadcast in place. After ``kmigrate apply`` (``b = b / norm``) the model computes what the
Keras 2 original (tf_keras) does on TensorFlow, JAX and PyTorch, in an eager call, in two
predicts and after a training step.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import keras2_and_converted, run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    from tensorflow.keras import backend as K
    from tensorflow.keras.layers import Dense, Flatten, Input, Layer
    from tensorflow.keras.models import Model


    class CosineScale(Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(input_shape[-1], 4))
            self.b = self.add_weight(name="b", shape=(4,))

        def call(self, x):
            b, xb = 0., 0.
            if self.b is not None:
                b = K.reshape(self.b, (1, 4))
                xb = 1.
            wnorm = K.sqrt(K.sum(K.square(self.w), axis=0, keepdims=True) + K.square(b))
            xnorm = K.sqrt(K.sum(K.square(x), axis=-1, keepdims=True) + xb + K.epsilon())
            output = K.dot(x, self.w / wnorm)
            b /= wnorm
            b /= xnorm
            output = output / xnorm
            return output + b


    def build():
        inputs = Input((3, 5))
        return Model(inputs, Dense(2)(Flatten()(CosineScale()(inputs))))
    """
).lstrip("\n")

# eager call, predict twice (an in-place update of a weight shows in the second), then
# one SGD step and the weights it leaves
WORKER = textwrap.dedent(
    """
    try:
        spec.loader.exec_module(subject)
        model = subject.build()
        rng = np.random.default_rng(0)
        model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
        x = rng.normal(size=(4, 3, 5)).astype("float32")
        called = model(x, training=False)  # eager: autograd records on torch
        called = called.detach().numpy() if hasattr(called, "detach") else np.asarray(called)
        first = model.predict(x, verbose=0)
        second = model.predict(x, verbose=0)
        model.compile(optimizer="sgd", loss="mse")
        model.train_on_batch(x, np.ones((4, 2), "float32"))
        after = [np.asarray(w).tolist() for w in model.get_weights()]
        report = {"called": called.tolist(), "first": first.tolist(), "second": second.tolist()}
        report["after"] = after
    except Exception as error:
        report = {"error": f"{type(error).__name__}: {error}"[:300]}
    print("REPORT" + json.dumps(report))
    """
)


def test_the_rebound_bias_matches_keras2_on_every_backend(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert "b = b / wnorm" in converted and "b = b / xnorm" in converted
    reference, targets = keras2_and_converted(WORKER, LEGACY, converted, tmp_path)
    for backend, got in targets.items():
        for key in ("called", "first", "second"):
            np.testing.assert_allclose(got[key], reference[key], rtol=1e-5, atol=1e-5)
        for got_w, want_w in zip(got["after"], reference["after"], strict=True):
            np.testing.assert_allclose(got_w, want_w, rtol=1e-4, atol=1e-5, err_msg=backend)


def test_the_in_place_update_fails_on_torch(tmp_path) -> None:
    """The reason for the rewrite: the same converted module with `b /= ...` kept."""
    converted = apply_to_text(LEGACY)
    kept = converted.replace("b = b / wnorm", "b /= wnorm").replace("b = b / xnorm", "b /= xnorm")
    module = tmp_path / "kept.py"
    module.write_text(kept)
    got = run_module_worker(WORKER, module, "torch", tmp_path)
    assert got.get("error", "").startswith("RuntimeError"), got
