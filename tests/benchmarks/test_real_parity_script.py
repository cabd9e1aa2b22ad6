"""benchmarks/real_parity.py reads parity's verdicts: a FAIL whose original never ran is
not a conversion failure, and a run without a verdict is not a PASS."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("real_parity", ROOT / "benchmarks/real_parity.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_verdicts_are_told_apart() -> None:
    classify = _script().classify
    table = "│ jax │ 3.15.1 │ 0 │ PASS │\n"
    passed = table + "PASS: the outputs agree with the reference on tensorflow, jax, torch\n"
    failed = table + "FAIL: 2 of 3 checks failed: jax, torch\n"
    no_reference = "FAIL: the reference did not run, so nothing was compared\n"
    assert classify(passed)[0] == "PASS"
    assert classify(failed) == ("FAIL", "FAIL: 2 of 3 checks failed: jax, torch")
    assert classify(no_reference)[0] == "NO-REFERENCE"
    skipped = "NOT COMPARED: no check failed, but checks were skipped on jax (see above)\n"
    assert classify(skipped)[0] == "NOT-COMPARED"
    assert classify("Traceback ...\nImportError: no module\n") == (
        "ERROR",
        "ImportError: no module",
    )
    assert classify("")[0] == "ERROR"


def test_factories_are_the_build_functions_without_parameters(tmp_path: Path) -> None:
    module = tmp_path / "rp_models.py"
    module.write_text(
        "def build_a():\n    pass\n\ndef helper():\n    pass\n\n"
        "def build_b( ):\n    pass\n\ndef build_c(size):\n    pass\n"
    )
    assert _script().factories(module) == ["build_a", "build_b"]


_LAYERS = """\
from keras import ops


class Base(keras.layers.Layer):
    def helper(self, x):
        return ops.sum(x)


class Attention(Base):
    def call(self, x):
        return self.helper(x)


def free_function(x):
    return x
"""


def _report(run: dict) -> dict:
    reference = {"backend": "tensorflow", "role": "reference", "status": "reference"}
    return {"reference": reference, "runs": [run]}


def _scan_finding(path: str, line: int, severity="warning", fixable=False) -> dict:
    return {"rule": "KM999", "severity": severity, "fixable": fixable, "path": path, "line": line}


def test_a_fail_is_told_with_or_without_a_finding_in_the_failing_layer(tmp_path: Path) -> None:
    script = _script()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "layers.py").write_text(_LAYERS)
    (tmp_path / "rp_models.py").write_text("class Attention:\n    pass\n")
    diverged = _report(
        {
            "backend": "jax",
            "role": "target",
            "status": "fail",
            "checks": [{"check": "call", "status": "fail", "layer": None, "detail": []}],
            "first_divergent_layer": {"layer": "att", "class": "Attention"},
        }
    )
    places = script.failing_places(diverged, tmp_path)
    # the class parity names and its project base class; never the survey's factory module
    assert [(p.path, p.name) for p in places] == [
        ("pkg/layers.py", "Base"),
        ("pkg/layers.py", "Attention"),
    ]
    inside_base = _scan_finding("pkg/layers.py", 6)
    assert script.explain_fail(diverged, tmp_path, [inside_base])[0] == "FAIL-FINDING"
    # a fixable warning, or a finding elsewhere is kmigrate being silent there
    elsewhere = [
        _scan_finding("pkg/layers.py", 6, fixable=True),
        _scan_finding("pkg/layers.py", 15, severity="error"),
        _scan_finding("rp_models.py", 1, severity="error"),
    ]
    kind, why = script.explain_fail(diverged, tmp_path, elsewhere)
    assert kind == "FAIL-SILENT"
    assert why.startswith("jax call: fail layer 'att' (Attention)")
    assert "kmigrate silent" in why
    # an info note in the failing layer: a Keras 3 difference kmigrate told of
    note = _scan_finding("pkg/layers.py", 10, severity="info")
    kind, why = script.explain_fail(diverged, tmp_path, [*elsewhere, note])
    assert kind == "FAIL-NOTED" and "KM999 pkg/layers.py:10" in why, why


def test_a_traceback_points_at_the_enclosing_class_or_function(tmp_path: Path) -> None:
    script = _script()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "layers.py").write_text(_LAYERS)
    layers = tmp_path / "pkg" / "layers.py"
    traceback = (
        f'  File "{tmp_path / "rp_models.py"}", line 3, in build\n'
        f'  File "/usr/lib/python3/site-packages/keras/layer.py", line 9, in __call__\n'
        f'  File "{layers}", line 15, in free_function\n'
    )
    crashed = _report(
        {
            "backend": "torch",
            "role": "target",
            "status": "error",
            "checks": [
                {
                    "check": "call",
                    "status": "error",
                    "layer": None,
                    "error": {
                        "stage": "build",
                        "type": "TypeError",
                        "message": "bad\nmore",
                        "traceback": traceback,
                    },
                }
            ],
        }
    )
    places = script.failing_places(crashed, tmp_path)
    assert [(p.path, p.name, p.start) for p in places] == [("pkg/layers.py", "free_function", 14)]
    kind, why = script.explain_fail(
        crashed, tmp_path, [_scan_finding("pkg/layers.py", 15, "error", True)]
    )
    assert kind == "FAIL-FINDING"
    assert why.startswith("torch call: error (build) TypeError: bad")
    assert "KM999 pkg/layers.py:15" in why
    # a failure naming only a Keras layer and code outside the project: not located
    keras_only = _report(
        {
            "backend": "torch",
            "role": "target",
            "status": "fail",
            "checks": [{"check": "predict", "status": "fail", "layer": "'dense' (Dense)"}],
        }
    )
    assert script.explain_fail(keras_only, tmp_path, [])[0] == "FAIL-UNLOCATED"
    # a note at a use of the failing Keras class (KM534 at a BatchNormalization call)
    note = {**_scan_finding("pkg/layers.py", 3, severity="info"), "symbol": "keras.layers.Dense"}
    other = {**note, "symbol": "keras.layers.Conv2D"}
    assert script.explain_fail(keras_only, tmp_path, [other])[0] == "FAIL-UNLOCATED"
    assert script.explain_fail(keras_only, tmp_path, [other, note])[0] == "FAIL-NOTED"
    # a layer named by Keras (its class in snake case) names its class too
    auto = _report(
        {
            "backend": "jax",
            "role": "target",
            "status": "fail",
            "checks": [{"check": "train", "status": "fail", "layer": "'batch_normalization_2'"}],
        }
    )
    batch_norm = {**note, "symbol": "keras.layers.BatchNormalization"}
    assert script.explain_fail(auto, tmp_path, [note])[0] == "FAIL-UNLOCATED"
    assert script.explain_fail(auto, tmp_path, [note, batch_norm])[0] == "FAIL-NOTED"


def test_repos_table_rows(tmp_path: Path) -> None:
    table = tmp_path / "REPOS.tsv"
    table.write_text(
        "dir\trepo\tcommit\tdeps\tbatch\n# a comment\nx\to/x\tabc\ny\to/y\tdef\tsix\tno\n"
    )
    rows = _script().read_repos(table)
    assert rows == [
        {"dir": "x", "repo": "o/x", "commit": "abc", "deps": "", "batch": ""},
        {"dir": "y", "repo": "o/y", "commit": "def", "deps": "six", "batch": "no"},
    ]


def test_every_committed_factory_module_has_a_row_and_factories() -> None:
    folder = ROOT / "benchmarks" / "real_models"
    script = _script()
    rows = script.read_repos(folder / "REPOS.tsv")
    assert sorted(r["dir"] + ".py" for r in rows) == sorted(p.name for p in folder.glob("*.py"))
    assert all(len(r["commit"]) == 40 for r in rows)
    assert sum(len(script.factories(folder / (r["dir"] + ".py"))) for r in rows) >= 30


def test_a_layer_named_only_by_its_path_is_found_through_the_factory(tmp_path: Path) -> None:
    script = _script()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "layers.py").write_text(_LAYERS)
    (tmp_path / "rp_models.py").write_text(
        "def build_x():\n"
        "    x = layers.Attention(keras.layers.Dense(2), name='wrap')(inputs)\n"
        "    return Model(inputs, keras.layers.Dense(3, name='head')(x))\n"
    )
    assert script.factory_layers(tmp_path / "rp_models.py") == {
        "wrap": "Attention",
        "head": "Dense",
    }
    trained = _report(
        {
            "backend": "jax",
            "role": "target",
            "status": "fail",
            "checks": [{"check": "train", "status": "fail", "layer": "'wrap/dense'"}],
        }
    )
    finding = _scan_finding("pkg/layers.py", 11, severity="error")
    assert script.explain_fail(trained, tmp_path, [finding])[0] == "FAIL-FINDING"
