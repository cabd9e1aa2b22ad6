"""KM203 on real backends: a layer mixing add_weight with tf.Variable / K.variable state
keeps every weight after `kmigrate apply`.

tf.keras 2 tracked a tf.Variable assigned to a layer attribute as a weight; Keras 3
tracks only Keras variables. The original layer runs under tf_keras (Keras 2) and
reports its weights; the rewritten layer runs on tensorflow, jax and torch and must
report the same weights (count, trainable split, values), then survive a `.keras`
save and reload with its values.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.backend_run import original_and_migrated, run_on_backend

pytestmark = pytest.mark.backends

LAYER = """
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K


@keras.utils.register_keras_serializable(package="km203")
class Mixed(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.table = tf.Variable(np.arange(4.0), dtype=tf.float32, trainable=False, name="table")
        self.steps = tf.Variable(np.zeros(2), dtype="int32", trainable=False, name="steps")

    def build(self, input_shape):
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], 4), initializer="ones")
        self.beta = K.variable(np.full((4,), 0.5), name="beta")
        self.scale = tf.Variable(tf.ones((4,)), name="scale")

    def call(self, x):
        return tf.matmul(x, self.kernel) * self.beta * self.scale + self.table
"""

# Runs in a fresh process per backend: builds the layer in a model, reports its weights,
# sets distinct values, saves, reloads and reports the reloaded values.
DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import Mixed, keras

model = keras.Sequential([keras.Input((3,)), Mixed()])
layer = model.layers[-1]
report = {
    "weights": len(layer.weights),
    # Integer variables never train (TF lists them as trainable, with no gradient;
    # the rewrite writes trainable=False): the split is compared on float weights.
    "trainable": sum("float" in str(w.dtype) for w in layer.trainable_weights),
    "initial": sorted(float(np.asarray(w.numpy() if hasattr(w, "numpy") else w).sum())
                      for w in layer.weights),
}
# A layer frozen before it is built trains nothing, and unfreezing it trains its float
# weights again, as in Keras 2 (a bare keras.Variable would stay trainable when frozen).
frozen = keras.Sequential([keras.Input((3,)), Mixed(trainable=False)])
report["frozen_trainable"] = len(frozen.trainable_weights)
frozen.layers[-1].trainable = True
report["unfrozen_trainable"] = sum("float" in str(w.dtype) for w in frozen.trainable_weights)
if len(sys.argv) > 1:
    for i, w in enumerate(layer.weights):
        w.assign(np.full(tuple(w.shape), i + 2).astype(np.dtype(w.dtype.name if hasattr(
            w.dtype, "name") else w.dtype)))
    expected = [np.asarray(keras.ops.convert_to_numpy(w)) for w in layer.weights]
    model.save(sys.argv[1])
    again = keras.saving.load_model(sys.argv[1])
    reloaded = [np.asarray(keras.ops.convert_to_numpy(w)) for w in again.layers[-1].weights]
    report["reloaded"] = len(reloaded) == len(expected) and all(
        a.shape == b.shape and a.dtype == b.dtype and (a == b).all()
        for a, b in zip(expected, reloaded)
    )
print("REPORT" + json.dumps(report))
"""


def _run(folder: Path, backend: str, legacy: bool, *args: str) -> dict:
    argv = [sys.executable, "-c", DRIVER, *args]
    return run_on_backend(argv, backend, folder, legacy_keras=legacy, timeout=300)


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    original, migrated = original_and_migrated(tmp_path_factory, textwrap.dedent(LAYER))
    text = (migrated / "layer.py").read_text()
    assert "tf.Variable" not in text and "K.variable" not in text, text
    return original, migrated


@pytest.fixture(scope="module")
def keras2(folders) -> dict:
    return _run(folders[0], "tensorflow", True)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_rewritten_state_is_tracked_and_saved(folders, keras2, backend: str) -> None:
    assert keras2["weights"] == 5 and keras2["trainable"] == 3, keras2
    got = _run(folders[1], backend, False, str(folders[1] / f"{backend}.keras"))
    assert got["weights"] == keras2["weights"], got
    assert got["trainable"] == keras2["trainable"], got
    assert (keras2["frozen_trainable"], keras2["unfrozen_trainable"]) == (0, 3), keras2
    assert got["frozen_trainable"] == 0 and got["unfrozen_trainable"] == 3, got
    assert got["initial"] == keras2["initial"], got
    assert got["reloaded"] is True, got
