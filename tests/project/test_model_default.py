"""Model code unless proven otherwise (issue 30, the default and its consequences).

The fixture repository ``model_default`` holds the shapes kmigrate used to take for
TensorFlow code: activations reached by name (a registry dict, custom objects) and a
helper object applied to ``keras.Input`` tensors while a functional model is built, a
layer calling ``tf.image`` beside model ops, ``tf.TensorShape`` in ``build``, annotations
that read ``tf`` after every call is rewritten, and a helper used by a layer and by a
``tf.data`` map (undecided). Its golden findings and diff are checked with the other
fixture repositories (tests/project/test_project_index.py); these tests pin what each shape must
show, and that ``apply`` introduces no undefined name on any fixture repository.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kmigrate.engine.model import Context
from kmigrate.report.summary import is_manual
from tests.repo_fixtures import REPOS, SOURCE_TREES, apply_repo, copy_repo, run_repo


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    root = copy_repo("model_default", tmp_path_factory.mktemp("scan"))
    by_file: dict[str, list] = {}
    for finding in run_repo(root).findings:
        by_file.setdefault(finding.path.rsplit("/", 1)[-1], []).append(finding)
    return by_file


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_repo("model_default", tmp_path_factory.mktemp("apply"))
    assert apply_repo(root) > 0
    return root / "netlib"


def test_functions_reached_by_name_are_model_code(scanned, applied) -> None:
    """`gelu` (custom object `approx_gelu`) and `bounded_relu` (a registry value) run on
    keras.Input tensors: `K.*` there becomes keras.ops, never `tf.*` ("A KerasTensor
    cannot be used as input to a TensorFlow function")."""
    ops = [f for f in scanned["activations.py"] if f.rule == "KM201"]
    assert [f.symbol for f in ops] == ["K.tanh", "K.pow", "K.minimum", "K.maximum"]
    assert all(f.context is Context.MODEL and f.fixable for f in ops)
    text = (applied / "activations.py").read_text()
    assert "ops.minimum(ops.maximum(x, 0.0), 6.0)" in text and "ops.power(x, 3)" in text
    assert "tensorflow" not in text and "tf." not in text


def test_a_helper_object_of_model_code_is_model_code(scanned, applied) -> None:
    assert {(f.symbol, f.context, f.fixable) for f in scanned["helpers.py"] if f.symbol} == {
        ("K.clip", Context.MODEL, True),
        ("K.sum", Context.MODEL, True),
        ("K.square", Context.MODEL, True),
    }
    text = (applied / "helpers.py").read_text()
    assert "ops.clip(x, -self.ceiling, self.ceiling)" in text and "tensorflow" not in text


def test_a_helper_of_a_layer_and_a_data_map_is_undecided(scanned, applied) -> None:
    found = scanned["shared.py"]
    assert [(f.symbol, f.context) for f in found] == [
        ("tf.reduce_max", Context.UNDECIDED),
        ("tf.abs", Context.UNDECIDED),
    ]
    for finding in found:
        assert is_manual(finding) and "keras.ops." in finding.message
        assert "undecided, not rewritten: `rescale` is called from model code" in finding.message
        assert "TensorFlow runs it as it is" not in finding.message
    assert (applied / "shared.py").read_text() == (
        REPOS / "model_default" / "netlib" / "shared.py"
    ).read_text()


def test_backend_calls_in_a_data_map_keep_tensorflow_and_say_why(scanned, applied) -> None:
    (cast,) = [f for f in scanned["data.py"] if f.rule == "KM108"]
    assert cast.context is Context.DATA and cast.fixable
    assert "runs in a tf.data pipeline, where keras.ops fails on JAX" in cast.message
    assert "tf.cast(x, " in (applied / "data.py").read_text()


def test_image_calls_in_a_layer_are_decided_per_call(scanned, applied) -> None:
    """`tf.image.resize` no longer makes the layer's `call` data code: it and the
    `tf.reduce_mean` beside it get their model-code findings and fixes."""
    found = {f.symbol: f for f in scanned["image.py"] if f.rule == "KM201"}
    assert set(found) == {"tf.image.resize", "tf.reduce_mean"}
    assert all(f.context is Context.MODEL and f.fixable for f in found.values())
    text = (applied / "image.py").read_text()
    assert "keras.ops.image.resize(" in text and "keras.ops.mean(small" in text


def test_annotations_keep_the_import_they_read(applied) -> None:
    """Every `tf.*` call of image.py is rewritten; `-> tf.Tensor` (evaluated at import),
    `Optional["tf.Tensor"]` and the class-level `"tf.TensorShape"` still read `tf`."""
    text = (applied / "image.py").read_text()
    assert "import tensorflow as tf\n" in text
    assert "-> tf.Tensor:" in text and 'Optional["tf.Tensor"]' in text


def test_tensor_shape_in_model_code_becomes_a_tuple(scanned, applied) -> None:
    (shape,) = [f for f in scanned["layers.py"] if f.symbol == "tf.TensorShape"]
    assert shape.rule == "KM510" and shape.context is Context.MODEL and shape.fixable
    assert "width = tuple(input_shape)[-1]" in (applied / "layers.py").read_text()


def test_no_finding_says_tensorflow_runs_it_as_it_is(scanned) -> None:
    messages = [f.message for found in scanned.values() for f in found]
    assert not [m for m in messages if "TensorFlow runs it as it is" in m]
    assert not [f for found in scanned.values() for f in found if f.context is Context.OTHER]


def test_apply_never_adds_a_tensorflow_import(applied) -> None:
    for path in sorted(applied.glob("*.py")):
        before = (REPOS / "model_default" / "netlib" / path.name).read_text()
        if "import tensorflow" not in before:
            assert "tensorflow" not in path.read_text().replace("from tensorflow.", ""), path


def _undefined_names(root: Path) -> Counter[tuple[str, str]]:
    """ruff's F821 (undefined name) in ``root``: (file, name) -> how often."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            "F821",
            "--output-format",
            "concise",
            "--exit-zero",
            ".",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"ruff (a dev dependency) did not run: {done.stderr[-500:]}"
    found: Counter[tuple[str, str]] = Counter()
    for line in done.stdout.splitlines():
        if " F821 " in line:
            path, _, rest = line.partition(":")
            found[(path, rest.rsplit("`", 2)[-2] if "`" in rest else rest)] += 1
    return found


@pytest.mark.parametrize(
    "source",
    SOURCE_TREES,
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_apply_introduces_no_undefined_name(source: Path, tmp_path: Path) -> None:
    """ruff F821 before and after apply on every fixture repository and sample: 0 new."""
    root = copy_repo(source, tmp_path)
    before = _undefined_names(root)
    apply_repo(root)
    assert _undefined_names(root) - before == Counter()
