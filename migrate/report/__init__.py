"""Reports: one function per format, all fed by the same run result.

``render(result, fmt)`` returns the report text; formats are looked up lazily so
a JSON report never imports rich.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from migrate.runner import RunResult

FORMATS: dict[str, str] = {
    "table": "migrate.report.table:render",
    "json": "migrate.report.json_report:render",
}


def render(result: RunResult, fmt: str, **options: object) -> str:
    """The report of ``result`` in format ``fmt`` (one of :data:`FORMATS`)."""
    module_name, _, attr = FORMATS[fmt].partition(":")
    renderer = getattr(importlib.import_module(module_name), attr)
    return renderer(result, **options)
