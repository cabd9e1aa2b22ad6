"""KM203 on real backends: a layer's tf.Variable state converts all or nothing, and a value
whose dtype the text fixes converts with that dtype written.

The fixture layer holds two tf.Variables beside an add_weight weight: an easy one
(``tf.ones(shape)``: add_weight) and one that used to stay (``tf.ones(shape) * 1.5``: no
initializer; float32 by TensorFlow's rules), plus an int ``tf.constant`` and a float list.
Converted alone, the easy one left the layer with fewer weights than the original, and
the original's weights no longer loaded. Here the Keras 2 original (tf_keras) saves its
weights (distinct values); the converted layer, on tensorflow, jax and torch, must hold
the same weights in the same order (shapes, dtypes, initial values), load the original's
with ``set_weights``, give them back with ``get_weights`` and predict what Keras 2 predicts.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.backend_run import original_and_migrated, run_on_backend

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras


class Pair(keras.layers.Layer):
    def build(self, input_shape):
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], 3), initializer="ones")
        self.gain = tf.Variable(tf.ones((3,)), name="gain")
        self.bias = tf.Variable(tf.ones((3,)) * 1.5, name="bias")
        self.steps = tf.Variable(tf.constant(3), trainable=False, name="steps")
        self.offset = tf.Variable([0.25, 0.5, 0.75], name="offset")

    def call(self, x):
        scaled = tf.matmul(x, self.kernel) * self.gain + self.bias + self.offset
        return scaled * tf.cast(self.steps, scaled.dtype)
"""

# Runs in a fresh process per backend. With "save", writes the layer's weights (each
# given distinct values) and a prediction; with "load", loads those weights.
DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import Pair, keras

model = keras.Sequential([keras.Input((2,)), Pair()])
layer = model.layers[-1]
as_numpy = lambda w: np.asarray(w.numpy())
report = {
    "names": [w.name.split("/")[-1].split(":")[0] for w in layer.weights],
    "shapes": [list(w.shape) for w in layer.weights],
    "dtypes": [str(as_numpy(w).dtype) for w in layer.weights],
    "initial": [as_numpy(w).ravel().tolist() for w in layer.weights],
    "trainable": len(layer.trainable_weights),
}
x = np.arange(8, dtype="float32").reshape(4, 2) / 8
if sys.argv[1] == "save":
    weights = [(w + i + 1).astype(w.dtype) for i, w in enumerate(model.get_weights())]
    model.set_weights(weights)
    np.savez("weights.npz", *weights)
else:
    stored = np.load("weights.npz")
    weights = [stored[f"arr_{i}"] for i in range(len(stored.files))]
    model.set_weights(weights)
    back = model.get_weights()
    report["round_trip"] = len(back) == len(weights) and all(
        a.dtype == b.dtype and a.shape == b.shape and (a == b).all()
        for a, b in zip(back, weights)
    )
report["predicted"] = np.asarray(model.predict(x, verbose=0)).tolist()
print("REPORT" + json.dumps(report))
"""


def _run(folder: Path, backend: str, mode: str, legacy: bool = False) -> dict:
    argv = [sys.executable, "-c", DRIVER, mode]
    return run_on_backend(argv, backend, folder, legacy_keras=legacy, timeout=300)


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    original, migrated = original_and_migrated(tmp_path_factory, textwrap.dedent(LAYER))
    text = (migrated / "layer.py").read_text()
    assert "tf.Variable" not in text, text
    assert 'dtype="float32", name="bias"' in text and 'dtype="int32"' in text, text
    return original, migrated


@pytest.fixture(scope="module")
def keras2(folders) -> dict:
    return _run(folders[0], "tensorflow", "save", legacy=True)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_converted_state_keeps_the_originals_weights(folders, keras2, backend: str) -> None:
    assert keras2["names"] == ["kernel", "gain", "bias", "offset", "steps"], keras2
    shutil.copy(folders[0] / "weights.npz", folders[1] / "weights.npz")
    got = _run(folders[1], backend, "load")
    for key in ("names", "shapes", "dtypes", "initial", "trainable"):
        assert got[key] == keras2[key], (key, got[key], keras2[key])
    assert got["round_trip"] is True, got
    np.testing.assert_allclose(got["predicted"], keras2["predicted"], rtol=1e-5, atol=1e-5)
