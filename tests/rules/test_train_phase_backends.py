"""``K.in_train_phase`` / ``K.in_test_phase`` in a layer's ``call`` on the real backends:
the converted layer (``x if training else alt``) computes what the Keras 2 original did in
inference (``model(x)``, ``predict``) and in training (``fit`` passes training=True), on
tensorflow, jax and torch. The branches are the shapes real layers use (keras-xlnet's
``PermutationMask``, a nested function as in keras-efficientnets' ``DropConnect``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.backend_run import original_and_migrated, run_driver

pytestmark = pytest.mark.backends

LAYER = """
from tensorflow import keras
from tensorflow.keras import backend as K


class Phased(keras.layers.Layer):
    def call(self, inputs, training=None):
        def shrink():
            return inputs * 0.5

        doubled = inputs * 2.0
        first = K.in_train_phase(shrink, inputs, training=training)
        second = K.in_train_phase(doubled, inputs + 1.0, training)
        third = K.in_test_phase(lambda: inputs - 3.0, doubled, training=training)
        return first + second * third
"""

# `keras` is whatever layer.py binds (tf_keras for the Keras 2 original).
DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import Phased, keras

inputs = keras.Input((3,))
model = keras.Model(inputs, keras.layers.Dense(2)(Phased()(inputs)))
model.set_weights([np.linspace(-1, 1, 6).reshape(3, 2), np.array([0.1, -0.2])])
x = np.linspace(-2, 2, 12).reshape(4, 3).astype("float32")
y = np.linspace(1, -1, 8).reshape(4, 2).astype("float32")


def array(tensor):  # a torch tensor that needs grad is read through detach()
    return np.asarray(tensor.detach() if hasattr(tensor, "detach") else tensor)


out = {"keras": keras.layers.Layer.__module__.split(".")[0]}
out["inference"] = array(model(x, training=False)).tolist()
out["training"] = array(model(x, training=True)).tolist()
out["predict"] = model.predict(x, verbose=0).tolist()
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
model.fit(x, y, batch_size=4, epochs=1, verbose=0)
out["after_fit"] = [np.asarray(w).tolist() for w in model.get_weights()]
print("REPORT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    original, migrated = original_and_migrated(
        tmp_path_factory, textwrap.dedent(LAYER), driver=DRIVER
    )
    text = (migrated / "layer.py").read_text()
    assert "in_train_phase" not in text and "in_test_phase" not in text, text
    assert "(shrink() if training else inputs)" in text, text
    return original, migrated


@pytest.fixture(scope="module")
def reference(folders) -> dict:
    found = run_driver(folders[0], "tensorflow", legacy_keras=True)
    assert found["keras"] == "tf_keras"  # the Keras 2 original
    assert found["inference"] != found["training"]  # both branches are exercised
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_converted_layer_picks_the_same_branches(folders, reference, backend) -> None:
    got = run_driver(folders[1], backend)
    assert got["keras"] == "keras"
    for key in ("inference", "training", "predict"):
        np.testing.assert_allclose(got[key], reference[key], rtol=1e-5, atol=1e-6, err_msg=key)
    for want, have in zip(reference["after_fit"], got["after_fit"], strict=True):
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg="after_fit")
