"""TensorFlow 2's `tf.losses`, `tf.metrics`, `tf.initializers` and `tf.optimizers`,
rewritten by `kmigrate apply` to `keras.*`, compute what the originals computed.

The reference is the legacy runtime: the original module with `TF_USE_LEGACY_KERAS=1`,
where `tf.losses` is Keras 2's (`tf_keras`), as it was in TensorFlow 2.0-2.15. The
rewritten module runs on Keras 3 with each backend. Compared: loss values and metric
results on a fixed batch, the deterministic initializers (random ones draw other numbers
in Keras 2 and 3 even with a seed, so they are left out), and two optimizer steps on a
small variable.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tests.backend_run import original_and_migrated, run_on_backend

pytestmark = pytest.mark.backends

LEGACY = """
import tensorflow as tf


def losses():
    return {
        "mse": tf.losses.MeanSquaredError(),
        "cce": tf.losses.CategoricalCrossentropy(label_smoothing=0.1),
        "huber": tf.losses.Huber(delta=0.5),
        "kld": tf.losses.KLDivergence(),
        "cosine": tf.losses.CosineSimilarity(axis=-1),
    }


def metrics():
    return {
        "mae": tf.metrics.MeanAbsoluteError(),
        "accuracy": tf.metrics.CategoricalAccuracy(),
        "auc": tf.metrics.AUC(num_thresholds=50),
        "top2": tf.metrics.TopKCategoricalAccuracy(k=2),
    }


def initializers():
    return {
        "ones": tf.initializers.Ones(),
        "constant": tf.initializers.Constant(0.5),
        "identity": tf.initializers.Identity(gain=2.0),
    }


def optimizers():
    return {
        "adam": tf.optimizers.Adam(learning_rate=0.1),
        "sgd": tf.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True),
        "rmsprop": tf.optimizers.RMSprop(learning_rate=0.01),
    }
"""

DRIVER = """
import json, os, sys
sys.path.insert(0, ".")
import numpy as np
if os.environ.get("TF_USE_LEGACY_KERAS"):
    import tensorflow as tf
    import tf_keras as keras
    variable, tensor = tf.Variable, tf.constant
else:
    import keras
    variable, tensor = keras.Variable, keras.ops.convert_to_tensor
import objects

y_true = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], "float32")
y_pred = np.array([[0.2, 0.7, 0.1], [0.3, 0.5, 0.2], [0.1, 0.1, 0.8]], "float32")
out = {}
for name, loss in objects.losses().items():
    out["loss." + name] = np.asarray(loss(y_true, y_pred)).tolist()
for name, metric in objects.metrics().items():
    metric.update_state(y_true, y_pred)
    out["metric." + name] = np.asarray(metric.result()).tolist()
for name, initializer in objects.initializers().items():
    out["init." + name] = np.asarray(initializer((3, 3), dtype="float32")).tolist()
for name, optimizer in objects.optimizers().items():
    weight = variable(np.array([1.0, -2.0, 0.5], "float32"))
    for step in range(2):
        grad = tensor(np.array([0.3, -0.1, 0.2], "float32") * (step + 1))
        optimizer.apply_gradients([(grad, weight)])
    out["optimizer." + name] = np.asarray(weight).tolist()
print("REPORT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    return original_and_migrated(tmp_path_factory, LEGACY, "objects.py", DRIVER)


@pytest.fixture(scope="module")
def reference(folders) -> dict:
    original, _ = folders
    argv = [sys.executable, "driver.py"]
    return run_on_backend(argv, "tensorflow", original, legacy_keras=True, timeout=300)


def test_the_rewrite_leaves_no_tensorflow(folders) -> None:
    migrated = (folders[1] / "objects.py").read_text()
    assert "tf." not in migrated and "tensorflow" not in migrated
    assert "keras.losses.CategoricalCrossentropy(label_smoothing=0.1)" in migrated
    assert "keras.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True)" in migrated


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_rewritten_aliases_compute_keras2s_numbers(folders, reference, backend: str) -> None:
    got = run_on_backend([sys.executable, "driver.py"], backend, folders[1], timeout=300)
    assert sorted(got) == sorted(reference)
    for key, expected in reference.items():
        np.testing.assert_allclose(got[key], expected, rtol=1e-5, atol=1e-6, err_msg=key)
