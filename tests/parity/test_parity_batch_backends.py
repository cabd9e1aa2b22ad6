"""The same verdicts batched as alone (issue 34), on tensorflow, jax and torch: models that
PASS, false-pass reproducers that must FAIL, a model whose conversion still imports
TensorFlow (the models after it on jax and torch run in fresh children of the same fork
servers, which never imported it, and must be proven not to need it), run one by one and
in one batch; the verdicts must be identical, model by model, backend by backend, check by
check. benchmarks/parity_batch.py does the same over 20 models (samples, fixtures, real
factories)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kmigrate.parity.plan import ParityOptions
from kmigrate.parity.runner import ParityEntry, run_parity, run_parity_batch

pytestmark = pytest.mark.backends

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "parity"

# converted with a leftover TensorFlow import (for its input pipeline): "needs TensorFlow"
NEEDS_TF = """import keras
import tensorflow as tf  # noqa: F401 - the input pipeline's


def build_model():
    inputs = keras.Input(shape=(6,))
    return keras.Model(inputs, keras.layers.Dense(3, name="head")(inputs))
"""
ORIGINAL = """import tensorflow as tf


def build_model():
    inputs = tf.keras.Input(shape=(6,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(3, name="head")(inputs))
"""


def test_batched_verdicts_are_the_verdicts_alone(tmp_path):
    (tmp_path / "conv").mkdir()
    (tmp_path / "orig").mkdir()
    (tmp_path / "conv" / "models.py").write_text(NEEDS_TF, encoding="utf-8")
    (tmp_path / "orig" / "models.py").write_text(ORIGINAL, encoding="utf-8")
    entries = [
        ParityEntry(str(tmp_path / "conv" / "models.py"), str(tmp_path / "orig" / "models.py")),
        ParityEntry(str(FIXTURES / "gelu_converted_wrong.py"), str(FIXTURES / "gelu_original.py")),
        ParityEntry(
            str(FIXTURES / "keras2_paths" / "converted" / "models.py"),
            str(FIXTURES / "keras2_paths" / "original" / "models.py"),
        ),
    ]
    options = ParityOptions(backends=["tensorflow", "jax", "torch"], compile_cache=None)
    messages: list[str] = []
    batched = run_parity_batch(entries, options=options, progress=messages.append)
    alone = [run_parity(e.model, reference=e.reference, options=options) for e in entries]
    assert [r.statuses() for r in batched] == [r.statuses() for r in alone]
    # and the verdicts are the ones these models are known for
    assert [r.passed for r in batched] == [True, False, True]
    needs = [r.statuses()["runs"]["target:jax"]["needs_tensorflow"] for r in batched]
    assert needs == [True, False, False]
    # the first model imported TensorFlow on jax and torch; the next ones ran in children of
    # the same fork servers (no fresh process) and still found TensorFlow not imported
    if hasattr(os, "fork"):
        targets = [m.split(":")[0] for m in messages if "(target)" in m]
        assert sorted(targets) == ["started jax", "started tensorflow", "started torch"]
