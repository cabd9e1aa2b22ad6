"""``kmigrate merge``: one report from several JSON reports.

Two uses, one command:

- the shards of one repository (``kmigrate scan --shard K/N --format json`` on N CI
  machines): the merged report is the report an unsharded scan would have written;
- the reports of several repositories (``NAME=report.json``: paths get ``NAME/`` in
  front), for an organisation-wide picture.

File entries and findings are taken verbatim from the inputs and sorted the way a
scan sorts them (by path, each file's findings in their original order). The
summary is recomputed by the report module from the merged files and findings, so
every count, score and effort estimate covers the whole set. A file present in
more than one input keeps the entries of the last input that has it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kmigrate.engine.model import FINDING_FIELDS, Context, EditPlan, Finding, Severity, Span

_FIXED = EditPlan(edits=(), description="(fix described in the original report)")


class MergeError(Exception):
    """An input that is not a kmigrate JSON report; the message says which and why."""


def load_report(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise MergeError(f"{path}: cannot read a JSON report: {error}") from None
    from kmigrate.report.json_report import SCHEMA_VERSION

    if not isinstance(data, dict) or not all(k in data for k in ("files", "findings")):
        raise MergeError(f"{path}: not a kmigrate JSON report (`kmigrate scan --format json`)")
    if data.get("version") != SCHEMA_VERSION:
        raise MergeError(
            f"{path}: report version {data.get('version')!r}; this kmigrate reads {SCHEMA_VERSION}"
        )
    return data


def _prefixed(path: str, prefix: str) -> str:
    return f"{prefix}/{path}" if prefix else path


def _folder(path: str) -> str:
    head, _, _ = path.rpartition("/")
    return head or "."


def merge_data(reports: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The merged JSON report of ``(prefix, report)`` pairs ("" = paths unchanged)."""
    files: dict[str, dict[str, Any]] = {}
    findings: dict[str, list[dict[str, Any]]] = {}
    rule_ids: set[str] = set()
    backends: list[dict[str, Any]] = []
    for prefix, report in reports:
        owned: set[str] = set()
        for entry in report["files"]:
            entry = dict(entry)
            entry["path"] = _prefixed(entry["path"], prefix)
            if prefix and "folder" in entry:
                entry["folder"] = _folder(entry["path"])
            files[entry["path"]] = entry
            findings[entry["path"]] = []  # a later report replaces an earlier one's file
            owned.add(entry["path"])
        for item in report["findings"]:
            item = dict(item, path=_prefixed(item["path"], prefix))
            if item["path"] not in owned:  # a finding whose file the report does not list
                owned.add(item["path"])
                findings[item["path"]] = []
            findings[item["path"]].append(item)
        summary = report.get("summary") or {}
        rule_ids.update(summary.get("rule_ids") or ())
        backend = summary.get("backend")
        if isinstance(backend, dict):
            backends.append(_prefixed_backend(backend, prefix))
    merged_files = [files[p] for p in sorted(files)]
    merged_findings = [f for path in sorted(findings) for f in findings[path]]
    result = _run_result(merged_files, merged_findings, tuple(sorted(rule_ids)))
    from kmigrate.report import build
    from kmigrate.report.json_report import SCHEMA_VERSION, summary_json

    data = build(result, backend_pins=_backend_pins(backends))
    return {
        "version": SCHEMA_VERSION,
        "summary": summary_json(data),
        "files": merged_files,
        "findings": merged_findings,
    }


def _prefixed_backend(backend: dict[str, Any], prefix: str) -> dict[str, Any]:
    if not prefix:
        return backend
    pins = [dict(p, path=_prefixed(p.get("path", ""), prefix)) for p in backend.get("pins", [])]
    return dict(backend, pins=pins)


def _backend_pins(backends: list[dict[str, Any]]):
    """The union of the inputs' backend pins (shards each see the pins in their own
    files); None when no input checked the backend."""
    if not any(b.get("checked") for b in backends):
        return None
    from kmigrate.engine.run_data import BackendPin

    pins = set()
    for backend in backends:
        for pin in backend.get("pins", []):
            pins.add(BackendPin(**pin))
    return sorted(pins, key=lambda p: (p.path, p.cell or 0, p.line, p.variable, p.value))


def _finding(item: dict[str, Any]) -> Finding:
    return Finding(
        rule=item["rule"],
        severity=Severity(item["severity"]),
        message=item["message"],
        path=item["path"],
        span=Span(
            item["line"],
            item["column"] - 1,
            item.get("end_line", item["line"]),
            item.get("end_column", item["column"]) - 1,
        ),
        context=Context(item.get("context", "other")),
        symbol=item.get("symbol", ""),
        fix=_FIXED if item.get("fixable") else None,
        fingerprint=item.get("fingerprint", ""),
        extra={k: v for k, v in item.items() if k not in FINDING_FIELDS},
    )


def _run_result(files: list[dict[str, Any]], findings: list[dict[str, Any]], rule_ids):
    """A RunResult standing for the merged reports, for the report module's summary."""
    from kmigrate.engine.run_data import FileReport, RunResult

    reports: dict[str, FileReport] = {}
    for entry in files:
        statements = entry.get("tf_statements")
        reports[entry["path"]] = FileReport(
            path=entry["path"],
            uses_tensorflow=bool(entry.get("uses_tensorflow", True)),
            parsed=bool(entry.get("parsed", True)),
            tf_statements=statements if isinstance(statements, int) else None,
        )
        left = entry.get("tensorflow_leftovers")
        reports[entry["path"]].tf_leftovers = left if isinstance(left, list) else None
    for item in findings:
        report = reports.get(item["path"])
        if report is None:
            report = reports[item["path"]] = FileReport(path=item["path"], uses_tensorflow=True)
        report.findings.append(_finding(item))
    return RunResult(list(reports.values()), rule_ids)


def parse_input(text: str) -> tuple[str, Path]:
    """``report.json`` or ``NAME=report.json`` (paths of that report get ``NAME/``)."""
    name, sep, rest = text.partition("=")
    if sep and name and "/" not in name and not Path(text).exists():
        return name.strip("/"), Path(rest)
    return "", Path(text)


def render_merged(data: dict[str, Any], fmt: str) -> str:
    """The merged report in ``fmt``: JSON as merged, any other format rendered from the
    merged findings (summary recomputed)."""
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    from kmigrate.report import build, render_data

    result = _run_result(data["files"], data["findings"], tuple(data["summary"]["rule_ids"]))
    pins = _backend_pins([data["summary"].get("backend") or {}])
    return render_data(build(result, backend_pins=pins), fmt, color=False)
