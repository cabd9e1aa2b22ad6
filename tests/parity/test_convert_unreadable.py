"""`convert-weights` on HDF5 models Keras 3 cannot rebuild (issue 32, item 13): a Keras 2
functional model that applied TF ops to Keras tensors (stored as ``TFOpLambda`` layers)
and a ``model_config`` nested absurdly deep both ended in a raw traceback. Now each is
a clear message and exit status 2, found before TensorFlow is imported (with --trust
too: trusting a file does not make Keras 3 able to read it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WRITE_TF_OPS = """
import tensorflow as tf
import tf_keras as k2

inputs = k2.Input((3,))
hidden = k2.layers.Dense(2, name="dense")(inputs)
doubled = tf.math.multiply(hidden, 2.0)  # a TF op on a Keras tensor: a TFOpLambda layer
k2.Model(inputs, tf.nn.relu(doubled)).save("tf_ops.h5")
"""


def _env() -> dict[str, str]:
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_USE_LEGACY_KERAS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Python in ``cwd`` on the TensorFlow backend, output as text."""
    command = [sys.executable, *args]
    return subprocess.run(command, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)


def _convert(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(cwd, "-m", "kmigrate", "convert-weights", *args)


@pytest.fixture(scope="module")
def tf_ops_file(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("tf_ops_h5")
    done = _run(work, "-c", textwrap.dedent(WRITE_TF_OPS))
    assert done.returncode == 0, done.stderr[-3000:]
    return work / "tf_ops.h5"


@pytest.mark.backends
@pytest.mark.parametrize("trust", [(), ("--trust",)])
def test_an_h5_with_tf_op_layers_is_a_clear_error(tf_ops_file: Path, trust) -> None:
    done = _convert(tf_ops_file.parent, tf_ops_file.name, "out.keras", *trust)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 2, done.stdout + done.stderr[-3000:]
    assert "TFOpLambda" in done.stderr
    assert "tf.math.multiply" in done.stderr and "tf.nn.relu" in done.stderr
    assert "save_weights" in done.stderr  # the way out
    assert not (tf_ops_file.parent / "out.keras").exists()


@pytest.mark.backends
def test_the_tf_op_layers_are_found_without_tensorflow(tf_ops_file: Path) -> None:
    from kmigrate.parity.legacy_config import config_problems

    tensorflow_before = "tensorflow" in sys.modules
    (problem,) = config_problems(tf_ops_file)
    assert "tf.math.multiply, tf.nn.relu" in problem
    if not tensorflow_before:
        assert "tensorflow" not in sys.modules


@pytest.mark.parametrize("depth", [500, 100_000])
def test_a_deeply_nested_model_config_is_a_clear_error(tmp_path: Path, depth: int) -> None:
    """500 levels: json reads it, Keras's recursive loader would not; 100,000: json's own
    RecursionError. Built with h5py alone (TensorFlow is never imported)."""
    h5py = pytest.importorskip("h5py")
    config = '{"class_name": "Functional", "config": ' + "[" * depth + "]" * depth + "}"
    with h5py.File(tmp_path / "deep.h5", "w") as handle:
        handle.attrs["model_config"] = config
    done = _convert(tmp_path, "deep.h5", "out.keras")
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 2, done.stdout + done.stderr[-3000:]
    assert "nested more than 200 levels deep" in done.stderr
    assert not (tmp_path / "out.keras").exists()
