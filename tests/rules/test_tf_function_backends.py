"""KM602 on real backends: a layer whose `call` was decorated with `@tf.function`
computes, after `kmigrate apply` drops the decorator, what the decorated original
computed on TensorFlow, on tensorflow, jax and torch (inference and one training step).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.backend_run import original_and_migrated, run_on_backend

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf


class Gate(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 3), initializer="glorot_uniform")

    @tf.function
    def call(self, x, training=None, mask=None):
        h = tf.nn.relu(tf.matmul(x, self.w))
        if training:
            h = h * 0.5
        if mask is not None:
            h = h * mask
        return tf.reduce_sum(h, axis=-1, keepdims=True)
"""

DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
import keras
from layer import Gate

keras.utils.set_random_seed(3)
rng = np.random.default_rng(5)
x = rng.standard_normal((4, 6)).astype("float32")
y = rng.standard_normal((4, 1)).astype("float32")
model = keras.Sequential([keras.Input((6,)), Gate()])
model.set_weights([np.linspace(-1, 1, 18).reshape(6, 3).astype("float32")])
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
out = {"predict": model.predict(x, verbose=0).tolist()}
out["train"] = keras.ops.convert_to_numpy(model(x, training=True)).tolist()
model.train_on_batch(x, y)
out["after_step"] = [w.tolist() for w in model.get_weights()]
print("REPORT" + json.dumps(out))
"""


def _run(folder: Path, backend: str) -> dict:
    return run_on_backend([sys.executable, "-c", DRIVER], backend, folder, timeout=300)


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    original, migrated = original_and_migrated(tmp_path_factory, textwrap.dedent(LAYER))
    text = (migrated / "layer.py").read_text()
    assert "tf." not in text and "tensorflow" not in text, text
    return original, migrated


@pytest.fixture(scope="module")
def reference(folders) -> dict:
    return _run(folders[0], "tensorflow")


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_dropping_tf_function_keeps_the_numbers(folders, reference, backend: str) -> None:
    got = _run(folders[1], backend)
    for key in ("predict", "train", "after_step"):
        for want, have in zip(reference[key], got[key]):
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg=key)
