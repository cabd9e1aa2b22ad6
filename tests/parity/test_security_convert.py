"""`convert-weights` refuses a file that carries code unless --trust.

A legacy HDF5 ``Lambda`` layer stores its Python function as marshalled bytecode, which
Keras rebuilds and runs when the model is loaded and called; a SavedModel's graphs are
TensorFlow programs. The backend tests write real HDF5 files with TF-Keras 2 and Keras 3
whose Lambda writes a marker file when it runs, and show that without --trust nothing
is loaded (the marker stays absent, TensorFlow is not even imported) and with --trust
the conversion goes through.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]

WRITE = """
import os
import sys

marker = sys.argv[1]
# What an attacker's lambda would do, harmlessly: a side effect when it runs. Its code
# must stand alone (only the bytecode is stored), so the marker path is a constant.
payload = eval(f"lambda x: (open({marker!r}, 'w').write('ran'), x * 2.0)[1]")

import tf_keras as k2  # noqa: E402

inputs = k2.Input((3,))
hidden = k2.layers.Dense(2, name="dense")(inputs)
doubled = k2.layers.Lambda(payload, output_shape=(2,), name="doubler")(hidden)
k2.Model(inputs, doubled).save("keras2_lambda.h5")

import keras  # noqa: E402

inputs = keras.Input((3,))
hidden = keras.layers.Dense(2, name="dense")(inputs)
doubled = keras.layers.Lambda(payload, output_shape=(2,), name="doubler3")(hidden)
keras.Model(inputs, doubled).save("keras3_lambda.h5")

plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense")])
plain.save("plain.h5")
os.remove(marker)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_USE_LEGACY_KERAS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


@pytest.fixture(scope="module")
def lambda_files(tmp_path_factory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("lambda_h5")
    marker = work / "lambda-ran"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WRITE), str(marker)],
        cwd=work,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert not marker.exists()
    return work, marker


def _convert_in_process(cwd: Path, *args: str):
    from kmigrate.parity.convert_weights import convert_weights_command

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(convert_weights_command, list(args))
    finally:
        os.chdir(old)


@pytest.mark.backends
@pytest.mark.parametrize(
    "name, layer", [("keras2_lambda.h5", "doubler"), ("keras3_lambda.h5", "doubler3")]
)
def test_an_h5_with_a_lambda_layer_is_refused_without_trust(lambda_files, name, layer):
    work, marker = lambda_files
    tensorflow_before = "tensorflow" in sys.modules
    result = _convert_in_process(work, name, f"{name}.keras")
    assert result.exit_code == 1, result.output
    assert f"layer '{layer}' is a Lambda holding serialized Python bytecode" in result.output
    assert "--trust" in result.output
    assert not (work / f"{name}.keras").exists()
    assert not marker.exists()  # the lambda never ran
    if not tensorflow_before:
        assert "tensorflow" not in sys.modules  # refused before anything was loaded


@pytest.mark.backends
def test_an_h5_without_code_needs_no_trust(lambda_files) -> None:
    from kmigrate.parity.convert_weights import carried_code

    work, _ = lambda_files
    assert carried_code(work / "plain.h5", "h5-model") == []


@pytest.mark.backends
def test_trust_loads_the_lambda(lambda_files) -> None:
    """With --trust the file is loaded as Keras would, Lambda and all (so the marker
    shows its code did run), and the conversion is verified as usual."""
    work, marker = lambda_files
    done = subprocess.run(
        [sys.executable, "-m", "kmigrate", "convert-weights", "keras2_lambda.h5"]
        + ["trusted.keras", "--trust"],
        cwd=work,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "ok   tensorflow reload" in done.stdout
    assert (work / "trusted.keras").is_file()
    assert marker.read_text() == "ran"
    marker.unlink()


def test_a_saved_model_is_refused_without_trust(tmp_path) -> None:
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "saved_model.pb").write_bytes(b"")
    tensorflow_before = "tensorflow" in sys.modules
    result = _convert_in_process(tmp_path, "exported", "out.keras")
    assert result.exit_code == 1
    assert "is a SavedModel: its TensorFlow graphs are programs" in result.output
    assert "--trust" in result.output
    if not tensorflow_before:
        assert "tensorflow" not in sys.modules
