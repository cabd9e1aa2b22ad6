"""Reports streamed into their file (JSON, SARIF) are the text the formats render whole,
byte for byte, and a report that fails half-way leaves no partial file behind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate.cli.main import main
from kmigrate.cli.options import OutputError, write_output
from kmigrate.engine.run_data import FileReport, RunResult
from kmigrate.report import build, render_data, write_data
from kmigrate.report.indented_json import dump, dumps, join_items, join_items_lazily
from kmigrate.run.runner import scan_text

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
LAYER = """\
import tensorflow as tf
from tensorflow import keras

class Scale(keras.layers.Layer):
    def call(self, x):
        return tf.reduce_mean(x) * tf.nn.relu(x)  # {}
"""


def _report(path: str, note: str) -> FileReport:
    """A file's report as ``scan`` makes it, without the findings' JSON text (no digest:
    the JSON report then writes every finding itself)."""
    findings = scan_text(LAYER.format(note), path=path)
    assert findings
    return FileReport(path, findings, uses_tensorflow=True, tf_statements=4, tf_leftovers=[])


@pytest.mark.parametrize("fmt", ["json", "sarif", "table"])
def test_streamed_text_is_the_rendered_text(fmt: str) -> None:
    files = [_report(f"pkg/m{i}.py", "é ü \u2028") for i in range(3)] + [FileReport("empty.py")]
    data = build(RunResult(files, ("KM102",)))
    pieces: list[str] = []
    write_data(data, fmt, pieces.append, color=False)
    assert "".join(pieces) == render_data(data, fmt, color=False)
    if fmt != "table":
        assert len(pieces) > 3  # really in pieces


def test_lazily_joined_items_are_the_joined_items() -> None:
    for parts in ([], ["", ""], ['"a"', "", '"b"']):
        whole, lazy = [], []
        dump({"x": join_items(parts, 1)}, whole.append)
        dump({"x": join_items_lazily(iter(parts), 1)}, lazy.append)
        assert "".join(whole) == "".join(lazy) == dumps({"x": join_items(parts, 1)})


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_scan_output_file_is_what_scan_prints(tmp_path: Path, fmt: str) -> None:
    tree = tmp_path / "samples"
    shutil.copytree(SAMPLES, tree)
    out = tmp_path / f"report.{fmt}"
    runner = CliRunner()
    args = ["scan", str(tree), "-q", "--no-cache", "--jobs", "1", "-f", fmt]
    printed = runner.invoke(main, args)
    written = runner.invoke(main, [*args, "-o", str(out)])
    assert printed.exit_code == written.exit_code == 0, printed.output
    assert out.read_text(encoding="utf-8") == printed.stdout
    assert printed.stdout.count("KM") > 10


def _failing_report(after: int):
    def produce(write) -> None:
        for number in range(after):
            write(f"piece {number}\n")
        raise RuntimeError("the report failed half-way")

    return produce


def test_a_report_failing_half_way_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    with pytest.raises(RuntimeError):
        write_output(str(target), _failing_report(1000))
    assert list(tmp_path.iterdir()) == []  # neither the report nor a temporary file


def test_a_report_failing_half_way_keeps_the_old_one(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old report\n")
    with pytest.raises(RuntimeError):
        write_output(str(target), _failing_report(1000))
    assert target.read_text() == "old report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_streamed_report_that_cannot_be_written_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "report.json"
    with pytest.raises(OutputError, match="nothing was written"):
        write_output(str(missing), lambda write: write("text"))
