"""KM534's claim, checked on the installed versions: one training step of a
``BatchNormalization`` on a 4-D batch moves tf_keras's (Keras 2) moving variance with the
unbiased batch variance (the fused kernel's Bessel correction) and Keras 3's, on
TensorFlow, JAX and PyTorch, with the biased one; on a 2-D batch both use the biased one.
Should a Keras 3 release change its update, this test fails and the note must go."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text
from tests.backend_run import keras2_and_converted

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    from tensorflow import keras


    def build(shape):
        inputs = keras.Input(shape)
        outputs = keras.layers.BatchNormalization(momentum=0.99)(inputs)
        return keras.Model(inputs, outputs)
    """
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    spec.loader.exec_module(subject)
    report = {}
    for shape in [(4, 8, 8, 16), (64, 16)]:
        model = subject.build(shape[1:])
        model.compile(optimizer="sgd", loss="mse")
        x = np.random.default_rng(0).normal(size=shape).astype("float32") * 3.0
        model.train_on_batch(x, np.zeros_like(x))
        variance = [w for w in model.weights if "moving_variance" in w.name][0]
        report[str(len(shape))] = np.asarray(variance.numpy()).tolist()
        report["x" + str(len(shape))] = x.reshape(-1, shape[-1]).tolist()
    print("REPORT" + json.dumps(report))
    """
)


def _moved(variance: np.ndarray) -> np.ndarray:
    return 0.99 * 1.0 + 0.01 * variance


def test_keras2_fused_update_is_unbiased_keras3_is_biased(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert "import keras" in converted
    assert [f.rule for f in scan_text(LEGACY) if f.rule == "KM534"] == ["KM534"]
    reference, targets = keras2_and_converted(WORKER, LEGACY, converted, tmp_path)
    rows4 = np.asarray(reference["x4"])
    rows2 = np.asarray(reference["x2"])
    # Keras 2, 4-D (fused): the unbiased variance; 2-D (not fused): the biased one.
    np.testing.assert_allclose(reference["4"], _moved(rows4.var(0, ddof=1)), rtol=1e-5)
    np.testing.assert_allclose(reference["2"], _moved(rows2.var(0, ddof=0)), rtol=1e-5)
    assert not np.allclose(reference["4"], _moved(rows4.var(0, ddof=0)), rtol=1e-6, atol=0)
    for backend, got in targets.items():
        np.testing.assert_allclose(
            got["4"], _moved(rows4.var(0, ddof=0)), rtol=1e-5, err_msg=backend
        )
        np.testing.assert_allclose(
            got["2"], _moved(rows2.var(0, ddof=0)), rtol=1e-5, err_msg=backend
        )
