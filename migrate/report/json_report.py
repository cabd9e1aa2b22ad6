"""The JSON report, DESIGN.md's schema; also the input of the other formats."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from migrate.runner import RunResult

SCHEMA_VERSION = 1


def summary(result: RunResult) -> dict[str, Any]:
    findings = result.findings
    by_rule = Counter(f.rule for f in findings)
    by_context = Counter(f.context.value for f in findings)
    by_severity = Counter(f.severity.value for f in findings)
    fixable = sum(1 for f in findings if f.fixable)
    with_tf = [r for r in result.files if r.uses_tensorflow]
    return {
        "files_scanned": len(result.files),
        "files_with_tensorflow": len(with_tf),
        "files_with_findings": len({f.path for f in findings}),
        "findings": len(findings),
        "fixable": fixable,
        "manual": len(findings) - fixable,
        "by_rule": dict(sorted(by_rule.items())),
        "by_context": dict(sorted(by_context.items())),
        "by_severity": dict(sorted(by_severity.items())),
    }


def report_data(result: RunResult) -> dict[str, Any]:
    files = [
        {
            "path": r.path,
            "uses_tensorflow": r.uses_tensorflow,
            "parsed": r.parsed,
            "findings": len(r.findings),
        }
        for r in sorted(result.files, key=lambda r: r.path)
    ]
    return {
        "version": SCHEMA_VERSION,
        "summary": summary(result),
        "files": files,
        "findings": [f.to_json() for f in result.findings],
    }


def render(result: RunResult, **_: object) -> str:
    return json.dumps(report_data(result), indent=2, sort_keys=False, ensure_ascii=False) + "\n"
