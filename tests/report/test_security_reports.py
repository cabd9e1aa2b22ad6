"""File names and messages come from the scanned tree: no report format lets them
inject markup, break out of a table cell or code span, or drive the terminal.

The HTML and the Markdown (rendered by a CommonMark parser, as a pull-request comment
would be) are parsed, and the tests look for what an injection would create: an
element or an event-handler attribute the report never writes itself.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from kmigrate.cli.main import main
from kmigrate.engine.model import Context, Finding, Severity, Span
from kmigrate.engine.run_data import FileReport, RunResult
from kmigrate.report import render
from kmigrate.report.common import printable
from kmigrate.report.html_controls import script_element

CODE = """\
import tensorflow as tf


class Scale(tf.keras.layers.Layer):
    def call(self, x):
        x = tf.py_function(abs, [x], tf.float32)  # manual: the file heads "Top files"
        return tf.reduce_mean(x, axis=1, keep_dims=True) * tf.nn.gelu(x)


def train(model, x):
    with tf.GradientTape() as tape:
        loss = model(x)
    return tape.gradient(loss, model.trainable_variables)
"""

ISSUE_NAME = "<img src=x onerror=alert(1)>.py"
HOSTILE_NAMES = [
    ISSUE_NAME,
    "tick``<img src=x onerror=alert(2)>``.py",  # closes a `` fence early
    "`<img src=x onerror=alert(3)>.py",
    "pipe | <img src=x onerror=alert(4)> |.py",  # leaves a table cell
    "line\n\n<img src=x onerror=alert(5)>.py",  # ends a table row / an HTML block
    "esc\x1b]52;c;cHduZWQ=\x07\x1b[2J.py",  # terminal: clipboard write, clear screen
    "rtl\u202ecod.py",  # shown reversed: "rtlyp.doc"
]
HOSTILE_MESSAGES = [
    '<script>alert("x")</script><img src=x onerror=alert(6)>',
    "``<img src=x onerror=alert(7)>`",
    "`a` <img src=x onerror=alert(8)> `b``",
    "[click](javascript:alert(9)) | cell",
    "two\nlines\n::error file=x.py::forged annotation",
    "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
]


class _Elements(HTMLParser):
    """Every start tag and attribute of an HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)
        self.attributes += attrs


def _elements(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    parser.close()
    return parser


def _assert_no_injection(page: str) -> None:
    # the HTML report's own script (allowed by its hash, tests/report/test_report_html_controls.py)
    # is the only one: with it taken out, no script, no handler, no foreign link is left
    page = page.replace(script_element(), "", 1)
    parsed = _elements(page)
    assert not {"img", "script", "iframe", "a"} & set(parsed.tags) - _ALLOWED_TAGS, parsed.tags
    handlers = [name for name, _ in parsed.attributes if name.startswith("on")]
    assert handlers == []
    links = [value for name, value in parsed.attributes if name == "href"]
    # rule links, and the report's own anchors (ids it makes: never text from the tree)
    own = re.compile(r"#(?:f[0-9]+|folders|rules|files|findings)")
    assert not [
        link for link in links if not ((link or "").startswith("https://") or own.fullmatch(link))
    ]


_ALLOWED_TAGS = {"a"}  # rule links, checked by their href


def _markdown_page(text: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(text)


def _first_cells(text: str) -> list[str]:
    """The code spans of the first cell of every Markdown table row, as parsed."""
    cells: list[str] = []
    first = False
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        if token.type == "tr_open":
            first = True
        elif token.type == "inline" and first:
            first = False
            cells += [
                child.content for child in token.children or () if child.type == "code_inline"
            ]
    return cells


@pytest.fixture
def hostile_tree(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for name in HOSTILE_NAMES:
        (root / "pkg" / name).write_text(CODE)
    return root


def _scan(root: Path, fmt: str, monkeypatch) -> str:
    monkeypatch.chdir(root)
    out = root.parent / f"report.{fmt}"
    result = CliRunner().invoke(
        main,
        ["scan", ".", "-f", fmt, "-o", str(out), "-q", "--no-cache", "-j", "1"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_hostile_file_names_in_the_html_report(hostile_tree, monkeypatch) -> None:
    page = _scan(hostile_tree, "html", monkeypatch)
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in page  # shown, as text
    _assert_no_injection(page)


def test_hostile_file_names_in_the_markdown_report(hostile_tree, monkeypatch) -> None:
    text = _scan(hostile_tree, "markdown", monkeypatch)
    page = _markdown_page(text)
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in page
    _assert_no_injection(page)
    assert "\x1b" not in text and "\u202e" not in text
    # every name is one whole code span in its table cell: nothing closed it early
    assert {printable(f"pkg/{name}") for name in HOSTILE_NAMES} <= set(_first_cells(text))


def test_hostile_file_names_in_sarif_and_json(hostile_tree, monkeypatch) -> None:
    sarif = json.loads(_scan(hostile_tree, "sarif", monkeypatch))
    uris = {
        unquote(location["physicalLocation"]["artifactLocation"]["uri"])
        for result in sarif["runs"][0]["results"]
        for location in result["locations"]
    }
    assert uris == {f"pkg/{name}" for name in HOSTILE_NAMES}  # exact, percent-encoded
    report = json.loads(_scan(hostile_tree, "json", monkeypatch))
    assert {f["path"] for f in report["findings"]} == uris


def test_hostile_file_names_on_the_terminal_and_in_annotations(hostile_tree, monkeypatch):
    table = _scan(hostile_tree, "table", monkeypatch)
    assert "\x1b" not in table and "\x07" not in table and "\u202e" not in table
    assert "esc\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J.py" in table
    github = _scan(hostile_tree, "github", monkeypatch)
    assert all(line.startswith("::") for line in github.splitlines())


def test_hostile_file_names_in_check_output(hostile_tree, monkeypatch) -> None:
    """The pre-commit hook prints one line per new finding on the terminal."""
    monkeypatch.chdir(hostile_tree)
    names = [f"pkg/{name}" for name in HOSTILE_NAMES]
    result = CliRunner().invoke(main, ["check", *names, "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\u202e" not in result.output
    lines = [line for line in result.stdout.splitlines() if " KM" in line]
    assert len(lines) >= len(HOSTILE_NAMES)  # a line break in a name did not split a line
    assert all(line.startswith("pkg/") for line in lines)


def _hostile_result() -> RunResult:
    findings = [
        Finding(
            rule="KM601",
            severity=Severity.WARNING,
            message=message,
            path=f"pkg/{ISSUE_NAME}",
            span=Span(index + 1, 0, index + 1, 4),
            context=Context.TRAINING_LOOP,
            symbol="tf.GradientTape",
            fingerprint=f"{index:016x}",
        )
        for index, message in enumerate(HOSTILE_MESSAGES)
    ]
    report = FileReport(path=f"pkg/{ISSUE_NAME}", findings=findings, uses_tensorflow=True)
    report.tf_statements = len(findings)
    return RunResult([report])


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_hostile_messages_in_html_and_markdown(fmt) -> None:
    text = render(_hostile_result(), fmt)
    page = text if fmt == "html" else _markdown_page(text)
    _assert_no_injection(page)
    assert "\x1b" not in text
    if fmt == "markdown":
        assert "javascript:" not in "".join(
            value or "" for name, value in _elements(page).attributes if name == "href"
        )


def test_hostile_messages_on_the_terminal_in_annotations_and_sarif() -> None:
    result = _hostile_result()
    table = render(result, "table")
    assert "\x1b" not in table and "\x07" not in table
    github = render(result, "github").splitlines()
    assert all(line.startswith("::") for line in github)
    assert len(github) == len(HOSTILE_MESSAGES) + 1  # one per finding, plus the totals
    sarif = json.loads(render(result, "sarif"))
    texts = [r["message"]["text"] for r in sarif["runs"][0]["results"]]
    assert all("\n" not in t and "\x1b" not in t for t in texts)
