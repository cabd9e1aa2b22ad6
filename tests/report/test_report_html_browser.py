"""Load the HTML report in a real headless browser (Chromium) and check what it built.

Skipped when no Chromium is installed. On Debian/Ubuntu CI:
``apt-get install -y --no-install-recommends chromium-headless-shell`` (or ``chromium``).
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kmigrate.engine.model import Context, Finding, Severity, Span
from kmigrate.engine.run_data import FileReport, RunResult
from kmigrate.report import render

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
BROWSER = next((path for path in map(shutil.which, BROWSERS) if path), None)
EVIL = '<script>document.title="pwned"</script><img src=x onerror="document.title=1">'

pytestmark = pytest.mark.skipif(BROWSER is None, reason="no headless Chromium installed")


def _browser(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
    )


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.title = ""
        self._in_title = False
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_title = tag == "title" and "svg" not in self.tags  # the page's, not the chart's

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        self.text.append(data)


def _report(tmp_path: Path) -> Path:
    finding = Finding(
        rule="KM601",
        severity=Severity.ERROR,
        message=f"training loop {EVIL}",
        path="pkg/train.py",
        span=Span(2, 0, 2, 10),
        context=Context.TRAINING_LOOP,
        symbol="tf.GradientTape",
        fingerprint="0123456789abcdef",
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(f"import tensorflow as tf\nprint('{EVIL}')\n")
    report = FileReport(path="pkg/train.py", findings=[finding], uses_tensorflow=True)
    page = tmp_path / "report.html"
    page.write_text(render(RunResult([report]), "html", root=tmp_path), encoding="utf-8")
    return page


def test_browser_shows_markup_as_text_and_runs_nothing(tmp_path: Path) -> None:
    page = _report(tmp_path)
    run = _browser("--dump-dom", page.as_uri(), cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    dom = _Dom()
    dom.feed(run.stdout)
    assert dom.title == "kmigrate portability report"  # no script changed it
    assert dom.tags.count("script") == 1 and "img" not in dom.tags  # the report's own
    text = "".join(dom.text)
    assert f"training loop {EVIL}" in text and f"print('{EVIL}')" in text
    assert "svg" in dom.tags


def test_browser_renders_a_screenshot(tmp_path: Path) -> None:
    page = _report(tmp_path)
    shot = tmp_path / "shot.png"
    run = _browser(f"--screenshot={shot}", "--window-size=1100,900", page.as_uri(), cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


# Appended to a copy of the page without its Content-Security-Policy (the report itself
# runs no script): writes how wide the page is into the title.
_MEASURE = """<script>
const d = document.documentElement;
const wide = [...document.querySelectorAll("body *")].filter(
  (el) => el.getBoundingClientRect().right > d.clientWidth + 1).length;
document.title = `scroll=${d.scrollWidth} client=${d.clientWidth} wide=${wide}`;
</script>"""


def _large_report(tmp_path: Path) -> Path:
    """300 files, deep paths, long messages and symbols, a long leftover list."""
    reports = []
    for n in range(300):
        path = f"pkg/very/deeply/nested/package_{n}/with_a_rather_long_module_name_{n}.py"
        findings = [
            Finding(
                rule="KM201",
                severity=Severity.WARNING,
                message="`tf.nn.sparse_softmax_cross_entropy_with_logits` " + "word " * 60,
                path=path,
                span=Span(line, 4, line, 90),
                context=Context.MODEL,
                symbol="tf.nn.sparse_softmax_cross_entropy_with_logits_and_a_long_suffix" * 2,
                fingerprint=f"{n:08x}{line:08x}",
            )
            for line in range(1, 4)
        ]
        reports.append(
            FileReport(
                path=path,
                findings=findings,
                uses_tensorflow=True,
                tf_leftovers=[f"tf.some.rather_long_tensorflow_name_{k}" for k in range(8)],
            )
        )
    page = tmp_path / "large.html"
    page.write_text(render(RunResult(reports), "html", root=tmp_path), encoding="utf-8")
    return page


def test_a_large_report_never_scrolls_sideways_at_1280_px(tmp_path: Path) -> None:
    """A team opens it on a laptop: no horizontal scroll bar, file sections collapsed
    (each one reachable from the Files table by its anchor)."""
    page = _large_report(tmp_path)
    html = page.read_text(encoding="utf-8")
    assert html.count("<details ") == 300 and "<details open" not in html
    assert 'href="#f1"' in html and 'id="f1"' in html
    probe = tmp_path / "probe.html"
    without_csp = html.replace('<meta http-equiv="Content-Security-Policy"', "<meta name=x")
    probe.write_text(without_csp + _MEASURE, encoding="utf-8")
    for width in (1280, 1400):
        run = _browser("--dump-dom", f"--window-size={width},900", probe.as_uri(), cwd=tmp_path)
        assert run.returncode == 0, run.stderr[-2000:]
        dom = _Dom()
        dom.feed(run.stdout)
        scroll, client, wide = (int(part.split("=")[1]) for part in dom.title.split())
        assert scroll <= client and wide == 0, (width, dom.title)


# -- sorting and filtering (the report's one script, driven by location.hash) ----------

# (rule, severity, fixed by apply, context): the severity does not follow from the rule
_KINDS = (
    ("KM201", Severity.WARNING, True, Context.MODEL),
    ("KM301", Severity.ERROR, False, Context.MODEL),
    ("KM601", Severity.WARNING, False, Context.TRAINING_LOOP),
    ("KM102", Severity.INFO, False, Context.DATA),
)
_FOLDERS = ("app/models", "app/models/deep", "app/data", "tools", "")


def _team_findings(files: int) -> list[Finding]:
    """File n holds (n % 11) + 1 findings (so 10 and 11 sort after 9 only as numbers)."""
    findings = []
    for n in range(files):
        folder = _FOLDERS[n % len(_FOLDERS)]
        path = f"{folder}/mod_{n}.py" if folder else f"mod_{n}.py"
        for k in range(n % 11 + 1):
            rule, severity, fixed, context = _KINDS[(n + k) % len(_KINDS)]
            findings.append(
                Finding(
                    rule=rule,
                    severity=severity,
                    message=f"`{rule}` finding {k} of mod_{n}",
                    path=path,
                    span=Span(k + 1, 0, k + 1, 4),
                    context=context,
                    symbol=f"tf.symbol_{n}_{k}",
                    fingerprint=f"{n:08x}{k:08x}",
                    fixed_later=fixed,
                )
            )
    return findings


def _team_report(tmp_path: Path, files: int = 22) -> tuple[Path, list[Finding]]:
    findings = _team_findings(files)
    reports = []
    for path in dict.fromkeys(f.path for f in findings):
        report = FileReport(
            path=path, findings=[f for f in findings if f.path == path], uses_tensorflow=True
        )
        report.tf_statements = 40
        reports.append(report)
    page = tmp_path / "team.html"
    page.write_text(render(RunResult(reports), "html"), encoding="utf-8")
    return page, findings


class _View(HTMLParser):
    """What the page shows after the script ran: finding rows (hidden or not, with their
    section), the Files table's rows in order, the count, the sort state of headers."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.findings: list[tuple[dict, dict]] = []  # (row attributes, section attributes)
        self.files: list[tuple[list[str], bool]] = []  # (cell texts, hidden)
        self.sorted: dict[str, str] = {}  # "<table>.<column>": aria-sort
        self.header_buttons = 0
        self.bar: dict = {}
        self.count = ""
        self._section: dict = {}
        self._table = ""
        self._row: dict | None = None
        self._cells: list[str] = []
        self._in_count = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "details":
            self._section = attrs
        elif tag == "table":
            self._table = attrs.get("data-table", "")
        elif tag == "th" and "aria-sort" in attrs:
            self.sorted[f"{self._table}.{attrs['data-key']}"] = attrs["aria-sort"]
        elif tag == "button" and self._row is not None:
            self.header_buttons += 1
        elif tag == "tr":
            self._row, self._cells = attrs, []
            if "data-rule" in attrs:
                self.findings.append((attrs, self._section))
        elif tag == "td":
            self._cells.append("")
        elif attrs.get("id") == "filters":
            self.bar = attrs
        self._in_count = attrs.get("id") == "filter-count"

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None and self._table == "files" and self._cells:
            self.files.append((self._cells, "hidden" in self._row))
        if tag == "tr":
            self._row = None
        self._in_count = False

    def handle_data(self, data):
        if self._in_count:
            self.count += data
        elif self._row is not None and self._cells:
            self._cells[-1] += data

    def shown(self) -> list[dict]:
        return [
            row for row, section in self.findings if not {"hidden"} & (row.keys() | section.keys())
        ]


def _view(page: Path, state: str) -> _View:
    run = _browser("--dump-dom", page.as_uri() + state, cwd=page.parent)
    assert run.returncode == 0, run.stderr[-2000:]
    view = _View()
    view.feed(run.stdout)
    return view


def _folder(path: str) -> str:
    return path.rpartition("/")[0] or "."


@pytest.mark.parametrize(
    ("state", "wanted"),
    [
        ("#rule=KM301", lambda f: f.rule == "KM301"),
        ("#severity=warning", lambda f: f.severity is Severity.WARNING),
        ("#context=training-loop", lambda f: f.context is Context.TRAINING_LOOP),
        # a folder and the folders below it, not app/data nor a name that starts the same
        ("#folder=app%2Fmodels", lambda f: f.path.startswith("app/models/")),
        ("#folder=.", lambda f: "/" not in f.path),
        ("#fix=manual&rule=KM601", lambda f: f.rule == "KM601"),
        ("#q=MOD_7.PY&severity=info", lambda f: "mod_7.py" in f.path and f.rule == "KM102"),
    ],
)
def test_a_link_with_a_filter_shows_only_the_matching_findings(tmp_path, state, wanted) -> None:
    page, findings = _team_report(tmp_path)
    view = _view(page, state)
    expected = [f for f in findings if wanted(f)]
    assert 0 < len(expected) < len(findings)
    shown = view.shown()
    assert [(r["data-rule"], r["data-severity"], r["data-context"]) for r in shown] == [
        (f.rule, f.severity.value, f.context.value) for f in sorted(expected, key=Finding.sort_key)
    ]
    # a file section without a matching finding is hidden, and so is its row in Files
    files_shown = {f.path for f in expected}
    assert {section["data-path"] for row, section in view.findings if "hidden" not in section} == (
        files_shown
    )
    assert {cells[0] for cells, hidden in view.files if not hidden} == files_shown
    assert view.count == (
        f"showing {len(expected)} of {len(findings)} findings "
        f"({len(files_shown)} of {len(view.files)} files)"
    )
    assert "hidden" not in view.bar


def test_without_a_filter_everything_shows_and_sections_stay_collapsed(tmp_path) -> None:
    page, findings = _team_report(tmp_path)
    for state in ("", "#f3"):  # an anchor is not a view
        view = _view(page, state)
        assert len(view.shown()) == len(findings) == len(view.findings)
        assert not [s for _, s in view.findings if "open" in s]
        assert view.count == f"showing all {len(findings)} findings (22 files)"
        assert view.header_buttons == 6 + 8 + 5 * 22  # every header sorts, by keyboard too
        assert view.sorted == {}


@pytest.mark.parametrize("order", ["-", ""])
def test_a_link_sorts_the_files_table_by_a_number(tmp_path, order) -> None:
    page, _ = _team_report(tmp_path)
    before = [cells[0] for cells, _ in _view(page, "").files]
    view = _view(page, f"#sort={order}files.findings")
    counts = [int(cells[1]) for cells, _ in view.files]
    assert counts == sorted(counts, reverse=order == "-")  # 10 and 11 after 9: as numbers
    # stable: files with as many findings keep the order they had (by path)
    paths = [cells[0] for cells, _ in view.files]
    for count in set(counts):
        same = [p for p, c in zip(paths, counts) if c == count]
        assert same == [p for p in before if p in same]
    assert view.sorted == {"files.findings": "descending" if order else "ascending"}


def test_a_score_sort_and_a_filter_together(tmp_path) -> None:
    page, _ = _team_report(tmp_path)
    view = _view(page, "#rule=KM601&sort=files.after")
    after = [float(cells[5].rstrip("%")) for cells, hidden in view.files if not hidden]
    assert after == sorted(after) and len(set(after)) > 1
    assert {r["data-rule"] for r in view.shown()} == {"KM601"}


# Timed in a copy of the page without its policy: a reference pass over every row (read
# its text, write its `hidden`: the least a filter does) just before the report's script,
# then the script itself, the end mark added to its last line (inside the script, so no
# layout or paint between scripts is counted).
_REFERENCE = """<script>{
const start = performance.now();
for (const row of document.querySelectorAll("tr")) row.hidden = !row.textContent;
window.reference = performance.now() - start;
window.t0 = performance.now();
}</script>"""
_END = ";document.title = `ms=${performance.now() - t0} reference=${reference}`;"


def test_filtering_a_1000_file_report_is_quick(tmp_path) -> None:
    """The script's whole run on load (reading 6,000 finding rows, filtering them and the
    1,000 sections, sorting the Files table) costs a few passes over the rows, not a
    layout per row nor a comparison of every row with every other."""
    page, findings = _team_report(tmp_path, files=1000)
    html = page.read_text(encoding="utf-8")
    html = html.replace('<meta http-equiv="Content-Security-Policy"', "<meta name=x")
    start = html.index("<script>")
    end = html.index("</script>", start)
    probe = tmp_path / "timed.html"
    probe.write_text(html[:start] + _REFERENCE + html[start:end] + _END + html[end:], "utf-8")
    run = _browser("--dump-dom", probe.as_uri() + "#rule=KM301&sort=-files.manual", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    view, dom = _View(), _Dom()
    view.feed(run.stdout)
    dom.feed(run.stdout)
    expected = sum(f.rule == "KM301" for f in findings)
    assert view.count.startswith(f"showing {expected} of {len(findings)} findings")
    milliseconds, reference = (float(part.split("=")[1]) for part in dom.title.split())
    print(f"script {milliseconds:.0f} ms, reference pass {reference:.0f} ms")
    assert milliseconds < max(20 * reference, 1000), dom.title
