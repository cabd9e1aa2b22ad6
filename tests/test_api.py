"""The public Python API (kmigrate.api) gives what the command line gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate import api
from kmigrate.cli.main import main

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

LAYER = """\
import tensorflow as tf


class Scale(tf.keras.layers.Layer):
    def call(self, x):
        return tf.reduce_mean(x, axis=-1)
"""


def test_scan_is_the_json_report_of_the_command(tmp_path: Path) -> None:
    tree = tmp_path / "samples"
    shutil.copytree(SAMPLES, tree)
    from_api = api.scan([tree])
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        main, ["scan", str(tree), "-q", "--no-cache", "-f", "json", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    from_cli = json.loads(out.read_text(encoding="utf-8"))
    assert from_api["findings"] == from_cli["findings"]
    assert from_api["summary"] == from_cli["summary"]
    assert len(from_api["findings"]) > 10


def test_apply_without_write_leaves_files_and_with_write_matches_apply_to_text(
    tmp_path: Path,
) -> None:
    module = tmp_path / "layer.py"
    module.write_text(LAYER, encoding="utf-8")
    (change,) = api.apply([tmp_path])
    assert (change.path, change.written) == ("layer.py", False)
    assert module.read_text(encoding="utf-8") == LAYER
    assert "ops.mean(x, axis=-1)" in change.new_text
    assert change.new_text == api.apply_to_text(LAYER)
    (written,) = api.apply([tmp_path], write=True)
    assert written.written and module.read_text(encoding="utf-8") == change.new_text
    assert api.apply([tmp_path]) == []  # idempotent


def test_scan_text_pins_rule_and_position() -> None:
    (finding,) = [f for f in api.scan_text(LAYER) if f["symbol"] == "tf.reduce_mean"]
    assert (finding["rule"], finding["line"], finding["column"]) == (
        "KM201",
        6,
        16,
    )  # 1-based columns, as in the report
    assert finding["fixable"] is True


def test_a_bad_rule_code_is_a_settings_error(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(LAYER, encoding="utf-8")
    with pytest.raises(api.SettingsError, match="KM999"):
        api.scan([tmp_path], select=["KM999"])


def test_files_of_sibling_folders_keep_their_project_facts(tmp_path: Path) -> None:
    """Without a pyproject.toml the root is the folder holding every path given: a file
    outside the first path's folder keeps what the project index knows (here that
    ``pkg.backend.K`` is the Keras backend), as when it is scanned alone."""
    pkg = tmp_path / "proj_a" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "backend.py").write_text("from tensorflow.keras import backend as K\n")
    (pkg / "layers.py").write_text(
        "from tensorflow import keras\n\nfrom pkg.backend import K\n\n\n"
        "class Mean(keras.layers.Layer):\n    def call(self, x):\n        return K.mean(x)\n"
    )
    other = tmp_path / "proj_b"
    other.mkdir()
    (other / "script.py").write_text("import tensorflow as tf\n\nx = tf.constant(1)\n")

    def means(*paths: Path) -> list[str]:
        report = api.scan(list(paths))
        return [f["rule"] for f in report["findings"] if f.get("symbol") == "K.mean"]

    alone = means(pkg / "layers.py")
    assert alone == ["KM201"]
    assert means(other / "script.py", pkg / "layers.py") == alone
