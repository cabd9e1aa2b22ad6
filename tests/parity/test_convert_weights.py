"""`kmigrate convert-weights`: legacy files written by TensorFlow become `.keras` files that
predict the same numbers on JAX and PyTorch.

The backend tests write real legacy artifacts with TF-Keras 2 (and one `.h5` with Keras 3 on
TensorFlow) in a subprocess, convert them with the CLI, then reload every `.keras` on jax
and torch in fresh subprocesses and compare with the predictions TensorFlow made when it
wrote the legacy files. The fast tests at the end cover the usage errors.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOISE = ("I0000", "WARNING: All log", "cpu_feature_guard", "To enable the following", "E0000")

WRITE_KERAS2 = """
import numpy as np
import tf_keras as k2

rng = np.random.default_rng(0)
model = k2.Sequential([
    k2.layers.Conv2D(6, 3, activation="relu", input_shape=(12, 12, 3)),
    k2.layers.BatchNormalization(),
    k2.layers.MaxPooling2D(),
    k2.layers.Flatten(),
    k2.layers.Dropout(0.3),
    k2.layers.Dense(4, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(rng.random((32, 12, 12, 3)), rng.integers(0, 4, 32), epochs=2, verbose=0)
x = rng.random((5, 12, 12, 3)).astype("float32")
np.save("x.npy", x)
np.save("y_keras2.npy", model.predict(x, verbose=0))
model.save("model.h5")
model.save_weights("weights.h5")
model.save("saved_model", save_format="tf")
"""

WRITE_KERAS3 = """
import numpy as np
import keras

x = np.load("x.npy")
inputs = keras.Input((12, 12, 3))
hidden = keras.layers.Conv2D(5, 3, activation="tanh")(inputs)
outputs = keras.layers.Dense(2)(keras.layers.GlobalAveragePooling2D()(hidden))
model = keras.Model(inputs, outputs)
np.save("y_keras3.npy", model.predict(x, verbose=0))
model.save("keras3.h5")
"""

MODELS_MODULE = """
import keras


def build_model():
    return keras.Sequential([
        keras.Input((12, 12, 3)),
        keras.layers.Conv2D(6, 3, activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dropout(0.3),
        keras.layers.Dense(4, activation="softmax"),
    ])
"""

PREDICT = """
import glob
import numpy as np
import keras

x = np.load("x.npy")
for path in sorted(glob.glob("converted/*.keras")):
    model = keras.saving.load_model(path)
    np.save(path + "." + keras.backend.backend() + ".npy", model.predict(x, verbose=0))
"""

# name of the converted file -> (legacy artifact, extra CLI arguments, reference predictions)
CONVERSIONS = {
    "from_h5": ("model.h5", [], "y_keras2.npy"),
    "from_weights": ("weights.h5", ["--module", "pkg.models:build_model"], "y_keras2.npy"),
    "from_saved_model": ("saved_model", ["--trust"], "y_keras2.npy"),  # a graph: code
    "from_keras3_h5": ("keras3.h5", [], "y_keras3.npy"),
}


def _env(backend: str) -> dict[str, str]:
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_USE_LEGACY_KERAS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _run(args: list[str], cwd: Path, backend: str = "tensorflow") -> subprocess.CompletedProcess:
    result = subprocess.run(
        args, cwd=cwd, env=_env(backend), capture_output=True, text=True, timeout=900
    )
    if result.returncode != 0:
        errors = [line for line in result.stderr.splitlines() if not line.startswith(NOISE)]
        pytest.fail(f"{' '.join(args[:4])} failed:\n{result.stdout}\n" + "\n".join(errors[-30:]))
    return result


def _python(code: str, cwd: Path, backend: str = "tensorflow") -> subprocess.CompletedProcess:
    return _run([sys.executable, "-c", textwrap.dedent(code)], cwd, backend)


def _convert(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "kmigrate", "convert-weights", *args], cwd)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """Legacy artifacts written by TensorFlow, converted to `.keras` by the CLI."""
    work = tmp_path_factory.mktemp("convert")
    (work / "pkg").mkdir()
    (work / "pkg" / "__init__.py").write_text("")
    (work / "pkg" / "models.py").write_text(MODELS_MODULE)
    _python(WRITE_KERAS2, work)
    _python(WRITE_KERAS3, work)
    for name, (old, extra, _) in CONVERSIONS.items():
        output = _convert(work, old, f"converted/{name}.keras", *extra).stdout
        assert f"wrote converted/{name}.keras" in output
        assert "FAIL" not in output
    return work


@pytest.fixture(scope="module")
def predictions(workdir: Path) -> dict[str, dict[str, object]]:
    import numpy as np

    for backend in ("jax", "torch"):
        _python(PREDICT, workdir, backend)
    return {
        name: {b: np.load(workdir / f"converted/{name}.keras.{b}.npy") for b in ("jax", "torch")}
        for name in CONVERSIONS
    }


@pytest.mark.backends
@pytest.mark.parametrize("name", sorted(CONVERSIONS))
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_converted_file_predicts_like_tensorflow(workdir, predictions, name, backend) -> None:
    import numpy as np

    reference = np.load(workdir / CONVERSIONS[name][2])
    value = predictions[name][backend]
    assert value.shape == reference.shape
    np.testing.assert_allclose(value, reference, rtol=1e-4, atol=1e-5)


@pytest.mark.backends
def test_cli_checks_other_backends_itself(workdir: Path) -> None:
    output = _convert(
        workdir, "model.h5", "converted_weights/model.weights.h5", "--module",
        "pkg.models:build_model", "--check-backends", "jax,torch",
    ).stdout  # fmt: skip
    lines = [line for line in output.splitlines() if line.startswith(("ok", "FAIL"))]
    assert [line.split(":")[0] for line in lines] == [
        "ok   converted model vs legacy file",
        "ok   tensorflow reload",
        "ok   jax reload",
        "ok   torch reload",
    ]
    assert "read it with TF-Keras 2 too" in output


@pytest.mark.backends
def test_plain_tf_saved_model_is_refused_with_advice(workdir: Path) -> None:
    _python(
        """
        import tensorflow as tf

        class Double(tf.Module):
            @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
            def __call__(self, x):
                return 2 * x

        tf.saved_model.save(Double(), "plain_module")
        """,
        workdir,
    )
    result = subprocess.run(
        [sys.executable, "-m", "kmigrate", "convert-weights", "plain_module", "p.keras", "--trust"],
        cwd=workdir,
        env=_env("tensorflow"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 1
    assert "TFSMLayer" in result.stderr


# -- fast: usage errors, no framework import ------------------------------------------------


def _cli(args: list[str], cwd: Path):
    from click.testing import CliRunner

    from kmigrate.parity.convert_weights import convert_weights_command

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(convert_weights_command, args)
    finally:
        os.chdir(old)


def test_new_must_be_a_keras3_format(tmp_path: Path) -> None:
    (tmp_path / "m.h5").write_bytes(b"\x89HDF\r\n\x1a\n")
    result = _cli(["m.h5", "m.h5"], tmp_path)
    assert result.exit_code == 2 and ".keras or .weights.h5" in result.output


def test_missing_input_is_a_usage_error(tmp_path: Path) -> None:
    result = _cli(["nope.h5", "m.keras"], tmp_path)
    assert result.exit_code == 2 and "does not exist" in result.output


def test_tf_checkpoint_prefix_is_explained(tmp_path: Path) -> None:
    (tmp_path / "ckpt.index").write_bytes(b"")
    result = _cli(["ckpt", "m.keras"], tmp_path)
    assert result.exit_code == 1 and "TF checkpoint" in result.output


def test_weights_only_file_needs_a_module(tmp_path: Path) -> None:
    import h5py

    with h5py.File(tmp_path / "w.h5", "w") as handle:
        handle.attrs["layer_names"] = []
    loaded_before = "tensorflow" in sys.modules  # another test of this process may have
    result = _cli(["w.h5", "m.keras"], tmp_path)
    assert result.exit_code == 2 and "--module" in result.output
    if not loaded_before:
        assert "tensorflow" not in sys.modules  # answered without loading TensorFlow
