"""KM110 on the real backends: bert4keras's switch ``sys.modules['keras'] = tf.keras``
runs under Keras 2 (tf_keras) and makes the next ``import keras`` recurse under Keras 3
on every backend, as the finding says; after ``kmigrate apply`` removed it, the model
matches the Keras 2 original on TensorFlow, JAX and PyTorch with the same weights."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import PREDICT_WORKER, keras2_and_converted, run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import os
    import sys

    import tensorflow as tf

    if os.environ.get("USE_TF_KERAS", "1") == "1":
        sys.modules["keras"] = tf.keras

    import keras  # noqa: E402


    def build():
        inputs = keras.Input((4,))
        hidden = keras.layers.Dense(3, activation="tanh")(inputs)
        return keras.Model(inputs, keras.layers.Dense(2)(hidden))
    """
).lstrip("\n")

WORKER = PREDICT_WORKER


def test_the_alias_is_reported_and_removed() -> None:
    (finding,) = [f for f in scan_text(LEGACY) if f["rule"] == "KM110"]
    assert finding["fixable"] and finding["severity"] == "error"
    converted = apply_to_text(LEGACY)
    assert "sys.modules" not in converted
    assert '== "1":\n    pass\n' in converted  # the block keeps a statement


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_alias_recurses_under_keras3(tmp_path, backend: str) -> None:
    original = tmp_path / "original.py"
    original.write_text(LEGACY)
    got = run_module_worker(WORKER, original, backend, tmp_path)
    assert got.get("error", "").startswith("RecursionError"), got


def test_the_converted_model_matches_keras2_on_every_backend(tmp_path) -> None:
    reference, targets = keras2_and_converted(WORKER, LEGACY, apply_to_text(LEGACY), tmp_path)
    for backend, got in targets.items():
        np.testing.assert_allclose(
            got["out"], reference["out"], rtol=1e-5, atol=1e-6, err_msg=backend
        )
