"""`kmigrate parity` on the real backends (TensorFlow, JAX, PyTorch, and tf_keras).

Each parity run starts one worker process per backend (TensorFlow alone takes seconds to
import), so these tests are marked `backends` and kept to one run each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate.parity.cli import parity_command
from kmigrate.parity.plan import ParityOptions
from kmigrate.parity.runner import run_parity

pytestmark = pytest.mark.backends

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "parity"
SAMPLES = ROOT / "samples"
ALL = "tensorflow,jax,torch"


def _parity(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(parity_command, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def _save_keras_file_on_jax(path: Path) -> None:
    code = (
        "import sys, keras\n"
        f"sys.path.insert(0, {str(FIXTURES)!r})\n"
        "import portable_layers\n"
        "assert keras.backend.backend() == 'jax'\n"
        "keras.utils.set_random_seed(1)\n"
        f"portable_layers.build_model().save({str(path)!r})\n"
    )
    env = {**os.environ, "KERAS_BACKEND": "jax"}
    env.pop("TF_USE_LEGACY_KERAS", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)


def test_keras_file_saved_on_jax_passes_on_tensorflow_and_torch_and_serves(tmp_path):
    model = tmp_path / "portable.keras"
    _save_keras_file_on_jax(model)
    export = tmp_path / "export"
    code, output = _parity(
        str(model),
        "--custom-objects",
        str(FIXTURES / "portable_layers.py"),
        "--reference-backend",
        "jax",
        "--backends",
        ALL,
        "--export",
        str(export),
        "--format",
        "json",
    )
    report = json.loads(output)
    assert code == 0, output
    assert report["mode"] == "keras_file"
    assert report["reference"]["backend"] == "jax"
    rows = {(r["backend"], r["role"]): r for r in report["runs"]}
    assert set(rows) == {("tensorflow", "target"), ("tensorflow", "export"), ("torch", "target")}
    assert all(r["status"] == "pass" for r in rows.values())
    assert rows[("torch", "target")]["max_abs_err"] < 1e-5
    served = rows[("tensorflow", "export")]
    assert served["model"].startswith("serving_default")
    assert served["outputs"][0]["shape"] == [4, 3]
    assert (export / "saved_model.pb").exists()


def test_approximate_gelu_fails_parity_and_the_report_names_the_layer(kmigrate_cmd, clean_env):
    # original: exact tf.nn.gelu; converted: keras.ops.gelu, which defaults to approximate.
    # Through the real `kmigrate parity` entry point.
    result = subprocess.run(
        [
            *kmigrate_cmd,
            "parity",
            str(FIXTURES / "gelu_converted_wrong.py"),
            "--reference",
            str(FIXTURES / "gelu_original.py"),
            "--backends",
            "tensorflow,jax",
        ],
        env=clean_env,
        capture_output=True,
        text=True,
    )
    output = result.stdout
    assert result.returncode == 1, output + result.stderr
    text = " ".join(output.split())  # the table wraps long lines
    assert text.count("first diverging layer: 'gelu' (GELU)") == 2  # tensorflow and jax
    assert "last: 'expand'" in text
    assert "FAIL: 2 of 2 checks failed" in text


def test_keras2_only_sample_is_checked_against_its_tf_keras_reference():
    # samples/keras2_legacy only runs on Keras 2 (positional add_weight names, lr=);
    # tests/fixtures/parity/keras2_legacy_converted.py is its Keras 3 version, by hand
    # until `kmigrate apply` produces it. The original text goes in as `kmigrate apply
    # --parity` will pass it: as source kept in memory.
    original = (SAMPLES / "keras2_legacy" / "models.py").read_text(encoding="utf-8")
    report = run_parity(
        str(FIXTURES / "keras2_legacy_converted.py"),
        reference_source=original,
        options=ParityOptions(backends=ALL.split(",")),
    )
    data = report.to_dict()
    assert report.passed, json.dumps(data, indent=1)[:3000]
    assert report.reference.keras.endswith("(tf_keras)")
    # Keras 2 code: its reference is Keras 2 from the start (issue 17), no Keras 3 attempt
    assert "the original is Keras 2 code" in report.reference_reason
    assert [r.backend for r in report.runs] == ["tensorflow", "jax", "torch"]
    assert all(r.max_abs < 1e-5 for r in report.runs)


def test_factory_shares_weights_across_backends():
    report = run_parity(
        str(FIXTURES / "portable_layers.py"), options=ParityOptions(backends=ALL.split(","))
    )
    assert report.passed, json.dumps(report.to_dict(), indent=1)[:3000]
    assert report.inputs == [{"shape": [4, 10, 6], "dtype": "float32"}]  # from model.inputs
    assert {r.backend for r in report.runs} == {"jax", "torch"}


def test_model_that_does_not_build_on_a_backend_shows_its_traceback():
    # tf.nn.gelu inside a layer: fine on TensorFlow, not on JAX
    code, output = _parity(
        str(FIXTURES / "gelu_original.py"), "--backends", "tensorflow,jax", "--format", "json"
    )
    assert code == 1
    jax = json.loads(output)["runs"][0]
    assert jax["backend"] == "jax" and jax["status"] == "error"
    assert jax["error"]["stage"] == "build"
    assert "gelu_original.py" in jax["error"]["traceback"]
    assert "tf.nn.gelu" in jax["error"]["traceback"]
