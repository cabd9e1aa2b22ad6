"""Verdicts that stay true at repository scale: what the headline number measures, effort
counted for manual work only, and "TensorFlow-free after apply" as the post-apply scan
finds it, on every sample and fixture repository."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from kmigrate.report import build, render_data
from kmigrate.report.summary import SCORE_LABEL
from tests.repo_fixtures import SOURCE_TREES, apply_repo, run_repo


def _report(root: Path):
    return build(run_repo(root), root=root)


def test_effort_is_manual_work_only_and_top_files_have_some(tmp_path: Path) -> None:
    (tmp_path / "data.py").write_text(
        "import tensorflow as tf\n\n\ndef total(x):\n    return tf.reduce_sum(x)\n"
    )
    data = _report(tmp_path)
    notes = [f for f in data.findings if f.severity.value == "info"]
    assert notes, "the fixture must give a note (tf in a data pipeline)"
    assert data.total.manual == 0
    assert data.total.effort_minutes == 0
    assert all(r.effort_minutes == 0 for r in data.rules)
    assert data.top_files == []


def test_an_undecodable_file_importing_tensorflow_is_never_predicted_free(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_bytes(b"import tensorflow as tf\n# caf\xe9\nx = tf.abs(1)\n")
    (tmp_path / "good.py").write_text("import tensorflow as tf\nx = tf.keras.layers.Dense(3)\n")
    data = _report(tmp_path)
    report = json.loads(render_data(data, "json"))
    by_path = {f["path"]: f for f in report["files"]}
    assert by_path["bad.py"]["tensorflow_free_after_apply"] is None
    after = report["summary"]["tensorflow_after_apply"]
    assert after["files_free"] == 1 and after["files_unknown"] == 1
    html = render_data(data, "html")
    assert f"{after['files_free']} of {data.files_with_tensorflow}" in html  # as the JSON says


def test_the_headline_says_what_it_measures_beside_the_files_needing_tensorflow(
    tmp_path: Path,
) -> None:
    (tmp_path / "m.py").write_text(
        "import tensorflow as tf\n\n\ndef f(x):\n    return tf.py_function(abs, [x], tf.float32)\n"
    )
    data = _report(tmp_path)
    for fmt in ("table", "markdown", "html"):
        text = " ".join(
            re.sub("[\u2502\u256d\u256e\u2570\u256f\u2500]", " ", render_data(data, fmt)).split()
        )
        assert SCORE_LABEL in text, fmt
        assert "still needing TensorFlow after apply" in text or "Still need TF" in text, fmt
        assert "Portability now" not in text and "**Portability:" not in text, fmt


def _tensorflow_free(root: Path) -> dict[str, bool | None]:
    data = _report(root)
    return {f.path: f.tensorflow_free_after_apply for f in data.files if f.uses_tensorflow}


@pytest.mark.parametrize("source", SOURCE_TREES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_tensorflow_free_prediction_is_what_the_post_apply_scan_finds(
    source: Path, tmp_path: Path
) -> None:
    """scan -> prediction; apply on a copy; scan again: a file predicted free imports no
    TensorFlow any more, and a file predicted to need it still does."""
    root = tmp_path / source.name
    shutil.copytree(source, root)
    predicted = _tensorflow_free(root)
    apply_repo(root)
    after = _report(root)
    actual = {f.path: not f.tf_leftovers for f in after.files if f.tf_leftovers is not None}
    wrong = {
        path: (free, actual.get(path, True))
        for path, free in predicted.items()
        if free is not None and actual.get(path, True) != free
    }
    assert wrong == {}, f"predicted vs found after apply: {wrong}"


def test_an_unused_import_left_is_named_as_written() -> None:
    from kmigrate.report.footprint import tensorflow_uses_of_text

    uses = tensorflow_uses_of_text(
        "import tensorflow as tf\nfrom tensorflow import keras\nimport tensorflow.compat.v1 as v1\n"
    )
    assert [use[2] for use in uses] == [
        "import tensorflow as tf",
        "from tensorflow import keras",
        "from tensorflow.compat import v1",  # the same binding
    ]


def test_notebook_findings_point_at_the_stored_file_and_name_the_cell(tmp_path: Path) -> None:
    """An annotation on line 3 of a cell must land on the .ipynb line holding it (not on
    line 3 of the JSON), and say which cell: SARIF, GitHub, GitLab, Markdown."""
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n"]},
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": [
                "import tensorflow as tf\n",
                "\n",
                "x = tf.keras.layers.Dense(3)\n",
                "y = tf.py_function(abs, [x], tf.float32)\n",
            ],
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": [
                "class L(tf.keras.layers.Layer):\n",
                "    def call(self, x):\n",
                "        return tf.py_function(abs, [x], tf.float32)\n",
            ],
        },
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    stored = (tmp_path / "nb.ipynb").read_text().splitlines()
    dense = 1 + next(i for i, line in enumerate(stored) if "Dense(3)" in line)
    data = _report(tmp_path)
    sarif = json.loads(render_data(data, "sarif"))
    km101 = next(r for r in sarif["runs"][0]["results"] if "Dense" in r["message"]["text"])
    assert km101["locations"][0]["physicalLocation"]["region"]["startLine"] == dense
    assert km101["message"]["text"].startswith("cell 2, line 3: ")
    github = render_data(data, "github")
    assert f"file=nb.ipynb,line={dense}," in github and "::cell 2, line 3: " in github
    issue = next(i for i in json.loads(render_data(data, "gitlab")) if "Dense" in i["description"])
    assert issue["location"]["lines"]["begin"] == dense
    assert "cell 2, line 3: " in issue["description"]
    markdown = render_data(data, "markdown")
    assert "`nb.ipynb:cell 3:3:" in markdown  # the manual finding, addressed by cell


def test_a_dropped_argument_takes_its_tensorflow_names_along(tmp_path: Path) -> None:
    """apply leaves out `synchronization=tf.VariableSynchronization.AUTO` (Keras 3 has no
    such argument): the file is predicted TensorFlow-free, as the post-apply scan finds."""
    (tmp_path / "tlu.py").write_text(
        "import tensorflow as tf\n\n\nclass TLU(tf.keras.layers.Layer):\n"
        "    def build(self, input_shape):\n"
        "        self.tau = self.add_weight(\n"
        '            shape=(1,), name="tau", initializer="zeros",\n'
        "            synchronization=tf.VariableSynchronization.AUTO,\n"
        "        )\n"
    )
    assert _tensorflow_free(tmp_path) == {"tlu.py": True}
    apply_repo(tmp_path)
    assert "VariableSynchronization" not in (tmp_path / "tlu.py").read_text()
    assert _tensorflow_free(tmp_path) == {"tlu.py": True}
