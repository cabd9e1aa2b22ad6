"""The planning and verdict side of issue 17's parity checks, without a framework: one
process per side, the Keras 2 reference for Keras 2 code, per-input specs, weights matched
once each, and the training-step verdicts (random layers, loss, updated weights)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from kmigrate.parity.flavour import keras2_importer
from kmigrate.parity.inputs import InputSpec, load_spec_file, match_specs, parse_input_spec
from kmigrate.parity.plan import ParityOptions, ParityUsageError, installed_backends
from kmigrate.parity.runner import original_tree
from kmigrate.parity.verdicts import compare_predict, compare_train
from kmigrate.parity.weights import (
    WeightGroup,
    WeightMismatchError,
    match_groups,
    weight_order,
)

# -- inputs --------------------------------------------------------------------------------


def test_input_spec_forms():
    assert parse_input_spec("ids:int32:0:30000") == InputSpec("ids", "int32", 0, 30000)
    assert parse_input_spec("image:float32") == InputSpec("image", "float32")
    assert parse_input_spec("seg:int32:0:2:128").shape == (128,)
    for bad in ("ids", "ids:int32:5:5", "ids:int32:a:3", ":int32"):
        with pytest.raises(ParityUsageError):
            parse_input_spec(bad)


def test_input_spec_file_json_and_toml(tmp_path):
    (tmp_path / "s.json").write_text(
        '{"inputs": [{"name": "ids", "dtype": "int32", "low": 0, "high": 9, "shape": [4]}]}'
    )
    (tmp_path / "s.toml").write_text('[[inputs]]\nname = "seg"\nlow = 0\nhigh = 2\n')
    assert load_spec_file(str(tmp_path / "s.json")) == [InputSpec("ids", "int32", 0, 9, (4,))]
    assert load_spec_file(str(tmp_path / "s.toml")) == [InputSpec("seg", None, 0, 2)]
    (tmp_path / "bad.json").write_text('{"inputs": [{"dtype": "int32"}]}')
    with pytest.raises(ParityUsageError, match="needs a 'name'"):
        load_spec_file(str(tmp_path / "bad.json"))


def test_specs_match_inputs_by_name_then_position():
    ids, seg = InputSpec("ids", high=9), InputSpec("segments", high=2)
    assert match_specs(["ids", "segments"], [seg]) == [None, seg]
    assert match_specs(["input_1", "input_2"], [ids, seg]) == [ids, seg]
    with pytest.raises(ParityUsageError, match="no model input named tokens"):
        match_specs(["ids", "segments"], [InputSpec("tokens")])


# -- which Keras runs the original ---------------------------------------------------------


def test_keras2_code_is_recognised_through_sibling_modules(tmp_path):
    (tmp_path / "layers.py").write_text("import tensorflow as tf\n")
    assert keras2_importer("import keras\nfrom layers import X\n", str(tmp_path)) == "layers.py"
    assert keras2_importer("from tensorflow import keras\n", None) == "the model module"
    assert keras2_importer("import tf_keras\n", None) == "the model module"
    assert keras2_importer("import keras\nfrom keras import ops\n", str(tmp_path)) is None


# -- one fresh process per side ------------------------------------------------------------

needs_tf_and_jax = pytest.mark.skipif(
    not {"tensorflow", "jax"} <= set(installed_backends()),
    reason="plans a run on tensorflow and jax",
)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@needs_tf_and_jax
def test_every_side_gets_its_own_process_and_import_root(tmp_path):
    from kmigrate.parity.plan import parse_model_spec  # noqa: PLC0415
    from kmigrate.parity.runner import ParityRun  # noqa: PLC0415

    factory = "from mylayers import X\ndef build_model():\n    return X()\n"
    orig = _write(tmp_path / "orig" / "models.py", "import tensorflow as tf\n" + factory)
    conv = _write(tmp_path / "conv" / "models.py", "import keras\n" + factory)
    run = ParityRun(
        parse_model_spec(str(conv)),
        ParityOptions(backends=["tensorflow", "jax"]),
        reference=parse_model_spec(f"{orig}:build_model"),
        workdir=tmp_path / "work",
    )
    workers = run._group_workers()
    assert [[t.name for t in w.tasks] for w in workers] == [["reference"], ["tensorflow"], ["jax"]]
    reference, *targets = [w.tasks[0].payload for w in workers]
    assert reference["forbidden_roots"] == [str(conv.parent)]
    assert all(t["forbidden_roots"] == [str(orig.parent)] for t in targets)
    assert reference["keras"] == 2 and "Keras 2 code" in run.reference_reason
    assert reference["checks"] == ["call", "predict", "train"]
    assert [t["watch_tensorflow"] for t in targets] == [False, True]


def test_default_backends_leave_out_inference_only_openvino():
    installed = ["tensorflow", "jax", "openvino"]
    assert ParityOptions().resolved_backends(installed) == ["tensorflow", "jax"]
    assert ParityOptions(backends=["openvino"]).resolved_backends(installed) == ["openvino"]


def test_original_tree_puts_every_rewritten_file_back(tmp_path):
    project = tmp_path / "project"
    _write(project / "models.py", "import keras  # rewritten\n")
    _write(project / "mylayers.py", "import keras  # rewritten\n")
    _write(project / "util.py", "X = 1\n")
    _write(project / ".venv" / "lib.py", "junk\n")
    originals = {
        str((project / "models.py").resolve()): "import tensorflow  # original\n",
        str((project / "mylayers.py").resolve()): "import tensorflow  # original layers\n",
    }
    root, count = original_tree(project, originals, tmp_path / "original")
    assert count == 3
    assert (root / "mylayers.py").read_text() == "import tensorflow  # original layers\n"
    assert (root / "util.py").read_text() == "X = 1\n"
    assert not (root / ".venv").exists()


# -- weights: matched by path and creation order, once each --------------------------------


def _group(path: str, names: tuple, shapes: tuple) -> WeightGroup:
    return WeightGroup(path, "Layer", names, shapes)


def test_weights_inside_a_layer_match_by_name_when_the_order_differs():
    # Keras 2 lists trainable weights first; Keras 3 keeps creation order
    keras2 = _group("norm", ("norm/gamma:0", "norm/beta:0", "norm/count:0"), ((4,), (4,), ()))
    keras3 = _group("norm", ("count", "gamma", "beta"), ((), (4,), (4,)))
    assert weight_order(keras2, keras3) == [(0, 1), (1, 2), (2, 0)]
    pairs, how = match_groups([keras2], [keras3])
    assert (pairs, how) == ([(0, 0)], "path")


def test_a_weight_group_matched_twice_is_an_error():
    ref = [_group("a", ("kernel",), ((2, 2),)), _group("a", ("kernel",), ((2, 2),))]
    here = [_group("b", ("kernel",), ((2, 2),)), _group("c", ("kernel",), ((3, 3),))]
    with pytest.raises(WeightMismatchError, match="has shape"):
        match_groups(ref, here)


# -- verdicts ------------------------------------------------------------------------------


def _side(train: dict, arrays: dict, status: str = "ok") -> SimpleNamespace:
    result = {"train": train, "checks": {"train": {"status": status}}}
    return SimpleNamespace(result=result, arrays=arrays)


BASE = {"learning_rate": 0.01, "loss_function": "mse", "groups": ["proj"], "loss": 0.5}


def test_train_passes_when_loss_and_updated_weights_agree():
    weights = {"tw0_0": np.ones((2, 2), np.float32)}
    reference = _side({**BASE, "random_layers": ["drop"]}, weights)
    here = _side({"loss": 0.5, "random_layers": ["drop"]}, dict(weights))
    check = compare_train(here.result, here.arrays, reference, atol=None, rtol=None)
    assert check.status == "pass"
    assert "training=False: drop" in check.detail[-1]


def test_train_fails_on_a_layer_random_only_on_the_reference():
    weights = {"tw0_0": np.ones(2, np.float32)}
    reference = _side({**BASE, "random_layers": ["drop"]}, weights)
    here = _side({"loss": 0.5, "random_layers": []}, dict(weights))
    check = compare_train(here.result, here.arrays, reference, atol=None, rtol=None)
    assert (check.status, check.layer) == ("fail", "'drop'")
    assert "never sees training=True" in check.detail[0]


def test_train_names_the_first_layer_whose_updated_weights_differ():
    reference = _side(BASE, {"tw0_0": np.ones(2, np.float32)})
    here = _side({"loss": 0.5, "random_layers": []}, {"tw0_0": np.full(2, 1.1, np.float32)})
    check = compare_train(here.result, here.arrays, reference, atol=None, rtol=None)
    assert (check.status, check.layer) == ("fail", "'proj'")


def test_train_is_not_compared_when_the_reference_could_not_train():
    reference = _side({}, {}, status="error")
    reference.result["checks"]["train"]["error"] = {"type": "ValueError", "message": "boom"}
    here = _side({"loss": 0.5}, {})
    check = compare_train(here.result, here.arrays, reference, atol=None, rtol=None)
    assert check.status == "skipped" and "ValueError: boom" in check.detail[0]


def test_predict_is_compared_with_the_reference_predict():
    out = {"name": "output", "dtype": "float32", "shape": [2]}
    reference = SimpleNamespace(
        result={"predict": {"outputs": [out]}, "checks": {"predict": {"status": "ok"}}},
        arrays={"pred0": np.zeros(2, np.float32)},
    )
    result = {"predict": {"outputs": [out], "jit_compile": "True"}}
    good = compare_predict(
        result, {"pred0": np.zeros(2, np.float32)}, reference, atol=None, rtol=None
    )
    bad = compare_predict(
        result, {"pred0": np.ones(2, np.float32)}, reference, atol=None, rtol=None
    )
    assert (good.status, bad.status) == ("pass", "fail")


def test_train_fails_when_seeded_randomness_is_not_reproducible():
    weights = {"tw0_0": np.ones(2, np.float32)}
    reference = _side({**BASE, "random_layers": ["noise"]}, weights)
    here = _side(
        {"loss": 0.5, "random_layers": ["noise"], "random_step_losses": [0.51, 0.49]},
        dict(weights),
    )
    check = compare_train(here.result, here.arrays, reference, atol=None, rtol=None)
    assert (check.status, check.layer) == ("fail", "'noise'")
    assert "not reproducible" in check.detail[0]


def test_input_specs_and_checks_reach_run_parity(monkeypatch, tmp_path):
    from click.testing import CliRunner  # noqa: PLC0415

    from kmigrate.parity import cli as parity_cli  # noqa: PLC0415
    from kmigrate.parity import runner as runner_module  # noqa: PLC0415

    seen: dict = {}

    def fake_run_parity_batch(entries, *, options=None, progress=None):
        seen["options"] = options
        raise ParityUsageError("stop here")

    monkeypatch.setattr(runner_module, "run_parity_batch", fake_run_parity_batch)
    _write(tmp_path / "models.py", "def build_model():\n    pass\n")
    (tmp_path / "spec.json").write_text('{"inputs": [{"name": "mask", "dtype": "bool"}]}')
    (tmp_path / "pyproject.toml").write_text(
        '[tool.kmigrate.parity]\nchecks = ["call", "predict"]\ninput = ["ids:int32:0:300"]\n'
    )
    monkeypatch.chdir(tmp_path)
    args = ["models.py", "--input-spec", "spec.json", "--input", "seg:int32:0:2"]
    result = CliRunner().invoke(parity_cli.parity_command, args)
    assert result.exit_code == 2 and "stop here" in result.output
    options = seen["options"]
    assert [s.name for s in options.input_specs] == ["mask", "seg"]  # the command line wins
    assert options.checks == ("call", "predict")
    bad = CliRunner().invoke(parity_cli.parity_command, ["models.py", "--checks", "fit"])
    assert bad.exit_code == 2 and "unknown check(s) fit" in bad.output


def _other_tree_imported(tmp_path, monkeypatch, module: str) -> tuple[Path, Path]:
    """(the other side's folder, with `module` in it and imported; this side's folder)."""
    import importlib  # noqa: PLC0415

    other = _write(tmp_path / "conv" / f"{module}.py", "X = 1\n").parent
    mine = (tmp_path / "orig").resolve()
    mine.mkdir()
    monkeypatch.syspath_prepend(str(other))
    monkeypatch.delitem(sys.modules, module, raising=False)
    importlib.import_module(module)
    return other, mine


def test_a_worker_refuses_modules_of_the_other_tree(tmp_path, monkeypatch):
    from kmigrate.parity import worker as worker_module  # noqa: PLC0415

    other, mine = _other_tree_imported(tmp_path, monkeypatch, "kmigrate_test_sibling")
    task = {
        "role": "reference",
        "backend": "tensorflow",
        "keras": 2,
        "model": {"sys_path": [str(mine)]},
        "forbidden_roots": [str(other)],
    }
    with pytest.raises(worker_module.StageError, match="kmigrate_test_sibling"):
        worker_module.Worker(task).check_isolation()
    task["forbidden_roots"] = []
    worker_module.Worker(task).check_isolation()


def test_a_batched_worker_still_refuses_the_other_tree_on_a_later_model(tmp_path, monkeypatch):
    """The real paths of the loaded modules are remembered from one model to the next (a
    batched worker checks thousands of TensorFlow's modules per model); the verdict is not:
    a module that was fine for one model is refused for the next when it is of its other
    side's tree."""
    from kmigrate.parity import worker as worker_module  # noqa: PLC0415

    other, mine = _other_tree_imported(tmp_path, monkeypatch, "kmigrate_test_later")
    first = {
        "role": "target",
        "backend": "tensorflow",
        "keras": 3,
        "model": {"sys_path": [str(other)]},  # its own tree: fine
        "forbidden_roots": [str(mine)],
    }
    worker_module.Worker(first).check_isolation()
    worker_module.Worker(first).check_isolation()  # remembered paths, same answer
    second = {**first, "model": {"sys_path": [str(mine)]}, "forbidden_roots": [str(other)]}
    with pytest.raises(worker_module.StageError, match="kmigrate_test_later"):
        worker_module.Worker(second).check_isolation()


def test_the_worker_drops_the_working_folder_from_its_import_path(tmp_path, monkeypatch):
    from kmigrate.parity import worker as worker_module  # noqa: PLC0415

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), "/somewhere"])
    worker_module.drop_working_folder_from_path()
    assert sys.path == ["/somewhere"]
