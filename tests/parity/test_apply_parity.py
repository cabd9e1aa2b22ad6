"""`kmigrate apply --parity`: the rewrite is checked against the original it replaced."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kmigrate.project.config import Config
from kmigrate.run.apply_parity import entry_points

ROOT = Path(__file__).resolve().parents[2]


def test_entry_points_are_rewritten_files_with_a_factory(tmp_path: Path) -> None:
    config = Config(root=tmp_path)
    changed = [
        (tmp_path / "models.py", "old", "def build_model():\n    pass\n"),
        (tmp_path / "layers.py", "old", "class Block:\n    pass\n"),
        (tmp_path / "nb.ipynb", "old", "{}"),
    ]
    (point,) = entry_points(changed, config)
    assert (point.path.name, point.factory, point.original_text) == (
        "models.py",
        "build_model",
        "old",
    )


def test_configured_entry_point(tmp_path: Path) -> None:
    config = Config(root=tmp_path, extra={"parity": {"entry-points": ["net.py:make_net"]}})
    changed = [(tmp_path / "net.py", "old", "def make_net():\n    pass\n")]
    assert [p.factory for p in entry_points(changed, config)] == ["make_net"]


def test_parity_with_diff_is_a_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kmigrate", "apply", str(tmp_path), "--diff", "--parity"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2


@pytest.mark.backends
def test_apply_parity_on_a_sample(tmp_path: Path) -> None:
    target = tmp_path / "custom_layers"
    shutil.copytree(ROOT / "samples" / "custom_layers", target)
    original = (target / "models.py").read_text()
    result = subprocess.run(
        [sys.executable, "-m", "kmigrate", "apply", str(target), "--parity", "-j", "1"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert (target / "models.py").read_text() != original
    assert "parity" in result.stderr and "build_model" in result.stderr
    for backend in ("tensorflow", "jax", "torch"):
        assert backend in result.stderr


# Legacy code that assumed TensorFlow was the only backend: after the move to Keras 3 the
# other branch runs on jax and torch, so the converted model really computes other numbers.
DIVERGING = """import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K


class Pool(keras.layers.Layer):
    def call(self, x):
        if K.backend() == "tensorflow":
            return tf.reduce_mean(x, axis=-1, keepdims=True)
        return tf.reduce_sum(x, axis=-1, keepdims=True)


def build_model():
    inputs = keras.Input(shape=(4,))
    return keras.Model(inputs, Pool()(inputs))
"""


@pytest.mark.backends
def test_apply_parity_fails_when_the_converted_model_diverges(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(DIVERGING)
    result = subprocess.run(
        [sys.executable, "-m", "kmigrate", "apply", str(tmp_path), "--parity", "-j", "1"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-4000:]
    assert "ops.mean(x, axis=-1, keepdims=True)" in (tmp_path / "models.py").read_text()
    assert "first diverging layer: 'pool' (Pool)" in result.stderr
    for backend in ("jax", "torch"):
        assert f"{backend}: output 'output'" in result.stderr
