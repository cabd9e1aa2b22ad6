"""The JSON report (described in docs/report.md, formalised in ``schema.json``).

``{"version": 1, "summary": {...}, "files": [...], "findings": [...]}``; everything is
sorted and nothing depends on the time or the machine, so two runs over the same tree
give byte-identical output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kmigrate.report import indented_json
from kmigrate.report.common import fingerprint_of
from kmigrate.report.summary import FileStats, FolderStats, ReportData, Tally, format_minutes

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kmigrate.engine.model import Finding
    from kmigrate.engine.run_data import RunResult

SCHEMA_VERSION = 1


def _minutes(value: float) -> int:
    return int(round(value))


def _tally(tally: Tally) -> dict[str, Any]:
    return {
        "findings": tally.findings,
        "fixable": tally.fixable,
        "manual": tally.manual,
        "tf_statements": tally.tf_statements,
        "score": tally.score,
        "score_now": tally.score_now,
        "effort_minutes": _minutes(tally.effort_minutes),
    }


def file_json(stats: FileStats) -> dict[str, Any]:
    return {
        "path": stats.path,
        "folder": stats.folder,
        "uses_tensorflow": stats.uses_tensorflow,
        "parsed": stats.parsed,
        **_tally(stats),
        "tensorflow_free_after_apply": stats.tensorflow_free_after_apply,
        "tensorflow_leftovers": stats.tf_leftovers,
    }


def folder_json(stats: FolderStats) -> dict[str, Any]:
    return {
        "folder": stats.folder,
        "files": stats.files,
        "files_with_tensorflow": stats.files_with_tensorflow,
        **_tally(stats),
    }


def finding_json(finding: Finding) -> dict[str, Any]:
    data = finding.to_json()
    data["fingerprint"] = fingerprint_of(finding)
    return data


def tensorflow_json(data: ReportData) -> dict[str, Any]:
    """Will the code still need TensorFlow after `kmigrate apply`? Counts of files with
    TensorFlow/Keras code, and each TensorFlow name left with the number of its files."""
    needing = data.files_needing_tensorflow
    unknown = data.files_tensorflow_unknown
    return {
        "files_free": data.files_tensorflow_free,
        "files_needing_tensorflow": len(needing),
        "files_unknown": unknown,
        "leftovers": data.tensorflow_leftovers(),
    }


def summary_json(data: ReportData) -> dict[str, Any]:
    total = data.total
    return {
        "files_scanned": data.files_scanned,
        "files_with_tensorflow": data.files_with_tensorflow,
        "files_with_findings": data.files_with_findings,
        "files_portable": data.files_portable,
        "files_unparsed": data.files_unparsed,
        # A rule crashed on some file (KM902): its findings there are missing.
        "incomplete": data.incomplete,
        "findings": total.findings,
        "fixable": total.fixable,
        "manual": total.manual,
        "notes": total.findings - total.fixable - total.manual,
        "fixable_percent": data.fixable_share,
        "portability": {
            "score": total.score,
            "score_now": total.score_now,
            "tf_statements": total.tf_statements,
            "blocked_now": total.blocked_now,
            "blocked_after_apply": total.blocked_after_apply,
        },
        "effort": {
            "manual_minutes": _minutes(total.effort_minutes),
            "text": format_minutes(total.effort_minutes),
        },
        "tensorflow_after_apply": tensorflow_json(data),
        "by_rule": {r.rule: r.count for r in data.rules},
        "by_context": data.by_context,
        "by_severity": data.by_severity,
        "by_folder": {f.folder: f.findings for f in data.folders if f.findings},
        "rules": [
            {
                "rule": r.rule,
                "name": r.name,
                "severity": r.severity,
                "count": r.count,
                "fixable": r.fixable,
                "manual": r.manual,
                "effort_minutes": _minutes(r.effort_minutes),
            }
            for r in data.rules
        ],
        "folders": [folder_json(f) for f in data.folders],
        "top_files": [f.path for f in data.top_files],
        "backend": (
            {"checked": True, **data.backend.to_json()}
            if data.backend is not None
            else {"checked": False}
        ),
        "rule_ids": list(data.rule_ids),
    }


def report_json(data: ReportData) -> dict[str, Any]:
    return _report(data, [finding_json(f) for f in data.findings])


def _report(data: ReportData, findings: Any) -> dict[str, Any]:
    return {
        "version": SCHEMA_VERSION,
        "summary": summary_json(data),
        "files": [file_json(f) for f in data.files],
        "findings": findings,
    }


# The depth of the "findings" list in the report: an item of the top-level object.
_FINDINGS_DEPTH = 1


def findings_items(findings: Sequence[Finding]) -> str:
    """``findings`` (in report order) as the items of the report's ``findings`` list,
    written as :func:`render` writes them: what the result cache keeps of a file
    (``FileReport.digest``), so that a warm re-scan joins text instead of encoding
    tens of thousands of findings again."""
    return indented_json.dumps_items([finding_json(f) for f in findings], _FINDINGS_DEPTH)


def _rendered_findings(data: ReportData) -> indented_json.Raw | None:
    """The ``findings`` list joined from each file's written findings, when every file
    has them (its findings, all of them: ``FindingsDigest.fits``); None otherwise."""
    parts = []
    previous = None
    for stats in data.files:
        if stats.findings_json is None or (previous is not None and stats.path <= previous):
            return None  # a file's findings are one run of the sorted list: paths differ
        parts.append(stats.findings_json)
        previous = stats.path
    # a cold scan's texts wait on disk (``run.spill.SpilledText``): each read back as it
    # is written, never all held at once
    written = (part if type(part) is str else str(part) for part in parts)
    return indented_json.join_items_lazily(written, _FINDINGS_DEPTH)


def render(data: ReportData, **_: object) -> str:
    out: list[str] = []
    render_to(data, out.append)
    return "".join(out)


def render_to(data: ReportData, write: Callable[[str], object], **_: object) -> None:
    """:func:`render`'s text handed to ``write`` piece by piece, never held whole: a
    10k-file report is 60 MB of text, twice that once encoded (``--output``)."""
    findings = _rendered_findings(data)
    if findings is None:
        indented_json.dump(report_json(data), write, end="\n")
    else:
        indented_json.dump(_report(data, findings), write, end="\n")


def report_data(result: RunResult, **options: Any) -> dict[str, Any]:
    """The JSON report of a run as a dict (for tools that post-process it)."""
    from kmigrate.report.summary import build

    return report_json(build(result, **options))
