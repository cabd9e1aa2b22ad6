"""The HTML report's one script: allowed by its hash and nothing else, shipped as a file of
the package, and fed by data-* attributes the page carries (what it does in a browser:
tests/report/test_report_html_browser.py)."""

from __future__ import annotations

import base64
import hashlib
import re
import sys
from fnmatch import fnmatch
from html.parser import HTMLParser
from pathlib import Path

from kmigrate.engine.model import Context, Finding, Severity, Span
from kmigrate.engine.run_data import FileReport, RunResult
from kmigrate.report import render

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "migrate" / "report" / "html_assets" / "table_controls.js"
EVIL = '<script>alert(1)</script><img src=x onerror="alert(2)">'
NAME = 'app/models/<img src=x onerror="alert(3)">.py'  # a file name holds no slash


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_endtag(self, tag):
        self._script = None

    def handle_data(self, data):
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def with_attribute(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for _, attrs in self.elements if name in attrs]


def _finding(path: str, line: int, rule: str, severity: Severity, context: Context) -> Finding:
    return Finding(
        rule=rule,
        severity=severity,
        message=f"{rule} here {EVIL}",
        path=path,
        span=Span(line, 0, line, 4),
        context=context,
        symbol="tf.x",
        fingerprint=f"{abs(hash((path, line))):016x}",
    )


def _page() -> tuple[str, _Page]:
    reports = [
        FileReport(
            path=NAME,
            findings=[
                _finding(NAME, 3, "KM301", Severity.ERROR, Context.MODEL),
                _finding(NAME, 9, "KM102", Severity.INFO, Context.DATA),
            ],
            uses_tensorflow=True,
        ),
        FileReport(
            path="train.py",
            findings=[_finding("train.py", 1, "KM601", Severity.WARNING, Context.TRAINING_LOOP)],
            uses_tensorflow=True,
        ),
    ]
    page = render(RunResult(reports), "html")
    parsed = _Page()
    parsed.feed(page)
    parsed.close()
    return page, parsed


def _policy(parsed: _Page) -> dict[str, list[str]]:
    (meta,) = [
        attrs
        for tag, attrs in parsed.elements
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    directives = [part.split() for part in (meta["content"] or "").split(";") if part.strip()]
    return {name: values for name, *values in directives}


def test_the_one_script_is_allowed_by_its_hash_and_nothing_else() -> None:
    page, parsed = _page()
    assert len(parsed.scripts) == 1 and page.count("<script") == 1
    attrs, text = parsed.scripts[0]
    assert attrs == {}  # inline: no src, nothing remote
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
    policy = _policy(parsed)
    assert policy["script-src"] == [f"'sha256-{digest}'"]
    assert policy["default-src"] == ["'none'"]  # every other resource stays forbidden
    assert "'unsafe-inline'" not in policy["script-src"] and "unsafe-eval" not in page
    assert not [name for _, attrs in parsed.elements for name in attrs if name.startswith("on")]
    assert "&lt;script&gt;alert(1)" in page  # the hostile text is still text


def test_the_script_is_the_file_shipped_in_the_package() -> None:
    _, parsed = _page()
    assert parsed.scripts[0][1] == SCRIPT.read_text(encoding="utf-8")
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = table["tool"]["setuptools"]["package-data"]["kmigrate.report"]
    assert any(fnmatch("html_assets/table_controls.js", glob) for glob in globs)


def test_the_script_builds_no_markup_and_reads_no_layout() -> None:
    """Text and attributes only (nothing parsed as HTML), and no property that makes the
    browser lay out the page per row (a 1,000-file report stays quick)."""
    text = SCRIPT.read_text(encoding="utf-8")
    forbidden = (
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function"
        r"|offset(Width|Height|Top|Left)|client(Width|Height)|getBoundingClientRect"
        r"|getComputedStyle|scroll(Width|Height|Top)"
    )
    assert re.findall(forbidden, text) == []


def test_rows_carry_what_the_filters_and_the_sort_read() -> None:
    page, parsed = _page()
    rows = [a for tag, a in parsed.elements if tag == "tr" and "data-rule" in a]
    assert {
        (a["data-rule"], a["data-severity"], a["data-fix"], a["data-context"]) for a in rows
    } == {
        ("KM301", "error", "manual", "model"),
        ("KM102", "info", "note", "data"),
        ("KM601", "warning", "manual", "training-loop"),
    }
    sections = [a for tag, a in parsed.elements if tag == "details"]
    assert [(a["data-folder"], a["data-path"]) for a in sections] == [
        ("app/models", NAME),
        (".", "train.py"),
    ]
    files = [a for tag, a in parsed.elements if tag == "tr" and "data-section" in a]
    assert [(a["data-folder"], a["data-section"]) for a in files] == [
        ("app/models", "f1"),
        (".", "f2"),
    ]
    tables = [a["data-table"] for tag, a in parsed.elements if tag == "table"]
    assert tables == ["rules", "files", "findings", "findings"]
    keys = [a["data-key"] for tag, a in parsed.elements if tag == "th"]
    assert keys[6:14] == [
        "file",
        "findings",
        "fixable",
        "manual",
        "now",
        "after",
        "effort",
        "tf-free",
    ]
    scores = [a["data-v"] for tag, a in parsed.elements if tag == "td" and "data-v" in a]
    assert all(re.fullmatch(r"[0-9.]*", value or "") for value in scores)


def test_the_filter_bar_offers_what_the_report_holds_and_waits_for_the_script() -> None:
    page, parsed = _page()
    (bar,) = [a for tag, a in parsed.elements if a.get("id") == "filters"]
    assert "hidden" in bar  # without the script, no control that does nothing
    start = page.index('id="filters"')
    bar_html = page[start : page.index("</div>", start)]
    options = dict.fromkeys(re.findall(r'<select name="(\w+)"', bar_html))
    for name in options:
        select = bar_html[bar_html.index(f'name="{name}"') :]
        select = select[: select.index("</select>")]
        options[name] = re.findall(r'<option value="([^"]*)"', select)
    assert options == {
        "rule": ["", "KM102", "KM301", "KM601"],
        "severity": ["", "error", "warning", "info"],
        "fix": ["", "manual", "note"],
        "context": ["", "data", "model", "training-loop"],
        "folder": ["", ".", "app", "app/models"],
    }
    assert '<input type="search" name="q"' in bar_html and 'id="filter-count"' in bar_html
