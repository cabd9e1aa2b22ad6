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
    assert "script" not in dom.tags and "img" not in dom.tags
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
