"""SARIF 2.1.0, the subset GitHub code scanning reads (upload with
``github/codeql-action/upload-sarif``).

What GitHub relies on, and how it is met here:
- stable ``ruleId`` (the rule id, KM201) with a ``ruleIndex`` into ``tool.driver.rules``;
- rule ``shortDescription`` / ``fullDescription`` within 1,024 characters, ``help``
  text and Markdown generated from the rule's own documentation, ``helpUri``;
- locations as URIs relative to the checkout root (``uriBaseId: %SRCROOT%``), with
  1-based columns counted in Unicode code points (``columnKind``), as kmigrate counts;
- ``partialFingerprints`` from the finding's fingerprint (it survives edits elsewhere
  in the file), so uploads of later runs do not duplicate alerts. GitHub computes its
  own ``primaryLocationLineHash``; kmigrate does not send one.

No timestamps, no absolute paths, everything sorted: the same tree gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import groupby
from typing import Any
from urllib.parse import quote

from kmigrate.engine.model import Finding
from kmigrate.report import indented_json
from kmigrate.report.common import (
    PROJECT_URL,
    TOOL_NAME,
    TOOL_VERSION,
    cell_prefix,
    fingerprint_of,
    one_line,
    rule_class,
    rule_url,
    stored_lines,
)
from kmigrate.report.summary import ReportData

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
MAX_DESCRIPTION = 1024
FINGERPRINT_KEY = "kmigrate/v1"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
# GitHub's "problem.severity" for non-security alerts.
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}


def clip(text: str, limit: int = MAX_DESCRIPTION) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _help_text(rule: type) -> str:
    fixable = rule.fixable()
    parts = [
        f"{rule.id} {rule.name}: {rule.summary}",
        f"Why it matters: {rule.rationale}",
        f"Fix: {'automatic (kmigrate apply)' if fixable else 'manual'}. {rule.fix_safety}",
    ]
    example = next((e for e in rule.examples if e.flagged), None)
    if example is not None:
        parts.append("Flagged:\n" + example.code.rstrip())
        if example.expected is not None:
            parts.append("After kmigrate apply:\n" + example.expected.rstrip())
    return "\n\n".join(p.strip() for p in parts)


def rule_descriptor(rule_id: str) -> dict[str, Any]:
    rule = rule_class(rule_id)
    if rule is None:  # a finding of a rule this build does not know: still valid SARIF
        return {
            "id": rule_id,
            "name": rule_id,
            "shortDescription": {"text": rule_id},
            "fullDescription": {"text": rule_id},
            "help": {"text": rule_id, "markdown": rule_id},
            "helpUri": rule_url(rule_id),
            "defaultConfiguration": {"level": "warning"},
            "properties": {"tags": ["keras3", "portability"]},
        }
    from kmigrate.report.rule_doc import rule_markdown

    severity = rule.severity.value
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": clip(rule.summary)},
        "fullDescription": {"text": clip(f"{rule.summary} {rule.rationale}")},
        "help": {"text": _help_text(rule), "markdown": rule_markdown(rule, heading="###")},
        "helpUri": rule_url(rule.id, rule.name),
        "defaultConfiguration": {"level": _LEVELS.get(severity, "warning")},
        "properties": {
            "tags": sorted(
                {"keras3", "portability", rule.family(), "fixable" if rule.fixable() else "manual"}
            ),
            "precision": "high",
            "problem.severity": _PROBLEM_SEVERITY.get(severity, "warning"),
        },
    }


def artifact_uri(path: str) -> str:
    """A relative URI reference: percent-encoded, no leading ``./``. Report paths use
    ``/`` already; a backslash is part of a name (``back\\slash.py`` is one file on
    POSIX), so it is encoded (``%5C``), never turned into a folder separator."""
    while path.startswith("./"):
        path = path[2:]
    return quote(path, safe="/")


def region(finding: Finding) -> dict[str, int]:
    span = finding.span
    if cell_prefix(finding):  # a notebook: the lines of the .ipynb as stored, no columns
        first, last = stored_lines(finding)
        return {"startLine": max(first, 1), "endLine": max(last, first, 1)}
    start_line = max(span.line, 1)
    start_column = span.column + 1
    end_line = max(span.end_line, start_line)
    end_column = span.end_column + 1
    if end_line == start_line:
        end_column = max(end_column, start_column)
    return {
        "startLine": start_line,
        "startColumn": start_column,
        "endLine": end_line,
        "endColumn": max(end_column, 1),
    }


def result_message(finding: Finding) -> str:
    suffix = "fixable by `kmigrate apply`" if finding.fixable else "manual"
    return (
        f"{cell_prefix(finding)}{one_line(finding.message)} "
        f"[{finding.rule}, {finding.context.value} code, {suffix}]"
    )


def sarif_result(finding: Finding, rule_index: int) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "context": finding.context.value,
        "fixable": finding.fixable,
    }
    if finding.symbol:
        properties["symbol"] = finding.symbol
    for key, value in sorted(finding.extra.items()):
        properties.setdefault(key, value)
    return {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": _LEVELS.get(finding.severity.value, "warning"),
        "message": {"text": result_message(finding)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {
                        "uri": artifact_uri(finding.path),
                        "uriBaseId": "%SRCROOT%",
                    },
                    "region": region(finding),
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint_of(finding)},
        "properties": properties,
    }


def sarif_log(data: ReportData, make_results: Callable[..., Any] | None = None) -> dict[str, Any]:
    """The SARIF log of ``data`` (``make_results``: how its results list is made, from
    the findings and the rule index; :func:`results` unless given)."""
    rule_ids = sorted(set(data.rule_ids) | {f.rule for f in data.findings})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": TOOL_VERSION,
                        "semanticVersion": TOOL_VERSION,
                        "informationUri": PROJECT_URL,
                        "rules": [rule_descriptor(r) for r in rule_ids],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": (make_results or results)(data.findings, index),
            }
        ],
    }


def results(findings: Sequence[Finding], index: dict[str, int]) -> Any:
    """The log's results, one per finding: as a list, or, for :func:`render_to`,
    written a file's findings at a time (never every result at once)."""
    return [sarif_result(f, index[f.rule]) for f in findings]


# The depth of the "results" list in the log: $.runs[0].results
_RESULTS_DEPTH = 3


def _streamed_results(findings: Sequence[Finding], index: dict[str, int]) -> indented_json.Raw:
    def parts() -> Iterator[str]:
        for _path, group in groupby(findings, key=lambda f: f.path):
            yield indented_json.dumps_items(results(list(group), index), _RESULTS_DEPTH)

    return indented_json.join_items_lazily(parts(), _RESULTS_DEPTH)


def render(data: ReportData, **_: object) -> str:
    return indented_json.dumps(sarif_log(data)) + "\n"


def render_to(data: ReportData, write: Callable[[str], object], **_: object) -> None:
    """:func:`render`'s text handed to ``write`` piece by piece: the results of one file
    at a time are built and written (a 10k-file log is 100 MB of text)."""
    log = sarif_log(data, _streamed_results)
    indented_json.dump(log, write, end="\n")
