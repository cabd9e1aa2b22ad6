"""Reports: one module per format, all rendering the same computed :class:`ReportData`.

``render(result, fmt, **options)`` returns the report text. Formats are imported
lazily, so a JSON report never imports rich. Options every format understands:

- ``root``: the project root (a path); files are read from it to measure each file's
  framework footprint when the engine did not (the portability score's denominator);
- ``backend_pins``: the :class:`~kmigrate.project.backend_pins.BackendPin` list found for the
  project, or None when it was not checked;
- ``top``: how many offending files to list (default 10).

Format-specific ones: ``color`` and ``width`` (table), ``max_items`` (markdown).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from kmigrate.engine.run_data import RunResult
    from kmigrate.report.summary import ReportData, build

FORMATS: dict[str, str] = {
    "table": "kmigrate.report.table:render",
    "json": "kmigrate.report.json_report:render",
    "sarif": "kmigrate.report.sarif:render",
    "github": "kmigrate.report.github:render",
    "gitlab": "kmigrate.report.gitlab:render",
    "markdown": "kmigrate.report.markdown:render",
    "html": "kmigrate.report.html_report:render",
}
__all__ = ["FORMATS", "build", "one_line_summary", "render", "render_data", "write_data"]


def __getattr__(name: str) -> Any:
    """``build`` and ``ReportData`` from the summary, loaded on first use (PEP 562):
    ``check`` prints findings with :mod:`kmigrate.report.common` alone."""
    if name in ("build", "ReportData"):
        from kmigrate.report import summary

        return getattr(summary, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render_data(data: ReportData, fmt: str, **options: object) -> str:
    """Render already computed report data in format ``fmt`` (one of :data:`FORMATS`)."""
    module_name, _, attr = FORMATS[fmt].partition(":")
    renderer = getattr(importlib.import_module(module_name), attr)
    return renderer(data, **options)


def write_data(
    data: ReportData, fmt: str, write: Callable[[str], object], **options: object
) -> None:
    """:func:`render_data`'s text handed to ``write``: piece by piece where the format
    can lay itself out so (``render_to``: JSON, SARIF), which then never holds the
    whole report; in one piece otherwise (the table, Markdown, HTML)."""
    module_name, _, attr = FORMATS[fmt].partition(":")
    streamed = getattr(importlib.import_module(module_name), "render_to", None)
    if streamed is None:
        write(render_data(data, fmt, **options))
    else:
        streamed(data, write, **options)


def render(result: RunResult, fmt: str, **options: object) -> str:
    """The report of ``result`` in format ``fmt`` (one of :data:`FORMATS`)."""
    from kmigrate.report.summary import build

    return render_data(build(result, **options), fmt, **options)


def one_line_summary(data: ReportData) -> str:
    """The headline, for a log line next to a report written to a file."""
    from kmigrate.report.summary import SCORE_LABEL, format_minutes, format_score

    total = data.total
    return (
        f"{total.findings} findings ({total.fixable} fixable, {total.manual} manual, "
        f"~{format_minutes(total.effort_minutes)}); {SCORE_LABEL}: "
        f"{format_score(total.score_now)} now, {format_score(total.score)} after `kmigrate apply`; "
        f"{len(data.files_needing_tensorflow)} of {data.files_with_tensorflow} files still need "
        "TensorFlow after apply"
    )
