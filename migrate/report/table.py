"""The terminal report (rich): findings grouped by file, then the tables a team reads
to decide (by rule, by folder, top files), then the summary panel, last so it is what
stays on screen. Everything fits an 80-column terminal: long cells wrap, never spill.
"""

from __future__ import annotations

import io
import shutil
from itertools import groupby

from rich import box
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from kmigrate.engine.model import Finding
from kmigrate.report.common import one_line, printable
from kmigrate.report.summary import (
    SCORE_LABEL,
    ReportData,
    format_minutes,
    format_score,
    remedy,
)

_REMEDY_STYLE = {"fix": "green", "manual": "magenta", "note": "dim"}

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _score_text(value: float | None) -> Text:
    if value is None:
        return Text("n/a", style="dim")
    style = "green" if value >= 90 else "yellow" if value >= 60 else "red"
    return Text(format_score(value), style=style)


def _location(finding: Finding) -> str:
    where = f"{finding.span.line}:{finding.span.column + 1}"
    cell = finding.extra.get("cell") if finding.extra else None
    return where if cell is None else f"[{cell}] {where}"


def _findings_section(console: Console, data: ReportData) -> None:
    # One width for every file's columns, so the report reads as one aligned list.
    where_width = max(len(_location(f)) for f in data.findings) + 1
    rule_width = max(len(f.rule) for f in data.findings)
    for path, group in groupby(data.findings, key=lambda f: f.path):
        console.print()
        console.print(Text(printable(path), style="bold"), overflow="fold")
        grid = Table.grid(padding=(0, 1), pad_edge=True)
        grid.add_column(justify="right", no_wrap=True, min_width=where_width)  # line:col
        grid.add_column(no_wrap=True, min_width=rule_width)
        grid.add_column(no_wrap=True, min_width=6)  # fix / manual / note
        grid.add_column(ratio=1, overflow="fold")  # message
        for finding in group:
            label = remedy(finding)
            mark = Text(label, _REMEDY_STYLE[label])
            message = Text(one_line(finding.message))
            message.append(f" ({finding.context.value})", style="dim")
            grid.add_row(
                Text(_location(finding)),
                Text(finding.rule, _SEVERITY_STYLE.get(finding.severity.value, "")),
                mark,
                message,
            )
        console.print(grid)


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)


def _rules_table(data: ReportData) -> Table:
    table = _table("Findings by rule")
    table.add_column("rule", no_wrap=True)
    table.add_column("name", overflow="fold")
    for header in ("count", "fix", "manual"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("effort", justify="right", no_wrap=True)
    for rule in data.rules:
        table.add_row(
            Text(rule.rule, _SEVERITY_STYLE.get(rule.severity, "")),
            rule.name,
            str(rule.count),
            str(rule.fixable),
            str(rule.manual),
            format_minutes(rule.effort_minutes) if rule.effort_minutes else "",
        )
    return table


def _folders_table(data: ReportData) -> Table:
    table = _table("Portability by folder (now -> after `kmigrate apply`)")
    table.add_column("folder", overflow="fold", ratio=1)
    for header in ("files", "findings", "manual", "now", "after"):
        table.add_column(header, justify="right", no_wrap=True)
    for folder in data.folders:
        if not folder.files_with_tensorflow:
            continue
        table.add_row(
            Text(printable(folder.folder)),
            str(folder.files),
            str(folder.findings),
            str(folder.manual),
            _score_text(folder.score_now),
            _score_text(folder.score),
        )
    return table


def _top_files_table(data: ReportData) -> Table:
    shown = len(data.top_files)
    table = _table(
        f"Top {shown} files by manual effort" if shown > 1 else "The file with manual work"
    )
    table.add_column("file", overflow="fold", ratio=1)
    for header in ("findings", "manual", "score", "effort"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("TF-free after apply", overflow="fold")
    for stats in data.top_files:
        table.add_row(
            Text(printable(stats.path)),
            str(stats.findings),
            str(stats.manual),
            _score_text(stats.score),
            format_minutes(stats.effort_minutes) if stats.effort_minutes else "",
            stats.leftovers_text(),
        )
    return table


def _needing_text(data: ReportData) -> str:
    needing = len(data.files_needing_tensorflow)
    names = ", ".join(list(data.tensorflow_leftovers())[:3])
    return f"{needing} of {data.files_with_tensorflow} files" + (f" (for {names})" if names else "")


def _summary_panel(data: ReportData) -> Panel:
    total = data.total
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    portability = Text()
    portability.append_text(_score_text(total.score_now))
    portability.append(" now, ")
    portability.append_text(_score_text(total.score))
    portability.append(f" after `kmigrate apply` ({SCORE_LABEL})")
    grid.add_row("Score", portability)
    if data.files_with_tensorflow:
        grid.add_row("Still need TF after apply", _needing_text(data))
    files = (
        f"{data.files_scanned} scanned, {data.files_with_tensorflow} with TensorFlow/Keras, "
        f"{data.files_portable} already portable"
    )
    if data.files_unparsed:
        files += f", {data.files_unparsed} not parsed (KM901)"
    grid.add_row("Files", files)
    grid.add_row(
        "Findings",
        f"{total.findings}: {total.fixable} fixable by `kmigrate apply` "
        f"({data.fixable_share:g}%), {total.manual} manual",
    )
    if data.by_context:
        grid.add_row("Where", ", ".join(f"{k} {v}" for k, v in data.by_context.items()))
    grid.add_row("Effort", f"~{format_minutes(total.effort_minutes)} of manual work (estimate)")
    if data.files_with_tensorflow:
        grid.add_row("TensorFlow", data.tensorflow_headline())
    if data.backend is not None:
        style = "green" if data.backend.pinned else "yellow"
        grid.add_row("Backend", Text(data.backend.headline, style=style))
        for note in data.backend.advice():
            grid.add_row("", Text(note, style="dim"))
    return Panel(
        grid,
        title="kmigrate portability report",
        title_align="left",
        border_style="blue",
    )


# Above this many findings the terminal shows the summary tables only (tensorflow/addons'
# 4,224 findings made an 11,601-line listing); `scan --details` lists them all.
MAX_LISTED = 200


def render(
    data: ReportData,
    width: int | None = None,
    color: bool = False,
    details: bool | None = None,
    **_: object,
) -> str:
    """``details``: list every finding file by file (None: when there are at most
    :data:`MAX_LISTED`)."""
    if width is None:  # the terminal's width, or $COLUMNS, or 100 when piped
        width = shutil.get_terminal_size((100, 24)).columns
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,
    )
    if data.findings:
        listed = details if details is not None else len(data.findings) <= MAX_LISTED
        if listed:
            _findings_section(console, data)
        else:
            console.print(
                f"{len(data.findings)} findings in {data.files_with_findings} files, not listed "
                "one by one: `kmigrate scan --details` lists them (or -f html / -f json)."
            )
        console.print()
        console.print(_rules_table(data))
        if any(f.files_with_tensorflow for f in data.folders):
            console.print(_folders_table(data))
        if data.top_files:
            console.print(_top_files_table(data))
    else:
        console.print("No findings: nothing keeps this code on TensorFlow.")
    console.print(_summary_panel(data))
    text = buffer.getvalue()
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
