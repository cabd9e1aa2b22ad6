"""GitHub Actions workflow commands: one annotation per finding, shown on the PR diff.

``::error file=src/m.py,line=3,col=5,endLine=3,endColumn=20,title=KM201 name::message``

Escaping follows the Actions runner: in the message, ``%``, ``\\r`` and ``\\n`` are
percent-encoded; in property values ``:`` and ``,`` are too, and other control
characters of a file name are shown as escapes (``\\x1b``). GitHub shows a limited
number of annotations per step (10 of each level at the time of writing), so the
last line is a notice with the totals; use SARIF for the full list in code scanning.
"""

from __future__ import annotations

from kmigrate.engine.model import Finding
from kmigrate.report.common import cell_prefix, one_line, printable, rule_class, stored_lines
from kmigrate.report.summary import (
    SCORE_LABEL,
    ReportData,
    format_minutes,
    format_score,
    remedy_text,
)

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (a file name): CR and LF percent-encoded, which the runner turns
    back into the name's own characters; other controls (an ESC would drive the log's
    ANSI rendering) shown as escapes, as in every other format."""
    return escape_data(printable(text, keep="\r\n")).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: object) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def level(finding: Finding) -> str:
    """The workflow command for the finding's severity: error, warning or notice."""
    return _COMMANDS.get(finding.severity.value, "warning")


def annotation(finding: Finding) -> str:
    span = finding.span
    in_cell = cell_prefix(finding)  # a notebook: lines of the .ipynb as stored, no columns
    single_line = span.end_line <= span.line and not in_cell
    first, last = stored_lines(finding)
    rule = rule_class(finding.rule)
    title = f"{finding.rule} {rule.name}" if rule is not None else finding.rule
    how = remedy_text(finding)
    return command(
        level(finding),
        f"{in_cell}{one_line(finding.message)} ({finding.context.value} code, {how})",
        file=finding.path,
        line=first,
        col=span.column + 1 if single_line else None,
        endLine=last,
        endColumn=span.end_column + 1 if single_line else None,
        title=title,
    )


def render(data: ReportData, **_: object) -> str:
    lines = [annotation(f) for f in data.findings]
    total = data.total
    lines.append(
        command(
            "notice",
            f"{SCORE_LABEL}: {format_score(total.score_now)} now, {format_score(total.score)} "
            f"after `kmigrate apply`; {len(data.files_needing_tensorflow)} of "
            f"{data.files_with_tensorflow} files still need TensorFlow after apply; "
            f"{total.findings} findings, {total.fixable} fixable, "
            f"{total.manual} manual (~{format_minutes(total.effort_minutes)}).",
            title="kmigrate",
        )
    )
    return "\n".join(lines) + "\n"
