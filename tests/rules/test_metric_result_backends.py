"""KM522 on the real backends: a metric whose ``result()`` returns its variable fails
``fit`` on JAX; after the rewrite it runs on TensorFlow, JAX and PyTorch and reports
what the Keras 2 metric reported (tf_keras runs the original as the reference).

The converted code comes from the engine (``apply_to_text``). Each side runs in its own
subprocess: ``KERAS_BACKEND`` (and tf_keras versus Keras 3) is chosen at import.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf
    from tensorflow import keras


    class PositiveSum(keras.metrics.Metric):
        def __init__(self, name="positive_sum", **kwargs):
            super().__init__(name=name, **kwargs)
            self.total = self.add_weight(name="total", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.total.assign_add(tf.reduce_sum(tf.nn.relu(y_pred - y_true)))

        def result(self):
            return self.total


    def build():
        inputs = keras.Input((4,))
        outputs = keras.layers.Dense(2, kernel_initializer="ones")(inputs)
        return keras.Model(inputs, outputs)
    """
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    import importlib.util, json, sys
    import numpy as np
    if sys.argv[2] == "keras2":
        import tf_keras as keras
    else:
        import keras

    spec = importlib.util.spec_from_file_location("subject", sys.argv[1])
    subject = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(subject)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.0, (16, 4)).astype("float32")
    y = rng.uniform(-1.0, 1.0, (16, 2)).astype("float32")
    model = subject.build()
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse",
        metrics=[subject.PositiveSum()],
    )
    try:
        history = model.fit(x, y, batch_size=16, epochs=1, verbose=0).history
        print("REPORT" + json.dumps({"metric": float(history["positive_sum"][0])}))
    except Exception as error:  # the unconverted metric on jax
        print("REPORT" + json.dumps({"error": f"{type(error).__name__}: {error}"[:300]}))
    """
)


def _run(module: Path, backend: str, tmp_path: Path) -> dict:
    """``backend`` "keras2" runs the original on tf_keras, the Keras 2 reference."""
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    flavour = "keras2" if backend == "keras2" else "keras3"
    argv = [sys.executable, str(worker), str(module), flavour]
    if backend == "keras2":
        return run_on_backend(argv, "tensorflow", tmp_path, legacy_keras=True)
    return run_on_backend(argv, backend, tmp_path)


def test_the_converted_metric_reports_keras2s_value_on_every_backend(tmp_path: Path) -> None:
    converted = apply_to_text(LEGACY)
    assert "convert_to_tensor(self.total)" in converted
    assert "import tensorflow" not in converted
    original = tmp_path / "original.py"
    original.write_text(LEGACY)
    rewritten = tmp_path / "converted.py"
    rewritten.write_text(converted)
    reference = _run(original, "keras2", tmp_path)["metric"]
    assert reference > 0
    for backend in ("tensorflow", "jax", "torch"):
        got = _run(rewritten, backend, tmp_path)
        assert "error" not in got, (backend, got)
        assert got["metric"] == pytest.approx(reference, rel=1e-5), backend


def test_unconverted_metric_fails_fit_on_jax(tmp_path: Path) -> None:
    """The reason for the rule: the original, with only its imports ported, breaks on JAX."""
    imports_only = LEGACY.replace("from tensorflow import keras", "import keras").replace(
        "tf.reduce_sum(tf.nn.relu(", "keras.ops.sum(keras.ops.relu("
    )
    subject = tmp_path / "imports_only.py"
    subject.write_text(imports_only.replace("import tensorflow as tf\n", ""))
    got = _run(subject, "jax", tmp_path)
    assert "error" in got and "jax" in got["error"].lower(), got
