"""Running rules over files: discovery, decoding, pre-filter, analysis, fixing.

Work is per file and independent, so it spreads over processes (``--jobs``); the
results are sorted, so the output does not depend on the number of processes.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from migrate.analyze import UNPARSEABLE, RuleSet, analyze_module_text, fingerprint_findings
from migrate.config import Config
from migrate.discover import discover, display_path
from migrate.model import Context, Finding, Severity, Span
from migrate.sources import SourceError, decode_source

Progress = Callable[[int], None]


@dataclass
class FileReport:
    """One file's outcome in a run."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    uses_tensorflow: bool = False
    parsed: bool = True
    new_text: str | None = None  # apply: the rewritten text, when it changed
    old_text: str | None = None
    fixed: int = 0
    error: str | None = None


@dataclass
class RunResult:
    files: list[FileReport]
    rule_ids: tuple[str, ...] = ()

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.files for f in r.findings), key=Finding.sort_key)


@dataclass(frozen=True)
class Job:
    """Everything a worker needs for one file (picklable)."""

    path: str  # filesystem path
    display: str  # path as reported
    package: str
    ignored_codes: tuple[str, ...]
    fix: bool


_RULESETS: dict[tuple[str, ...], RuleSet] = {}


def ruleset_for(rule_ids: Sequence[str]) -> RuleSet:
    """One RuleSet per selection per process (workers build their own once)."""
    key = tuple(rule_ids)
    if key not in _RULESETS:
        from rules.registry import all_rules

        wanted = set(key)
        _RULESETS[key] = RuleSet([r for r in all_rules() if r.id in wanted])
    return _RULESETS[key]


def _file_finding(display: str, message: str) -> Finding:
    return Finding(
        rule=UNPARSEABLE,
        severity=Severity.ERROR,
        message=message,
        path=display,
        span=Span(1, 0, 1, 0),
        context=Context.OTHER,
    )


def run_job(job: Job, rule_ids: tuple[str, ...]) -> FileReport:
    """Scan (or fix) one file. Never raises for bad input."""
    from rules.context_spec import CONTEXT_SPEC, SOURCE_MARKERS

    report = FileReport(path=job.display)
    try:
        data = Path(job.path).read_bytes()
    except OSError as error:
        report.parsed = False
        report.findings.append(
            _file_finding(job.display, f"cannot read this file: {error.strerror or error}")
        )
        return report
    if not any(marker in data for marker in SOURCE_MARKERS):
        return report  # cannot contain TensorFlow or Keras code
    try:
        source = decode_source(data)
    except SourceError as error:
        report.parsed = False
        report.findings.append(
            _file_finding(job.display, f"cannot decode this file: {error}; left untouched")
        )
        return report
    ruleset = ruleset_for(rule_ids)
    if job.fix:
        from migrate.apply import fix_module_text

        outcome = fix_module_text(job.display, source.text, ruleset, CONTEXT_SPEC, job.package)
        findings = outcome.remaining
        report.error = outcome.error
        report.fixed = outcome.fixed
        if outcome.text != source.text:
            report.old_text = source.text
            report.new_text = outcome.text
    else:
        analysis = analyze_module_text(job.display, source.text, ruleset, CONTEXT_SPEC, job.package)
        findings = analysis.findings
        report.parsed = analysis.parsed
    report.uses_tensorflow = True
    report.findings = [f for f in findings if not f.rule.startswith(job.ignored_codes or ("\0",))]
    return report


def _package_of(path: Path) -> str:
    """Dotted package of a file, from the ``__init__.py`` files above it (for relative imports)."""
    parts: list[str] = []
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file():
        parts.append(folder.name)
        folder = folder.parent
    return ".".join(reversed(parts))


def _ignored_codes(display: str, config: Config) -> tuple[str, ...]:
    codes: list[str] = []
    for pattern, ids in config.per_file_ignores.items():
        if fnmatch.fnmatch(display, pattern):
            codes.extend(i.upper() for i in ids)
    return tuple(codes)


def plan_jobs(paths: Sequence[Path], config: Config, fix: bool = False) -> list[Job]:
    jobs = []
    for path in discover(paths, config.root, config.exclude):
        display = display_path(path, config.root)
        jobs.append(
            Job(str(path), display, _package_of(path), _ignored_codes(display, config), fix)
        )
    return jobs


def default_jobs() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def run_jobs(
    jobs: Sequence[Job],
    rule_ids: tuple[str, ...],
    workers: int = 1,
    progress: Progress | None = None,
) -> RunResult:
    """Run ``jobs`` over ``workers`` processes; results in a stable order."""
    reports: list[FileReport] = []
    if workers <= 1 or len(jobs) < 4:
        for job in jobs:
            reports.append(run_job(job, rule_ids))
            if progress:
                progress(1)
    else:
        chunk = max(1, min(64, len(jobs) // (workers * 4) or 1))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for report in pool.map(run_job, jobs, [rule_ids] * len(jobs), chunksize=chunk):
                reports.append(report)
                if progress:
                    progress(1)
    reports.sort(key=lambda r: r.path)
    return RunResult(reports, rule_ids)


def select_ids(select: Iterable[str], ignore: Iterable[str]) -> tuple[str, ...]:
    from rules.registry import select_rules

    return tuple(r.id for r in select_rules(list(select) or None, list(ignore) or None))


def scan_text(
    text: str, select: Sequence[str] | None = None, path: str = "<memory>"
) -> list[Finding]:
    """Findings for module ``text`` with the selected rules; for tests and tools."""
    from rules.context_spec import CONTEXT_SPEC

    ruleset = ruleset_for(select_ids(select or (), ()))
    findings = analyze_module_text(path, text, ruleset, CONTEXT_SPEC).findings
    fingerprint_findings(findings)
    return sorted(findings, key=Finding.sort_key)
