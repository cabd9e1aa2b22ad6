"""One self-contained HTML file: summary, a bar chart of portability per folder (inline
SVG), the tables by rule and by file, and every finding with its source line.

No external resource and no inline event handler; one script, shipped with the package
and allowed by its hash (see :mod:`kmigrate.report.html_controls`), sorts and filters
the tables. Without it the page reads the same (sections collapsed, anchors, table of
contents). Every piece of text that comes from the scanned code or from a finding
(paths, messages, symbols, source lines) goes through :func:`html.escape`.
"""

from __future__ import annotations

import html
import re
from itertools import groupby
from pathlib import Path

from kmigrate.engine.model import Finding
from kmigrate.report.common import TOOL_NAME, TOOL_VERSION, one_line, printable, rule_url
from kmigrate.report.html_controls import (
    CONTROLS_CSS,
    content_security_policy,
    filter_bar,
    script_element,
)
from kmigrate.report.summary import (
    SCORE_LABEL,
    FolderStats,
    ReportData,
    folder_of,
    format_minutes,
    format_score,
    remedy,
)

MAX_CHART_FOLDERS = 40
MAX_SOURCE_CHARS = 240

_CSS = """
:root { --fg: #1f2328; --muted: #656d76; --line: #d0d7de; --bg: #ffffff; --soft: #f6f8fa;
  --now: #1a7f37; --after: #9be9a8; --track: #eaeef2; --err: #cf222e; --warn: #9a6700;
  --info: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  color: var(--fg); background: var(--bg); }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 32px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px;
  background: var(--soft); }
.card .k { color: var(--muted); font-size: 12px; text-transform: uppercase; }
.card .v { font-size: 22px; font-weight: 600; } .card .d { color: var(--muted); font-size: 12px; }
.advice { border-left: 4px solid var(--warn); padding: 4px 12px; background: #fff8c5; }
.advice.ok { border-color: var(--now); background: #dafbe1; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left;
  vertical-align: top; overflow-wrap: anywhere; }
nav { margin: 8px 0 0; } nav a { margin-right: 12px; }
th { background: var(--soft); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { margin: 2px 0 0; padding: 4px 6px; background: var(--soft); border-radius: 4px;
  white-space: pre-wrap; word-break: break-all; }
details { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 0 12px; }
summary { cursor: pointer; padding: 8px 0; font-weight: 600; }
.sev-error { color: var(--err); font-weight: 600; } .sev-warning { color: var(--warn); }
.sev-info { color: var(--info); }
.fix { color: var(--now); } .manual { color: #8250df; } .note { color: #6e7781; }
svg text { font: 12px -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  fill: var(--fg); }
footer { color: var(--muted); margin-top: 32px; font-size: 12px; }
"""


def e(value: object) -> str:
    """Escape for text and attribute values (quotes included). Control characters and
    direction overrides (from file names, source lines) are shown as escapes like in
    every other format: a raw ESC or CR in a name would otherwise reach the page (and a
    terminal the file is printed on), and the name shown would not be the file's."""
    return html.escape(printable(str(value), keep="\n"), quote=True)


def _code_line(text: str) -> str:
    """A line of source: escaped like :func:`e`, its tabs kept (indentation is code)."""
    return html.escape(printable(text, keep="\t"), quote=True)


def _source_lines(root: object, path: str) -> list[str] | None:
    """The file's lines, for showing each finding's code; None when unavailable."""
    if not root or path.endswith(".ipynb"):
        return None
    from kmigrate.engine.sources import SourceError, decode_source

    for candidate in (Path(str(root)) / path, Path(path)):
        try:
            return decode_source(candidate.read_bytes()).text.splitlines()
        except (OSError, SourceError):
            continue
    return None


def _truncate(label: str, limit: int) -> str:
    return label if len(label) <= limit else "\u2026" + label[-(limit - 1) :]


def folder_chart(folders: list[FolderStats]) -> str:
    """Horizontal bars: portability now (dark) and after `kmigrate apply` (light)."""
    if not folders:
        return "<p>No folder with TensorFlow/Keras code.</p>"
    shown = sorted(folders, key=lambda f: (-(f.tf_statements or 0), f.folder))
    shown = sorted(shown[:MAX_CHART_FOLDERS], key=lambda f: f.folder)
    label_w, bar_w, value_w, row_h, top = 260, 480, 130, 24, 30
    width = label_w + bar_w + value_w
    height = top + row_h * len(shown) + 8
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" '
        'aria-label="Portability per folder, now and after kmigrate apply">',
        f'<rect x="{label_w}" y="6" width="12" height="12" fill="#1a7f37"/>',
        f'<text x="{label_w + 18}" y="16">now</text>',
        f'<rect x="{label_w + 70}" y="6" width="12" height="12" fill="#9be9a8"/>',
        f'<text x="{label_w + 88}" y="16">after kmigrate apply</text>',
    ]
    for row, folder in enumerate(shown):
        y = top + row * row_h
        after = folder.score or 0.0
        now = folder.score_now or 0.0
        parts += [
            "<g>",
            f"<title>{e(folder.folder)}: {e(format_score(folder.score_now))} now, "
            f"{e(format_score(folder.score))} after apply; {folder.findings} findings, "
            f"{folder.manual} manual</title>",
            f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">'
            f"{e(_truncate(folder.folder, 36))}</text>",
            f'<rect x="{label_w}" y="{y + 3}" width="{bar_w}" height="16" fill="#eaeef2"/>',
            f'<rect x="{label_w}" y="{y + 3}" width="{bar_w * after / 100:.1f}" height="16" '
            'fill="#9be9a8"/>',
            f'<rect x="{label_w}" y="{y + 3}" width="{bar_w * now / 100:.1f}" height="16" '
            'fill="#1a7f37"/>',
            f'<text x="{label_w + bar_w + 8}" y="{y + 15}">'
            f"{e(format_score(folder.score_now))} \u2192 {e(format_score(folder.score))}</text>",
            "</g>",
        ]
    parts.append("</svg>")
    note = ""
    if len(folders) > len(shown):
        note = (
            f'<p class="sub">{len(folders) - len(shown)} smaller folders not shown; '
            "see the JSON report.</p>"
        )
    return "\n".join(parts) + note


def _card(key: str, value: str, detail: str = "") -> str:
    note = f'<div class="d">{e(detail)}</div>' if detail else ""
    return (
        f'<div class="card"><div class="k">{e(key)}</div><div class="v">{e(value)}</div>'
        f"{note}</div>"
    )


def _summary(data: ReportData) -> str:
    total = data.total
    cards = [
        _card(f"{SCORE_LABEL}: now", format_score(total.score_now), "any finding blocks"),
        _card(f"{SCORE_LABEL}: after apply", format_score(total.score), "manual findings block"),
        _card(
            "Files still needing TensorFlow after apply",
            str(len(data.files_needing_tensorflow)),
            "why: " + (", ".join(list(data.tensorflow_leftovers())[:3]) or "nothing left"),
        ),
        _card(
            "Files scanned",
            str(data.files_scanned),
            f"{data.files_with_tensorflow} with TF/Keras, {data.files_portable} portable",
        ),
        _card(
            "Findings",
            str(total.findings),
            f"{total.fixable} fixable ({data.fixable_share:g}%), {total.manual} manual",
        ),
        _card("Manual effort", f"~{format_minutes(total.effort_minutes)}", "rough estimate"),
        _card(
            "TensorFlow-free after apply",
            f"{data.files_tensorflow_free} of {data.files_with_tensorflow}",
            "files with TF/Keras code"
            + (
                f", {data.files_tensorflow_unknown} unknown"
                if data.files_tensorflow_unknown
                else ""
            ),
        ),
    ]
    out = [f'<div class="cards">{"".join(cards)}</div>']
    if data.files_unparsed:
        out.append(
            f'<p class="advice">{data.files_unparsed} file(s) could not be parsed (KM901); '
            "they are not scored.</p>"
        )
    if data.backend is not None:
        css = "advice ok" if data.backend.pinned else "advice"
        notes = "".join(f"<br>{e(n)}" for n in data.backend.advice())
        out.append(f'<p class="{css}"><b>Keras backend:</b> {e(data.backend.headline)}{notes}</p>')
    if data.files_with_tensorflow:
        out.append(f'<p class="sub">TensorFlow: {_message(data.tensorflow_headline())}</p>')
    if data.by_context:
        where = ", ".join(f"{e(k)}: {v}" for k, v in data.by_context.items())
        out.append(f'<p class="sub">Findings by context: {where}</p>')
    return "\n".join(out)


# A cell: its markup, or its markup and the value it sorts by (a score, minutes) when
# the text shown is not that value ("85.5%", "3.5 h", "n/a" as "").
Cell = str | tuple[str, object]
_NUMERIC = ' class="n"'


def _td(cell: Cell, numeric: bool) -> str:
    markup, value = cell if isinstance(cell, tuple) else (cell, None)
    attrs = _NUMERIC if numeric else ""
    if isinstance(cell, tuple):
        attrs += f' data-v="{e("" if value is None else value)}"'
    return f"<td{attrs}>{markup}</td>"


def _row(cells: list[Cell], numeric: set[int] = frozenset(), attrs: str = "") -> str:
    return f"<tr{attrs}>" + "".join(_td(c, i in numeric) for i, c in enumerate(cells)) + "</tr>"


def _table(name: str, columns: dict[str, str], rows: str, numeric: set[int] = frozenset()) -> str:
    """A table the script can sort: its name and each column's key (``files.after``)."""
    head = "".join(
        f'<th{_NUMERIC if i in numeric else ""} data-key="{key}">{e(label)}</th>'
        for i, (key, label) in enumerate(columns.items())
    )
    return f'<table data-table="{name}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _rules_table(data: ReportData) -> str:
    numeric = {2, 3, 4, 5}
    rows = [
        _row(
            [
                f'<a href="{e(rule_url(r.rule, r.name))}"><code>{e(r.rule)}</code></a>',
                e(r.name),
                str(r.count),
                str(r.fixable),
                str(r.manual),
                _effort(r.effort_minutes),
            ],
            numeric,
        )
        for r in data.rules
    ]
    columns = {
        "rule": "Rule",
        "name": "Name",
        "findings": "Findings",
        "fixable": "Fixable",
        "manual": "Manual",
        "effort": "Effort",
    }
    return _table("rules", columns, "".join(rows), numeric)


def _effort(minutes: float) -> Cell:
    return (e(format_minutes(minutes)) if minutes else "", minutes)


def _anchors(data: ReportData) -> dict[str, str]:
    """Each file with findings: the id of its section (by position: a path may hold any
    character, an id should not)."""
    paths = sorted({f.path for f in data.findings})
    return {path: f"f{number}" for number, path in enumerate(paths, start=1)}


def _linked(path: str, anchors: dict[str, str]) -> str:
    anchor = anchors.get(path)
    code = f"<code>{e(path)}</code>"
    return f'<a href="#{anchor}">{code}</a>' if anchor else code


_BACKTICKS = re.compile(r"`([^`]+)`")


def _message(text: str) -> str:
    """The message escaped, its `code` spans shown as code (not as literal backticks)."""
    return _BACKTICKS.sub(r"<code>\1</code>", e(text))


def _files_table(data: ReportData) -> str:
    numeric = {1, 2, 3, 4, 5, 6}
    anchors = _anchors(data)
    rows = [
        _row(
            [
                _linked(f.path, anchors),
                str(f.findings),
                str(f.fixable),
                str(f.manual),
                (e(format_score(f.score_now)), f.score_now),
                (e(format_score(f.score)), f.score),
                _effort(f.effort_minutes),
                e(f.leftovers_text(shown=6)),
            ],
            numeric,
            f' data-folder="{e(f.folder)}" data-section="{anchors.get(f.path, "")}"',
        )
        for f in data.files
        if f.findings or not f.parsed or f.tf_leftovers
    ]
    columns = {
        "file": "File",
        "findings": "Findings",
        "fixable": "Fixable",
        "manual": "Manual",
        "now": "Now",
        "after": "After",
        "effort": "Effort",
        "tf-free": "TF-free after apply",
    }
    return _table("files", columns, "".join(rows), numeric)


def _finding_row(finding: Finding, lines: list[str] | None) -> str:
    severity = finding.severity.value
    line = finding.span.line
    source = ""
    if lines is not None and 0 < line <= len(lines):
        text = lines[line - 1].strip()
        if len(text) > MAX_SOURCE_CHARS:
            text = text[: MAX_SOURCE_CHARS - 1] + "\u2026"
        source = f"<pre>{_code_line(text)}</pre>"
    label = remedy(finding)
    fix = f'<span class="{label}">{label}</span>'
    symbol = f"<br><code>{e(finding.symbol)}</code>" if finding.symbol else ""
    where = f"{line}:{finding.span.column + 1}"
    if finding.extra.get("cell") is not None:
        where = f"cell {finding.extra['cell']}, {where}"
    context = finding.context.value
    return _row(
        [
            e(where),
            f'<span class="sev-{e(severity)}">{e(finding.rule)}</span>',
            fix,
            e(context),
            f"{_message(one_line(finding.message))}{symbol}{source}",
        ],
        attrs=(
            f' data-rule="{e(finding.rule)}" data-severity="{e(severity)}" data-fix="{label}"'
            f' data-context="{e(context)}"'
        ),
    )


_FINDING_COLUMNS = {
    "line": "Line",
    "rule": "Rule",
    "fix": "Fix",
    "context": "Context",
    "message": "Message / code",
}


def _findings(data: ReportData, root: object) -> str:
    out = []
    anchors = _anchors(data)
    for path, group in groupby(data.findings, key=lambda f: f.path):
        items = list(group)
        lines = _source_lines(root, path)
        rows = "".join(_finding_row(f, lines) for f in items)
        manual = sum(1 for f in items if remedy(f) == "manual")
        # collapsed: a 1,000-file report opens on its summary; the Files table links here
        out.append(
            f'<details id="{anchors[path]}" data-path="{e(path)}" '
            f'data-folder="{e(folder_of(path))}"><summary><code>{e(path)}</code> '
            f"({len(items)} findings, {manual} manual)</summary>"
            f"{_table('findings', _FINDING_COLUMNS, rows)}</details>"
        )
    return "\n".join(out) or "<p>No findings.</p>"


def render(data: ReportData, root: object = None, **_: object) -> str:
    folders = data.scored_folders()
    body = [
        "<main>",
        "<h1>Keras 3 portability report</h1>",
        f'<p class="sub">{e(TOOL_NAME)} {e(TOOL_VERSION)}: what keeps this code on TensorFlow, '
        "and what <code>kmigrate apply</code> fixes.</p>",
        '<nav><a href="#folders">By folder</a><a href="#rules">By rule</a>'
        '<a href="#files">Files</a><a href="#findings">Findings</a></nav>',
        _summary(data),
        '<h2 id="folders">Portability by folder</h2>',
        folder_chart(folders),
    ]
    if data.rules:
        body += ['<h2 id="rules">Findings by rule</h2>', _rules_table(data)]
    if data.findings:
        body += [filter_bar(data), '<h2 id="files">Files</h2>', _files_table(data)]
    body += ['<h2 id="findings">Findings</h2>', _findings(data, root)]
    body += [
        "<footer>Portability: share of TensorFlow/Keras statements with no blocking finding "
        "(now: any finding; after apply: manual findings only). Effort: a per-rule estimate "
        "for manual findings. See docs/report.md.</footer>",
        "</main>",
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>kmigrate portability report</title>\n"
        f"<style>{_CSS}{CONTROLS_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + f"\n{script_element()}\n</body>\n</html>\n"
    )
