"""The worked examples of docs/architecture.md stay true: each is run as written."""

from __future__ import annotations

import csv
import importlib.util
import io
import re
import sys
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _python_block_after(heading: str) -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_report_format_example_is_one_module_plus_its_registration(
    tmp_path: Path, monkeypatch
) -> None:
    from kmigrate import report
    from kmigrate.cli.main import main

    module_file = tmp_path / "kmigrate_doc_csv.py"
    module_file.write_text(_python_block_after("## Adding a report format"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("kmigrate_doc_csv", module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "kmigrate_doc_csv", module)
    monkeypatch.setitem(report.FORMATS, "csv", "kmigrate_doc_csv:render")

    result = CliRunner().invoke(
        main, ["scan", str(ROOT / "samples"), "-q", "--no-cache", "--format", "csv"]
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.output)))
    assert rows[0] == ["path", "line", "column", "rule", "severity", "fixable", "message"]
    assert len(rows) > 10 and {row[3][:2] for row in rows[1:]} == {"KM"}
