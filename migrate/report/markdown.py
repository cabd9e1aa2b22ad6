"""Markdown for a pull-request comment or a migration ticket (GitHub / GitLab flavoured).

The headline numbers, the tables by rule and by folder, the files to start with, and
a checklist of the manual findings (one collapsed ``<details>`` block per file) that
a team can tick off. The checklist is capped (``max_items``) to stay inside comment
size limits; the SARIF or HTML report has the full list.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from itertools import groupby

from kmigrate.report.common import cell_prefix, one_line, printable, rule_url
from kmigrate.report.summary import (
    SCORE_LABEL,
    ReportData,
    format_minutes,
    format_score,
    is_manual,
)

MAX_ITEMS = 200
# GitHub's limit for a pull-request comment; the checklist stops before the report reaches it.
MAX_CHARACTERS = 65_536
_MARGIN = 512  # room for the "... and N more" and notes lines
# A code span as CommonMark reads one: a run of backticks, then the next run of exactly
# the same length (a longer or shorter run does not close it).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_BACKTICKS = re.compile(r"`+")


def text(value: str) -> str:
    """Inline Markdown: code spans kept, raw HTML and emphasis markers neutralised."""
    value = one_line(value)
    out: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(value):
        out.append(_escape_plain(value[position : match.start()]))
        out.append(match.group(0))
        position = match.end()
    out.append(_escape_plain(value[position:]))
    return "".join(out)


def _escape_plain(value: str) -> str:
    """Outside code spans: no raw HTML, no emphasis, links or stray backticks."""
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\*_\[\]#|~`])", r"\\\1", value)


def cell(value: str) -> str:
    """A table cell: as :func:`text`, and ``|`` escaped even inside code spans (GFM)."""
    return text(value).replace("\\|", "|").replace("|", "\\|")


def code(value: str) -> str:
    """A code span around any text (a file name may hold backticks, ``<`` and line
    breaks): the fence is longer than every backtick run inside, so nothing closes it
    early, and control characters are shown as escapes (:func:`printable`)."""
    value = printable(value)
    fence = "`" * (1 + max((len(run) for run in _BACKTICKS.findall(value)), default=0))
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def code_cell(value: str) -> str:
    return code(value).replace("|", "\\|")


def _table(headers: list[str], rows: list[list[str]], right: int = 1) -> list[str]:
    align = [":--"] * right + ["--:"] * (len(headers) - right)
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _headline(data: ReportData) -> list[str]:
    total = data.total
    lines = [
        f"**{SCORE_LABEL}: {format_score(total.score_now)} now, {format_score(total.score)} "
        "after `kmigrate apply`**",
        "",
        f"- Files still needing TensorFlow after apply: {len(data.files_needing_tensorflow)} "
        f"of {data.files_with_tensorflow}",
        f"- {data.files_scanned} files scanned, {data.files_with_tensorflow} with "
        f"TensorFlow/Keras code, {data.files_portable} already portable"
        + (f", {data.files_unparsed} not parsed" if data.files_unparsed else ""),
        f"- {total.findings} findings: {total.fixable} fixable automatically "
        f"({data.fixable_share:g}%), {total.manual} manual",
        f"- Manual effort: ~{format_minutes(total.effort_minutes)} (rough estimate)",
    ]
    if data.files_with_tensorflow:
        lines.append(f"- TensorFlow: {text(data.tensorflow_headline())}")
    if data.by_context:
        lines.append("- Where: " + ", ".join(f"{k} {v}" for k, v in data.by_context.items()))
    if data.backend is not None:
        lines.append(f"- Keras backend: {text(data.backend.headline)}")
        for note in data.backend.advice():
            lines.append(f"  - {text(note)}")
    return lines


def _checklist(data: ReportData, max_items: int, budget: int) -> list[str]:
    """The manual findings as a checklist, file by file, within ``max_items`` items and
    ``budget`` characters (a PR comment has a size limit); the notes summarised by rule,
    never itemised: they ask nothing of a person."""
    manual = [f for f in data.findings if is_manual(f)]
    notes = Counter(f.rule for f in data.findings if not f.fixable and not is_manual(f))
    lines: list[str] = []
    if manual:
        files = len({f.path for f in manual})
        lines += ["", f"### Left for a person: {len(manual)} manual findings in {files} files", ""]
    used = sum(len(line) + 1 for line in lines)
    shown = 0
    for path, group in groupby(manual, key=lambda f: f.path):
        items = list(group)
        head = [
            "<details>",
            f"<summary>{html.escape(printable(path))} ({len(items)})</summary>",
            "",
        ]
        body = []
        for finding in items[: max_items - shown]:
            where = f"{finding.span.line}:{finding.span.column + 1}"
            if cell_prefix(finding):  # a notebook: the cell a reader looks for in Jupyter
                where = f"cell {finding.extra['cell']}:{where}"
            body.append(
                f"- [ ] {code(f'{path}:{where}')} **{finding.rule}** ({finding.context.value}) "
                f"{text(finding.message)}"
            )
        block = [*head, *body, "", "</details>"]
        size = sum(len(line) + 1 for line in block)
        if not body or used + size > budget:
            break
        lines += block
        used += size
        shown += len(body)
    if shown < len(manual):
        lines += ["", f"... and {len(manual) - shown} more (see the full report)."]
    if notes:
        listed = ", ".join(f"{rule} {count}" for rule, count in sorted(notes.items()))
        lines += [
            "",
            f"Notes ({sum(notes.values())}, nothing to do where TensorFlow runs as it is): "
            f"{listed}.",
        ]
    return lines


def render(data: ReportData, max_items: int = MAX_ITEMS, **_: object) -> str:
    lines = ["## kmigrate: Keras 3 portability report", "", *_headline(data)]
    if data.rules:
        lines += ["", "### Findings by rule", ""]
        lines += _table(
            ["Rule", "Findings", "Fixable", "Manual", "Effort"],
            [
                [
                    f"[{r.rule}]({rule_url(r.rule, r.name)}) {cell(r.name)}",
                    str(r.count),
                    str(r.fixable),
                    str(r.manual),
                    format_minutes(r.effort_minutes) if r.effort_minutes else "",
                ]
                for r in data.rules
            ],
        )
    folders = [f for f in data.folders if f.files_with_tensorflow]
    if folders:
        lines += ["", "### Portability by folder", ""]
        lines += _table(
            ["Folder", "Files", "Findings", "Manual", "Now", "After apply"],
            [
                [
                    code_cell(f.folder),
                    str(f.files),
                    str(f.findings),
                    str(f.manual),
                    format_score(f.score_now),
                    format_score(f.score),
                ]
                for f in folders
            ],
        )
    if data.top_files:
        lines += ["", "### Start with these files", ""]
        lines += _table(
            ["File", "Findings", "Manual", "Score", "Effort"],
            [
                [
                    code_cell(f.path),
                    str(f.findings),
                    str(f.manual),
                    format_score(f.score),
                    format_minutes(f.effort_minutes) if f.effort_minutes else "",
                ]
                for f in data.top_files
            ],
        )
    footer = [
        "",
        "<sub>Generated by `kmigrate scan --format markdown`. Score: share of TensorFlow/Keras "
        "statements with no blocking finding; effort: per-rule estimate for the manual findings "
        "(see docs/report.md).</sub>",
    ]
    fixed = sum(len(line) + 1 for line in [*lines, *footer])
    lines += _checklist(data, max_items, MAX_CHARACTERS - fixed - _MARGIN)
    return "\n".join([*lines, *footer]) + "\n"
