"""A module that kept Keras 2 with `import tf_keras as keras` (TensorFlow 2.16+), rewritten
by `kmigrate apply` to `import keras`, computes what the original computed.

The reference is the original module on tf_keras (TensorFlow). The rewritten module runs on
Keras 3 with each backend. The module has a custom layer using `keras.backend.mean` (the
import waits for KM201 to move it to `keras.ops` first), and saves and reloads its model
(KM401 moves the HDF5 file to `.keras`). Compared: the predictions of the built model and
of the reloaded one on a fixed batch.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tests.backend_run import original_and_migrated, run_on_backend

pytestmark = pytest.mark.backends

LEGACY = """
import tf_keras as keras
from tf_keras import layers


class Scale(layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1],), initializer="ones")

    def call(self, x):
        return x * self.w * self.factor + keras.backend.mean(x, axis=-1, keepdims=True)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def build():
    inputs = keras.Input((4,))
    hidden = layers.Dense(3, kernel_initializer="ones", bias_initializer="zeros")(inputs)
    return keras.Model(inputs, Scale(factor=3.0, name="scale")(hidden))


def save_and_load(model):
    model.save("model.h5")
    return keras.models.load_model("model.h5", custom_objects={"Scale": Scale})
"""

DRIVER = """
import json, sys
sys.path.insert(0, ".")
import numpy as np
import model_def

x = np.linspace(-1.0, 1.0, 8, dtype="float32").reshape(2, 4)
model = model_def.build()
model.get_layer("scale").w.assign(np.array([0.5, -1.0, 2.0], "float32"))
loaded = model_def.save_and_load(model)
print("REPORT" + json.dumps({
    "built": model.predict(x, verbose=0).tolist(),
    "loaded": loaded.predict(x, verbose=0).tolist(),
}))
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    return original_and_migrated(tmp_path_factory, LEGACY, "model_def.py", DRIVER)


@pytest.fixture(scope="module")
def reference(folders) -> dict:
    return run_on_backend([sys.executable, "driver.py"], "tensorflow", folders[0], timeout=300)


def test_the_rewrite_imports_keras_3_only(folders) -> None:
    migrated = (folders[1] / "model_def.py").read_text()
    assert "tf_keras" not in migrated and "keras.backend" not in migrated
    assert migrated.startswith("\nimport keras\nfrom keras import layers, ops\n")  # isort merges
    assert 'model.save("model.keras")' in migrated


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_rewritten_module_computes_what_tf_keras_computed(
    folders, reference, backend: str
) -> None:
    got = run_on_backend([sys.executable, "driver.py"], backend, folders[1], timeout=300)
    assert sorted(got) == sorted(reference) == ["built", "loaded"]
    for key, expected in reference.items():
        np.testing.assert_allclose(got[key], expected, rtol=1e-6, atol=1e-6, err_msg=key)
    assert not np.allclose(reference["built"], 0.0)
