"""KM517 on the real backends: a layer without variables created inside ``call`` (which
KM517 leaves alone) builds, trains under ``fit`` (traced: jit on JAX) and predicts on
tensorflow, jax and torch; one with weights is still reported."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.rules.common.layer_weights import WEIGHTLESS_LAYERS
from kmigrate.run.runner import scan_text
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

LAYER = textwrap.dedent(
    """
    import keras

    class Mix(keras.layers.Layer):
        def call(self, x):
            y = keras.layers.Reshape((4, 2))(x)
            y = keras.layers.Activation("relu")(y)
            y = keras.layers.MaxPooling1D(2)(y)
            y = keras.layers.Permute((2, 1))(y)
            y = keras.layers.Lambda(lambda t: t * 2.0)(y)
            return keras.layers.Concatenate()([keras.layers.Flatten()(y), x])
    """
)
WORKER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import keras
    namespace = {}
    exec(open(sys.argv[1]).read(), namespace)
    inputs = keras.Input((8,))
    hidden = namespace["Mix"]()(keras.layers.Dense(8)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
    model.compile("sgd", "mse")
    x = np.random.default_rng(0).random((16, 8)).astype("float32")
    before = [w.copy() for w in model.get_weights()]
    model.fit(x, np.ones((16, 1), "float32"), epochs=2, batch_size=8, verbose=0)
    trained = any(not np.allclose(a, b) for a, b in zip(before, model.get_weights()))
    print("REPORT" + json.dumps({
        "shape": list(model.predict(x, verbose=0).shape),
        "weights": len(model.weights),
        "trained": trained,
    }))
    """
)


def test_the_layers_of_the_worker_are_the_ones_kmigrate_leaves_alone() -> None:
    assert {"Reshape", "Activation", "MaxPooling1D", "Permute", "Lambda", "Concatenate"} | {
        "Flatten"
    } <= WEIGHTLESS_LAYERS
    assert not scan_text(LAYER, select=["KM517"])
    assert scan_text(LAYER.replace("Permute((2, 1))", "Dense(2)"), select=["KM517"])


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_weightless_layers_created_in_call_train_and_predict(backend: str, tmp_path: Path) -> None:
    (tmp_path / "layer.py").write_text(LAYER)
    (tmp_path / "worker.py").write_text(WORKER)
    argv = [sys.executable, str(tmp_path / "worker.py"), str(tmp_path / "layer.py")]
    report = run_on_backend(argv, backend, tmp_path)
    assert report == {"shape": [16, 1], "weights": 4, "trained": True}, report
