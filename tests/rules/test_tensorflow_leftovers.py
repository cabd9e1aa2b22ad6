""" "Does my code still need TensorFlow?": the report's per-file leftovers after `apply`."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from kmigrate.api import apply_to_text
from kmigrate.engine.run_data import Job, RunResult
from kmigrate.report import build, render_data
from kmigrate.report.footprint import leftovers, tensorflow_uses
from kmigrate.run.runner import run_job, select_ids

SCHEMA = Path(__file__).resolve().parents[2] / "migrate" / "report" / "schema.json"

CONVERTIBLE = """
import tensorflow as tf
from tensorflow.keras import layers


class Scale(layers.Layer):
    def call(self, x):
        return tf.reduce_mean(x, axis=-1)
"""

LEFTOVERS = """
import tensorflow as tf
from tensorflow.keras import backend as K


def shapes(x):
    ds = tf.data.Dataset.from_tensor_slices(x)
    return K.mean(x), ds
"""

STANDALONE = """
from keras.layers import Dense
"""


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _run(tmp_path: Path, files: dict[str, str]) -> RunResult:
    rule_ids = tuple(select_ids((), ()))
    reports = []
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(_code(text))
        job = Job(path=str(path), display=name, package="", ignored_codes=(), fix=False)
        reports.append(run_job(job, rule_ids))
    return RunResult(reports, rule_ids)


def _uses(text: str):
    text = _code(text)
    return tensorflow_uses(ast.parse(text), text)


def test_uses_are_the_dotted_names_read_through_tensorflow_imports():
    names = [use[2] for use in _uses(LEFTOVERS)]
    assert names == ["tf.data.Dataset.from_tensor_slices", "K.mean"]


def test_an_import_nothing_reads_is_a_use():
    assert [u[2] for u in _uses("import tensorflow\nimport keras\n")] == ["import tensorflow"]


def test_standalone_keras_is_not_tensorflow():
    assert _uses(STANDALONE) == []


def test_a_use_is_gone_when_a_fix_starts_there_or_at_its_import():
    uses = _uses(LEFTOVERS)
    assert leftovers(uses, set()) == ["K.mean", "tf.data.Dataset.from_tensor_slices"]
    assert leftovers(uses, {(6, 9)}) == ["K.mean"]  # tf.data... rewritten
    assert leftovers(uses, {(2, 0)}) == ["tf.data.Dataset.from_tensor_slices"]  # import fixed


def test_report_per_file_and_summary(tmp_path):
    result = _run(
        tmp_path, {"convertible.py": CONVERTIBLE, "left.py": LEFTOVERS, "plain.py": STANDALONE}
    )
    data = json.loads(render_data(build(result, root=tmp_path), "json"))
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(data)
    files = {f["path"]: f for f in data["files"]}
    assert files["convertible.py"]["tensorflow_free_after_apply"] is True
    assert files["convertible.py"]["tensorflow_leftovers"] == []
    assert files["plain.py"]["tensorflow_free_after_apply"] is True
    assert files["left.py"]["tensorflow_free_after_apply"] is False
    assert files["left.py"]["tensorflow_leftovers"] == [
        "K.mean",
        "tf.data.Dataset.from_tensor_slices",
    ]
    summary = data["summary"]["tensorflow_after_apply"]
    assert summary == {
        "files_free": 2,
        "files_needing_tensorflow": 1,
        "files_unknown": 0,
        "leftovers": {"K.mean": 1, "tf.data.Dataset.from_tensor_slices": 1},
    }


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_every_format_says_it(tmp_path, fmt):
    result = _run(tmp_path, {"convertible.py": CONVERTIBLE, "left.py": LEFTOVERS})
    out = render_data(
        build(result, root=tmp_path), fmt, **({"width": 200} if fmt == "table" else {})
    )
    assert "TensorFlow-free after" in out
    assert "K.mean" in out


def test_the_report_agrees_with_apply():
    """What the report promises, checked on the rewritten text itself."""
    for text, free in ((CONVERTIBLE, True), (LEFTOVERS, False)):
        after = apply_to_text(_code(text))
        assert ("tensorflow" not in after) is free, after
