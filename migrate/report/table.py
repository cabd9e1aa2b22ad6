"""The terminal report: findings grouped by file, then a per-rule summary (rich)."""

from __future__ import annotations

import io
from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from migrate.report.json_report import summary

if TYPE_CHECKING:
    from migrate.runner import RunResult

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def render(result: RunResult, width: int | None = None, color: bool = False, **_: object) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width or 100, force_terminal=color, no_color=not color)
    findings = result.findings
    current = None
    for finding in findings:
        if finding.path != current:
            current = finding.path
            console.print(f"\n[bold]{current}[/bold]")
        style = _SEVERITY_STYLE[finding.severity.value]
        mark = "[green]fix[/green]" if finding.fixable else "[magenta]manual[/magenta]"
        console.print(
            f"  {finding.span.line}:{finding.span.column + 1} [{style}]{finding.rule}[/{style}] "
            f"{mark} [dim]({finding.context.value})[/dim] {finding.message}",
            highlight=False,
        )
    data = summary(result)
    table = Table(title="Findings by rule", show_edge=False)
    table.add_column("rule")
    table.add_column("count", justify="right")
    table.add_column("fixable", justify="right")
    fixable = Counter(f.rule for f in findings if f.fixable)
    for rule, count in data["by_rule"].items():
        table.add_row(rule, str(count), str(fixable.get(rule, 0)))
    console.print()
    if findings:
        console.print(table)
    console.print(
        f"\n{data['files_scanned']} files scanned, {data['files_with_tensorflow']} with "
        f"TensorFlow/Keras code; {data['findings']} findings ({data['fixable']} fixable by "
        f"`kmigrate apply`, {data['manual']} manual)"
    )
    return buffer.getvalue()
