"""GitLab Code Quality report (``artifacts: reports: codequality``): a JSON array of
issues with description, check_name, fingerprint, severity and location.

Severities map error -> major, warning -> minor, info -> info; a file kmigrate cannot
parse (KM901) is critical, since nothing in it was checked.
"""

from __future__ import annotations

from typing import Any

from kmigrate.engine.model import UNPARSEABLE, Finding
from kmigrate.report import indented_json
from kmigrate.report.common import cell_prefix, fingerprint_of, one_line, stored_lines
from kmigrate.report.summary import ReportData, remedy_text

_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}
_CRITICAL_RULES = frozenset({UNPARSEABLE})


def issue(finding: Finding) -> dict[str, Any]:
    how = remedy_text(finding)
    severity = "critical" if finding.rule in _CRITICAL_RULES else _SEVERITY[finding.severity.value]
    return {
        "type": "issue",
        "check_name": finding.rule,
        "description": f"{finding.rule}: {cell_prefix(finding)}{one_line(finding.message)} ({how})",
        "categories": ["Compatibility"],
        "fingerprint": fingerprint_of(finding),
        "severity": severity,
        "location": {
            "path": finding.path,
            "lines": dict(zip(("begin", "end"), stored_lines(finding), strict=True)),
        },
    }


def render(data: ReportData, **_: object) -> str:
    return indented_json.dumps([issue(f) for f in data.findings]) + "\n"
