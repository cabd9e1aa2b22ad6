"""Fast tests of `kmigrate parity`: comparison, tolerances, weight matching, planning, CLI.

No TensorFlow / Keras / JAX / PyTorch import here. The time-out and crash tests start real
workers, but their model modules hang or exit before any framework is imported.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kmigrate.parity import cli as parity_cli
from kmigrate.parity.compare import (
    EXACT,
    LayerRecord,
    RecordedArray,
    compare_arrays,
    find_divergence,
    tolerance_for,
)
from kmigrate.parity.plan import (
    ParityOptions,
    ParityUsageError,
    canonical_backend,
    find_factory,
    installed_backends,
    parse_model_spec,
    parse_shape,
)
from kmigrate.parity.report import (
    BackendRun,
    CheckResult,
    ErrorInfo,
    ParityReport,
    render,
    verdict,
)
from kmigrate.parity.weights import WeightGroup, WeightMismatchError, match_groups

FIXTURES = Path(__file__).parents[1] / "fixtures" / "parity"


# -- tolerances and array comparison ------------------------------------------------------


def test_tolerance_by_dtype():
    assert tolerance_for("float32").atol == 1e-5
    assert tolerance_for("float32").rtol == 1e-4
    assert tolerance_for("float16").atol > tolerance_for("float32").atol
    assert tolerance_for("bfloat16").rtol > tolerance_for("float16").rtol
    assert tolerance_for("float64").atol < tolerance_for("float32").atol
    assert tolerance_for("int64") == EXACT
    assert tolerance_for("bool") == EXACT
    assert tolerance_for("uint8") == EXACT


def test_overrides_apply_to_floats_only():
    assert tolerance_for("float32", atol=1e-3).atol == 1e-3
    assert tolerance_for("float32", atol=1e-3).rtol == 1e-4  # the other one keeps its default
    assert tolerance_for("int32", atol=1.0, rtol=1.0) == EXACT


def test_close_float_arrays_pass():
    ref = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    diff = compare_arrays("y", ref + 1e-6, ref)
    assert diff.passed
    assert 0 < diff.max_abs < 2e-6
    assert diff.mismatched == 0


def test_float_mismatch_reports_worst_element():
    ref = np.zeros((2, 3), np.float32)
    out = ref.copy()
    out[1, 2] = 0.5
    diff = compare_arrays("y", out, ref)
    assert not diff.passed
    assert diff.mismatched == 1
    assert diff.max_abs == pytest.approx(0.5)
    assert diff.worst == {"index": [1, 2], "value": 0.5, "reference": 0.0}


def test_relative_error_ignores_near_zero_references():
    ref = np.array([0.0, 1e-9, 2.0], np.float32)
    out = np.array([1e-6, 2e-9, 2.0001], np.float32)
    diff = compare_arrays("y", out, ref)
    assert diff.passed
    assert diff.max_rel == pytest.approx(5e-5, rel=1e-2)  # only |ref| > atol counts


def test_rtol_scales_with_magnitude():
    ref = np.array([1000.0], np.float32)
    assert compare_arrays("y", ref + 0.05, ref).passed  # 1e-5 + 1e-4 * 1000 = 0.1
    assert not compare_arrays("y", ref + 0.5, ref).passed


def test_integer_outputs_are_exact():
    ref = np.array([1, 2, 3], np.int32)
    assert compare_arrays("cls", ref.copy(), ref).passed
    diff = compare_arrays("cls", np.array([1, 2, 4], np.int32), ref, atol=10.0)
    assert not diff.passed
    assert diff.max_abs == 1


def test_dtype_difference_is_a_note_not_a_failure():
    ref = np.array([1, 2], np.int64)
    diff = compare_arrays("argmax", ref.astype(np.int32), ref)
    assert diff.passed
    assert "int32" in diff.notes[0] and "int64" in diff.notes[0]


def test_looser_dtype_tolerance_wins():
    ref = np.array([1.0], np.float32)
    diff = compare_arrays("y", np.array([1.004], np.float32), ref, dtype="float16")
    assert diff.passed  # float16 tolerance, since one side is float16
    assert diff.tolerance == tolerance_for("float16")


def test_shape_mismatch_is_a_problem():
    diff = compare_arrays("y", np.zeros((2, 3)), np.zeros((3, 2)))
    assert not diff.passed
    assert "shape (2, 3)" in diff.problem


def test_nan_agrees_only_with_nan():
    ref = np.array([np.nan, 1.0], np.float32)
    assert compare_arrays("y", ref.copy(), ref).passed
    diff = compare_arrays("y", np.array([0.0, 1.0], np.float32), ref)
    assert not diff.passed
    assert math.isinf(diff.max_abs)
    assert "NaN" in diff.notes[0]
    json.dumps(diff.to_dict())  # inf is spelled as a string, still valid JSON


def test_infinities_of_the_same_sign_agree():
    ref = np.array([np.inf, -np.inf, 1.0], np.float32)
    assert compare_arrays("y", ref.copy(), ref).passed
    assert not compare_arrays("y", np.array([1.0, -np.inf, 1.0], np.float32), ref).passed


# -- localisation -------------------------------------------------------------------------


def _record(path: str, value, cls: str = "Dense") -> LayerRecord:
    array = np.asarray(value, np.float32)
    return LayerRecord(path, cls, (RecordedArray(array, "float32"),))


def test_first_diverging_layer_is_named_with_last_agreeing_one():
    reference = [_record("dense", [1.0, 2.0]), _record("gelu", [0.5]), _record("head", [3.0])]
    other = [_record("dense", [1.0, 2.0]), _record("gelu", [0.6]), _record("head", [3.5])]
    div = find_divergence(reference, other)
    assert div is not None
    assert div.path == "gelu"
    assert div.last_agreeing == "dense"
    assert div.worst.max_abs == pytest.approx(0.1, rel=1e-5)


def test_layers_align_by_path_not_execution_order():
    # Keras 3 may run independent branches in another order than Keras 2
    reference = [_record("a", [1.0]), _record("b", [2.0]), _record("add", [3.0])]
    other = [_record("b", [2.0]), _record("a", [1.0]), _record("add", [3.0])]
    assert find_divergence(reference, other) is None


def test_layers_without_counterpart_are_skipped():
    # Keras 2 wraps raw TF ops in TFOpLambda layers, Keras 3 does not record them
    reference = [_record("dense", [1.0]), _record("tf.clip_by_value", [1.0]), _record("out", [2])]
    other = [_record("dense", [1.0]), _record("out", [2.5])]
    div = find_divergence(reference, other)
    assert div.path == "out"
    assert div.unmatched == 0


def test_order_fallback_when_no_name_matches():
    reference = [_record("dense", [1.0]), _record("dense_1", [2.0])]
    other = [_record("dense_7", [1.0]), _record("dense_8", [9.0])]
    div = find_divergence(reference, other)
    assert div.path == "dense_8"
    assert div.reference_path == "dense_1"


# -- weight transfer ----------------------------------------------------------------------


def _group(path, *shapes, cls="Dense"):
    return WeightGroup(path, cls, tuple(f"w{i}" for i in range(len(shapes))), tuple(shapes))


def test_weights_match_by_path_when_order_differs():
    ref = [_group("a", (8, 3), (3,)), _group("b", (8, 4), (4,))]
    here = [_group("b", (8, 4), (4,)), _group("a", (8, 3), (3,))]
    pairs, how = match_groups(ref, here)
    assert how == "path"
    assert pairs == [(1, 0), (0, 1)]


def test_weights_match_by_order_when_names_differ():
    ref = [_group("legacy_dense", (25, 50), (50,)), _group("legacy_dense_1", (50, 16), (16,))]
    here = [_group("dense", (25, 50), (50,)), _group("dense_1", (50, 16), (16,))]
    pairs, how = match_groups(ref, here)
    assert how == "order"
    assert pairs == [(0, 0), (1, 1)]


def test_weight_shape_mismatch_names_layer_and_weight():
    ref = [_group("dense", (8, 3), (3,))]
    here = [WeightGroup("dense", "Dense", ("dense/kernel", "dense/bias"), ((8, 4), (4,)))]
    with pytest.raises(WeightMismatchError) as info:
        match_groups(ref, here)
    message = str(info.value)
    assert "'dense'" in message and "'kernel'" in message
    assert "(8, 4)" in message and "(8, 3)" in message


def test_weight_count_mismatch_names_first_layer_that_differs():
    ref = [_group("a", (4, 4)), _group("b", (4, 2))]
    here = [_group("a", (4, 4)), _group("c", (4, 8)), _group("d", (8, 2))]
    with pytest.raises(WeightMismatchError) as info:
        match_groups(ref, here)
    message = str(info.value)
    assert "2 layers with weights" in message and "3" in message
    assert "#2" in message and "'b'" in message and "'c'" in message


def test_weight_group_roundtrip():
    group = WeightGroup("enc/dense", "Dense", ("kernel", "bias"), ((2, 3), (3,)))
    assert WeightGroup.from_dict(json.loads(json.dumps(group.to_dict()))) == group


# -- planning: model argument, entry points, backends -------------------------------------


def test_keras_file_spec(tmp_path):
    path = tmp_path / "m.keras"
    path.write_bytes(b"zip")
    spec = parse_model_spec(str(path))
    assert spec.is_keras_file and spec.path == str(path.resolve())


def test_factory_spec_with_explicit_name():
    spec = parse_model_spec(str(FIXTURES / "gelu_original.py") + ":build_model")
    assert spec.kind == "factory" and spec.factory == "build_model"
    assert spec.sys_path == (str(FIXTURES),)


def test_factory_found_by_convention():
    spec = parse_model_spec(str(FIXTURES / "gelu_original.py"))
    assert spec.factory == "build_model"


def test_unknown_factory_lists_what_the_module_defines():
    with pytest.raises(ParityUsageError) as info:
        parse_model_spec(str(FIXTURES / "gelu_original.py") + ":build_modle")
    assert "build_modle" in str(info.value) and "GELU, build_model" in str(info.value)


def test_no_entry_point_found():
    with pytest.raises(ParityUsageError) as info:
        parse_model_spec(str(FIXTURES / "no_entry_point.py"))
    message = str(info.value)
    assert "no entry point found" in message
    assert "preprocess, Config" in message
    assert ":FUNCTION" in message


def test_factory_may_be_an_assignment():
    assert find_factory("build_model = make(3)\n", None, where="m.py") == "build_model"


def test_missing_file_and_module_forms(tmp_path):
    with pytest.raises(ParityUsageError, match="not found"):
        parse_model_spec("nowhere/models.py")
    with pytest.raises(ParityUsageError, match="name the function"):
        parse_model_spec("pkg.models")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "models.py").write_text("def build():\n    pass\n")
    spec = parse_model_spec("pkg.models:build", cwd=str(tmp_path))
    assert spec.module == "pkg.models" and spec.factory == "build"
    with pytest.raises(ParityUsageError, match="no top-level function 'nope'"):
        parse_model_spec("pkg.models:nope", cwd=str(tmp_path))


def test_input_shapes():
    assert parse_shape("16,32") == (16, 32)
    assert parse_shape("(16, 32)") == (16, 32)
    assert parse_shape("16x32") == (16, 32)
    with pytest.raises(ParityUsageError):
        parse_shape("a,b")
    with pytest.raises(ParityUsageError):
        parse_shape("0")


def test_backend_names():
    assert canonical_backend("TF") == "tensorflow"
    assert canonical_backend("pytorch") == "torch"
    with pytest.raises(ParityUsageError, match="unknown backend 'mxnet'"):
        canonical_backend("mxnet")


def test_missing_backend_says_how_to_install():
    with pytest.raises(ParityUsageError) as info:
        ParityOptions(backends=["openvino"]).resolved_backends(["tensorflow", "jax"])
    assert "pip install 'openvino'" in str(info.value)
    assert "--backends" in str(info.value)


def test_default_backends_are_the_installed_ones():
    assert ParityOptions().resolved_backends(["jax", "torch"]) == ["jax", "torch"]


# -- the report ---------------------------------------------------------------------------


def _report() -> ParityReport:
    diverged = find_divergence(
        [_record("expand", [1.0]), _record("gelu", [0.5], "GELU")],
        [_record("expand", [1.0]), _record("gelu", [0.51], "GELU")],
    )
    failing = BackendRun(
        backend="jax",
        role="target",
        model="converted m.py:build_model",
        status="fail",
        keras="3.15.1",
        seconds=2.5,
        outputs=[compare_arrays("output", np.array([0.3]), np.array([0.2]))],
        divergence=diverged,
    )
    broken = BackendRun(
        backend="torch",
        role="target",
        model="converted m.py:build_model",
        status="error",
        error=ErrorInfo("build", "AttributeError", "no tf here", "Traceback...\n  line 3"),
    )
    reference = BackendRun(
        backend="tensorflow",
        role="reference",
        model="original m.py:build_model",
        status="reference",
        keras="2.21.0 (tf_keras)",
        notes=["Keras 3 could not run the original (TypeError: x); it ran on Keras 2"],
    )
    return ParityReport(
        subject="m.py:build_model",
        mode="before_after",
        reference=reference,
        runs=[failing, broken],
        inputs=[{"shape": [4, 16], "dtype": "float32"}],
    )


def test_report_names_diverging_layer_and_errors():
    from rich.console import Console

    console = Console(record=True, width=200)
    render(_report(), console)
    text = console.export_text()
    assert "first diverging layer: 'gelu' (GELU)" in text
    assert "last: 'expand'" in text
    assert "torch: ERROR while building the model: AttributeError: no tf here" in text
    assert "Keras 3 could not run the original" in text
    assert "FAIL" in text


def test_report_json_and_exit_code():
    report = _report()
    assert report.exit_code == 1
    data = json.loads(json.dumps(report.to_dict()))
    assert data["version"] == 1 and data["passed"] is False
    jax = data["runs"][0]
    assert jax["status"] == "fail"
    assert jax["first_divergent_layer"]["layer"] == "gelu"
    assert data["runs"][1]["error"]["stage"] == "build"


# -- CLI ----------------------------------------------------------------------------------


def test_help_reads_well():
    result = CliRunner().invoke(parity_cli.parity_command, ["--help"])
    assert result.exit_code == 0
    for words in ("--reference", "--backends", "--export", "--atol", "Exit status", "Examples"):
        assert words in result.output


def test_usage_errors_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no pyproject.toml with a model in it
    runner = CliRunner()
    result = runner.invoke(parity_cli.parity_command, [])
    assert result.exit_code == 2 and "no model given" in result.output
    result = runner.invoke(parity_cli.parity_command, [str(FIXTURES / "no_entry_point.py")])
    assert result.exit_code == 2 and "no entry point found" in result.output
    result = runner.invoke(
        parity_cli.parity_command,
        [str(FIXTURES / "gelu_original.py"), "--backends", "tensorflow,mxnet"],
    )
    assert result.exit_code == 2 and "unknown backend 'mxnet'" in result.output


def _capture_run(monkeypatch) -> dict:
    seen: dict = {}

    def fake_run_parity_batch(entries, *, options, progress):
        seen.update(model=entries[0].model, reference=entries[0].reference, options=options)
        seen["entries"] = [(e.model, e.reference) for e in entries]
        return [
            ParityReport(
                subject=str(e.model),
                mode="factory",
                reference=BackendRun("tensorflow", "reference", str(e.model), "reference"),
                runs=[BackendRun("jax", "target", str(e.model), "pass")],
            )
            for e in entries
        ]

    import kmigrate.parity.runner as runner_module

    monkeypatch.setattr(runner_module, "run_parity_batch", fake_run_parity_batch)
    return seen


def test_options_reach_run_parity(monkeypatch, tmp_path):
    seen = _capture_run(monkeypatch)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        parity_cli.parity_command,
        [
            "m.py:build",
            "--backends",
            "tf, jax",
            "--input-shape",
            "16,32",
            "--input-shape",
            "4",
            "--input-dtype",
            "float32",
            "--atol",
            "1e-4",
            "--timeout",
            "60",
            "--factory-kwargs",
            '{"num_classes": 5}',
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    options = seen["options"]
    assert options.backends == ["tf", "jax"]
    assert options.input_shapes == [(16, 32), (4,)]
    assert options.atol == 1e-4 and options.rtol is None
    assert options.timeout == 60
    assert options.factory_kwargs == {"num_classes": 5}
    assert json.loads(result.output)["passed"] is True


def test_config_table_fills_unset_options(monkeypatch, tmp_path):
    seen = _capture_run(monkeypatch)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "models.py").write_text("def build_model():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.kmigrate.parity]\n"
        'model = "src/models.py:build_model"\n'
        "input_shape = [16, 32]\n"
        'backends = ["tensorflow", "jax"]\n'
        "atol = 1e-3\n"
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(parity_cli.parity_command, ["--atol", "1e-2"])
    assert result.exit_code == 0, result.output
    assert seen["entries"] == [(f"{tmp_path.resolve()}/src/models.py:build_model", None)]
    assert seen["options"].input_shapes == [(16, 32)]
    assert seen["options"].backends == ["tensorflow", "jax"]
    assert seen["options"].atol == 1e-2  # the command line wins


def test_several_models_pair_with_their_references_in_order(monkeypatch, tmp_path):
    seen = _capture_run(monkeypatch)
    monkeypatch.chdir(tmp_path)
    args = ["a.py:f", "b.py:g", "-r", "old_a.py:f", "--reference", "old_b.py:g", "--format", "json"]
    result = CliRunner().invoke(parity_cli.parity_command, args)
    assert result.exit_code == 0, result.output
    assert seen["entries"] == [("a.py:f", "old_a.py:f"), ("b.py:g", "old_b.py:g")]
    report = json.loads(result.output)
    assert report["passed"] is True
    assert [m["subject"] for m in report["models"]] == ["a.py:f", "b.py:g"]
    result = CliRunner().invoke(parity_cli.parity_command, ["a.py:f", "b.py:g", "-r", "o.py:f"])
    assert result.exit_code == 2 and "one --reference per MODEL" in result.output


def test_export_takes_one_model():
    from kmigrate.parity.runner import ParityEntry, run_parity_batch

    entries = [ParityEntry("a.py:f"), ParityEntry("b.py:g")]
    with pytest.raises(ParityUsageError, match="--export writes one SavedModel"):
        run_parity_batch(entries, options=ParityOptions(export_dir="out"))


def test_config_lists_several_models_beside_apply_entry_points(monkeypatch, tmp_path):
    seen = _capture_run(monkeypatch)
    for name in ("new", "old"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.py").write_text("def build_model():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.kmigrate.parity]\n"
        'entry-points = ["new/a.py:build_model"]\n'
        'models = [{model = "new/a.py", reference = "old/a.py"}, "new/a.py"]\n'
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(parity_cli.parity_command, [])
    assert result.exit_code == 0, result.output
    root = tmp_path.resolve()
    assert seen["entries"] == [(f"{root}/new/a.py", f"{root}/old/a.py"), (f"{root}/new/a.py", None)]
    assert "2 of 2 models pass" in result.output


def test_unknown_config_key_is_a_usage_error(monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.kmigrate.parity]\nmodle = 'x.py'\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(parity_cli.parity_command, [])
    assert result.exit_code == 2 and "modle" in result.output


# -- the parent process stays light; workers are time-limited ------------------------------


def test_parent_never_imports_a_framework():
    code = (
        "import sys, kmigrate.parity, kmigrate.parity.cli, kmigrate.parity.runner, "
        "kmigrate.parity.report, kmigrate.parity.compare, kmigrate.parity.plan\n"
        "from kmigrate.parity.plan import installed_backends; installed_backends()\n"
        "heavy = {'tensorflow', 'keras', 'jax', 'torch', 'tf_keras', 'libcst'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


needs_two_backends = pytest.mark.skipif(
    len(installed_backends()) < 2, reason="needs two installed Keras backends"
)


@needs_two_backends
def test_timeout_kills_the_worker_and_names_the_stage():
    from kmigrate.parity.runner import run_parity

    backends = installed_backends()[:2]
    report = run_parity(
        str(FIXTURES / "sleepy_model.py"),
        options=ParityOptions(backends=backends, timeout=1.5),
    )
    assert report.exit_code == 1
    assert report.reference.status == "timeout"
    assert report.reference.error.stage == "load"
    assert "no result after 1.5 s" in report.reference.error.message
    assert [r.status for r in report.runs] == ["skipped"]


@needs_two_backends
def test_crashing_worker_shows_its_stderr():
    from kmigrate.parity.runner import run_parity

    report = run_parity(
        str(FIXTURES / "crashing_model.py"),
        options=ParityOptions(backends=installed_backends()[:2], timeout=30),
    )
    assert report.reference.status == "error"
    assert "exited with status 3" in report.reference.error.message
    assert "simulated native crash" in report.reference.error.traceback


def test_the_pass_line_names_only_the_checks_that_compared_something():
    """A frozen model trains nothing on either side: its train check is skipped, and the
    PASS line must not claim that training was compared (keras-contrib's Swish)."""
    checks = [
        CheckResult("call", "pass"),
        CheckResult("predict", "pass"),
        CheckResult("train", "skipped", detail=["the model has no trainable weights"]),
    ]
    run = BackendRun("jax", "target", "m.py:build_model", "pass", checks=checks)
    reference = BackendRun("tensorflow", "reference", "m.py:build_model", "reference")
    report = ParityReport("m.py:build_model", "before_after", reference, runs=[run])
    assert report.passed
    line = verdict(report)
    assert "PASS" in line and "(call, predict)" in line and "train" not in line
