"""KM204 and KM506 on the real backends: `x.get_shape().as_list()` / `x.shape.as_list()`
in a layer and `K.set_value(lr, K.get_value(lr) * f)` (the usual decay, rewritten in one
round) give after `kmigrate apply`, on TensorFlow, JAX and PyTorch, what the Keras 2
original gives on tf_keras."""

from __future__ import annotations

import re
import sys
import textwrap

import pytest

from tests.backend_run import original_and_migrated, run_on_backend

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf
    from tensorflow import keras
    from tensorflow.keras import backend as K


    class Scale(keras.layers.Layer):
        def call(self, x):
            n = x.get_shape().as_list()[-1]
            m = x.shape.as_list()[-1]
            return x / float(n + m)


    def build():
        inputs = keras.Input((6,))
        return keras.Model(inputs, Scale()(inputs))


    def decay(model):
        K.set_value(model.optimizer.lr, K.get_value(model.optimizer.lr) * 0.5)
        return float(K.get_value(model.optimizer.lr))
    """
).lstrip("\n")

DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
import layer
model = layer.build()
model.compile(optimizer=layer.keras.optimizers.SGD(0.1), loss="mse")
out = np.asarray(model(np.arange(12, dtype="float32").reshape(2, 6)))
print("REPORT" + json.dumps({"out": out.round(6).tolist(), "lr": layer.decay(model)}))
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    original, migrated = original_and_migrated(tmp_path_factory, LEGACY)
    text = (migrated / "layer.py").read_text()
    assert "n = list(x.shape)[-1]" in text and "m = list(x.shape)[-1]" in text, text
    # `keras.ops.` or `ops.`, as the module's imports spell it
    assert re.search(r"\.learning_rate\.assign\((keras\.)?ops\.convert_to_numpy\(", text), text
    return original, migrated


@pytest.fixture(scope="module")
def keras2(folders) -> dict:
    argv = [sys.executable, "-c", DRIVER]
    return run_on_backend(argv, "tensorflow", folders[0], legacy_keras=True)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_converted_shapes_and_decay_match_keras2(folders, keras2, backend) -> None:
    assert keras2["lr"] == pytest.approx(0.05)
    got = run_on_backend([sys.executable, "-c", DRIVER], backend, folders[1])
    assert got["out"] == keras2["out"]
    assert got["lr"] == pytest.approx(keras2["lr"])
