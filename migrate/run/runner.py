"""Running jobs: each file's job (:mod:`kmigrate.run.file_job`) over processes, results
from the cache where it holds them, and the project's two phases (analyse, resolve the
project, analyse again what the project's facts change).

Work is per file and independent, so it spreads over processes (``--jobs``); the
results are sorted, so the output does not depend on the number of processes.
"""

from __future__ import annotations

import atexit
import gc
import os
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.engine.model import Finding
from kmigrate.engine.run_data import FileReport, FixResult, Job, RunResult
from kmigrate.engine.sources import SourceError, read_bytes
from kmigrate.run.file_job import _FACTS_GUESS, _reaches_framework, ruleset_for, run_job
from kmigrate.run.freed_memory import give_back_freed_memory
from kmigrate.run.planning import (  # noqa: F401  (also imported from here)
    default_jobs,
    filter_jobs,
    in_shard,
    parse_shard,
    plan_jobs,
)
from kmigrate.run.report_codec import (
    digest_findings,
    load_report,
    pack_findings,
    peek_findings,
    store_report,
    trim_for_reports,
)
from kmigrate.run.shared_strings import share_strings
from kmigrate.run.spill import Spill, open_spill, spill_report

if TYPE_CHECKING:
    from kmigrate.engine.module_facts import ModuleFacts
    from kmigrate.project.pending_project import PendingProject
    from kmigrate.store.cache import ResultCache

Progress = Callable[[int], None]


def _may_hold_tensorflow(data: bytes, job: Job) -> bool:
    from kmigrate.rules.context_spec import SOURCE_MARKERS

    return _reaches_framework(job) or any(marker in data for marker in SOURCE_MARKERS)


def run_cached_job(
    job: Job, rule_ids: tuple[str, ...], cache: ResultCache | None
) -> FileReport | FixResult:
    """:func:`run_job`, storing a scan result under the key of the bytes it analysed."""
    if cache is None or job.fix:
        return run_job(job, rule_ids)
    try:
        data = read_bytes(job.path)  # a regular file only: never blocks on a FIFO
    except SourceError:
        return run_job(job, rule_ids)  # which reports why
    report = run_job(job, rule_ids, data)
    if _may_hold_tensorflow(data, job):
        store_report(cache, cache.entry_key(job, data), report)
    return report


def _cached_report(
    job: Job, rule_ids: tuple[str, ...], cache: ResultCache
) -> FileReport | FixResult | None:
    """The result of ``job`` without analysing it, or None when it must be analysed:
    the cached result, or the empty one of a file the pre-filter skips.

    For ``apply`` a cached scan result stands in only when nothing in it is fixable:
    then fixing would change nothing and LibCST never needs to see the file.
    """
    try:
        data = read_bytes(job.path)
    except SourceError:
        return None
    if not _may_hold_tensorflow(data, job):
        return run_job(job, rule_ids, data)  # returns at the pre-filter: no worker needed
    cached = load_report(cache, cache.entry_key(job, data))
    if not isinstance(cached, FileReport):
        return None
    if job.fix:
        if any(f.fix is not None for f in cached.findings):
            return None
        return FixResult(cached.path, cached.findings)
    return cached


class _Collected:
    """Reports as they arrive, each moved out of the garbage collector's sight.

    Without ``gc.freeze`` the collector rescans every result gathered so far each time
    it runs: loading the cached findings of a large repository took three times as
    long. The results are plain data without cycles, so nothing is lost; everything is
    unfrozen at the end (unless the caller had frozen objects itself).
    """

    def __init__(
        self,
        progress: Progress | None,
        counted: Set[str] = frozenset(),
        spill: Spill | None = None,
    ) -> None:
        """``counted``: paths whose progress was counted already (analysed again);
        ``spill``: where each report's undecoded findings and their text go
        (:func:`~kmigrate.run.spill.spill_report`)."""
        self.reports: list[FileReport | FixResult] = []
        self.progress = progress
        self.counted = counted
        self.spill = spill
        self.owns_freeze = gc.get_freeze_count() == 0
        self.strings: dict[str, str] = {}  # one copy of each (run/shared_strings.py)

    def add(self, report: FileReport | FixResult) -> None:
        if getattr(report, "index_entry", None) is not None:  # kept until the resolution
            strings = self.strings
            report.index_entry = share_strings(report.index_entry, strings)
            report.own_local = share_strings(report.own_local, strings)
            report.own_facts = share_strings(report.own_facts, strings)
        if self.spill is not None:
            spill_report(report, self.spill)
        self.reports.append(report)
        gc.freeze()
        if self.progress and report.path not in self.counted:
            self.progress(1)

    def close(self) -> None:
        if self.owns_freeze:
            gc.unfreeze()


def run_jobs(
    jobs: Sequence[Job],
    rule_ids: tuple[str, ...],
    workers: int = 1,
    progress: Progress | None = None,
    cache: ResultCache | None = None,
) -> RunResult:
    """Run ``jobs`` over ``workers`` processes; results in a stable order.

    With a ``cache``, files whose result is stored are not analysed again (the parent
    looks them up, so an all-cached run starts no process), and new scan results are
    stored by the workers. The result never depends on ``workers`` or on the cache.
    """
    _freeze_at_exit()
    pool = _Pool(workers)
    try:
        pending = getattr(jobs, "pending", None)
        if pending is not None:
            result = _run_in_two_phases(jobs, pending, rule_ids, pool, progress, cache)
        else:
            result = _run_jobs(jobs, rule_ids, pool, progress, cache)
    finally:
        pool.close()
    fixes = [r for r in result.files if isinstance(r, FixResult)]
    if any(r.helpers for r in fixes):  # apply: the helper modules its rewrites call
        from kmigrate.run.helper_files import helper_module_changes

        added = helper_module_changes(fixes, jobs)
        result.files = sorted([*fixes, *added], key=lambda r: r.path)
    return result


def _freeze_at_exit() -> None:
    """Have the interpreter's last collections, when the process ends, skip what is
    alive by then: they look at every object (for a scan of the generated corpus, a
    quarter of the 40 ms the process takes to end) to find cycles, and nothing a run
    leaves behind needs one collected or finalised at exit (its results are plain
    data, its output written, its workers ended). Registered once per process; worker
    processes never run it (they end without ``atexit``)."""
    if not _EXIT_HOOK:
        atexit.register(gc.freeze)
        _EXIT_HOOK.append(True)


_EXIT_HOOK: list[bool] = []


def _run_jobs(
    jobs: Sequence[Job],
    rule_ids: tuple[str, ...],
    pool: _Pool,
    progress: Progress | None,
    cache: ResultCache | None,
    counted: Set[str] = frozenset(),
    spill: Spill | None = None,
) -> RunResult:
    """:func:`run_jobs` of plain jobs, in ``pool`` when it is worth it (``counted``,
    ``spill``: see :class:`_Collected`)."""
    collected = _Collected(progress, counted, spill)
    pending: list[Job] = []
    try:
        if cache is not None:
            cache.prepare()
        for job in jobs:
            cached = _cached_report(job, rule_ids, cache) if cache is not None else None
            if cached is None:
                pending.append(job)
                continue
            cached.path = job.display
            collected.add(cached)
        if pool.worth_it(len(pending)):
            pool.run(pending, rule_ids, collected, cache)
        else:
            for job in pending:
                collected.add(_trimmed_result(job, rule_ids, cache))
    finally:
        collected.close()
    reports = sorted(collected.reports, key=lambda r: r.path)
    return RunResult(reports, rule_ids)


def _run_in_two_phases(
    jobs: Sequence[Job],
    pending: PendingProject,
    rule_ids: tuple[str, ...],
    pool: _Pool,
    progress: Progress | None,
    cache: ResultCache | None,
) -> RunResult:
    """Deferred jobs first, on their own; then the project is resolved and the rest run
    with its facts, along with the deferred files whose facts the project changes
    (in the same processes: they are started once)."""
    # the reports are gathered through both phases and the resolution: their findings
    # and text wait on disk (80 MB at 10k files), read back when the report needs them
    spill = open_spill()
    try:
        return _two_phases(jobs, pending, rule_ids, pool, progress, cache, spill)
    except BaseException:  # an error or an interrupt: no report will read the spill
        if spill is not None:
            spill.close()
        raise


def _two_phases(
    jobs: Sequence[Job],
    pending: PendingProject,
    rule_ids: tuple[str, ...],
    pool: _Pool,
    progress: Progress | None,
    cache: ResultCache | None,
    spill: Spill | None,
) -> RunResult:
    """:func:`_run_in_two_phases`, the reports' findings and text moved to ``spill``."""
    deferred = [j for j in jobs if j.deferred]
    give_back_freed_memory()  # the bytes read for planning
    if pending.guess is not None:
        _FACTS_GUESS.append(pending.guess)
    try:
        # the notebooks' entries, which resolution needs, made by the workers meanwhile
        notebooks = pool.submit_first(deferred, rule_ids, pending.notebooks)
        first = _run_jobs(deferred, rule_ids, pool, progress, None, spill=spill)
        # Idle through the resolution, the workers would hold their memory while the
        # parent's peaks (at 10k files: ~240 MB of the tree's ~700 MB peak); the second
        # phase forks fresh ones (a few ms each) where it has enough files.
        pool.close()
    finally:
        _FACTS_GUESS.clear()
    by_path = {r.path: r for r in first.files}
    done = [(job, by_path[job.display]) for job in jobs if job.deferred]
    facts = pending.finish(done, {path: made.result() for path, made in notebooks.items()})
    kept: list[FileReport] = []
    rest: list[Job] = []
    given: dict[str, ModuleFacts] = {}
    if cache is not None:
        cache.prepare()
    # Each kept report is looked at before the next job's facts are asked for: asking
    # for every job's facts first (to let the resolution go before this loop) made a
    # few messages of the 10k tree differ, and differ from run to run (not understood).
    for job in jobs:
        final = replace(job, facts=facts.get(_index_key(job.path)), deferred=False, shared_guess=())
        if final.facts is not None:
            given[_index_key(job.path)] = final.facts
        report = by_path.get(job.display) if job.deferred else None
        if report is not None and _same_outcome(report, final.facts):
            report.own_facts = report.index_entry = report.own_local = None
            data = pending.bytes_of(job.path) if cache is not None else None
            if cache is not None and data is not None and _may_hold_tensorflow(data, final):
                store_report(cache, cache.entry_key(final, data), report)
            pack_findings(report)  # decoded when the project's notes changed its messages
            if spill is not None:
                spill_report(report, spill)  # packed again: spilled again
            kept.append(report)
            continue
        data = pending.bytes_of(job.path) if report is None else None
        if data is not None and not _may_hold_tensorflow(data, final):
            # no TensorFlow in it, nor reached through the project: the pre-filter's
            # empty report, made here (the bytes are at hand) rather than in a worker
            kept.append(run_job(final, rule_ids, data))
            if progress:
                progress(1)
        else:
            rest.append(final)
    # what the first phase made (reports with their entries and local facts, the
    # resolution) is not read again: not held through the second
    counted = frozenset(by_path)
    pending.release(given)
    del first, by_path, done, facts
    give_back_freed_memory()  # the first phase's entries and the resolution's working
    second = _run_jobs(rest, rule_ids, pool, progress, cache, counted, spill)
    reports = sorted([*kept, *second.files], key=lambda r: r.path)
    return RunResult(reports, rule_ids)


def _same_outcome(report: FileReport, facts: ModuleFacts | None) -> bool:
    """Whether analysing with the project's ``facts`` gives what the file's own gave;
    when only the notes differ, the report is made to give it here (notes only end
    some findings' messages, after the analysis)."""
    own = report.own_facts
    if facts is None or own is None:  # not indexed, or not analysed (KM901...)
        return True
    # a finding on a function the project replaces lost its fix, and its message says
    # which module replaces it: the same only if both sides say the same
    if own.patched != facts.patched:
        before, after = dict(own.patched), dict(facts.patched)
        if any(before.get(f.symbol) != after.get(f.symbol) for f in peek_findings(report)):
            return False
    # Of the file names shared with other modules, only those a rule asked about count.
    asked = report.shared_path_reads
    if _asked_only(own, asked) != _asked_only(facts, asked):
        return False
    if own.notes != facts.notes:
        from kmigrate.engine.report_findings import replace_project_notes

        replace_project_notes(report.findings, own.notes, facts.notes)
        report.digest = None  # its text holds the old messages
    return True


def _asked_only(facts: ModuleFacts, asked: tuple[str, ...]) -> ModuleFacts:
    shared = dict(facts.shared_paths)
    return replace(
        facts,
        patched=(),
        notes=(),
        shared_paths=tuple((name, shared.get(name, "")) for name in asked),
    )


def _index_key(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


class _Pool:
    """The worker processes of one run, started when first worth it and kept for its
    later phases: a cold scan's second phase then costs no new start-up (a fork per
    worker, and the wait for them to end), and runs in parallel however few its files."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor: Any = None

    def worth_it(self, count: int) -> bool:
        """Whether ``count`` jobs go to the workers: any, once they are started."""
        if self._executor is not None:
            return count > 0
        return self.workers > 1 and count >= 8

    def run(
        self,
        jobs: list[Job],
        rule_ids: tuple[str, ...],
        collected: _Collected,
        cache: ResultCache | None,
    ) -> None:
        # Largest files first, in small chunks: no worker is left with a big file at the end.
        jobs = sorted(jobs, key=_file_size, reverse=True)
        if self._executor is None:
            self._executor = self._start(rule_ids, len(jobs))
        chunk = max(1, min(16, len(jobs) // (self.workers * 8)))
        count = len(jobs)
        for report in self._executor.map(
            _trimmed_result, jobs, [rule_ids] * count, [cache] * count, chunksize=chunk
        ):
            collected.add(report)

    def submit_first(
        self, jobs: list[Job], rule_ids: tuple[str, ...], notebooks: Sequence[tuple[Path, str]]
    ) -> dict[Path, Any]:
        """Futures of the ``notebooks``' (path, package) index entries, asked of the
        workers ahead of ``jobs`` (when these are worth starting them for)."""
        from kmigrate.project.notebook_facts import made_entry

        if not notebooks or not self.worth_it(len(jobs)):
            return {}
        if self._executor is None:
            self._executor = self._start(rule_ids, len(jobs))
        return {path: self._executor.submit(made_entry, str(path)) for path, _ in notebooks}

    def _start(self, rule_ids: tuple[str, ...], count: int) -> Any:
        import multiprocessing
        import sys
        from concurrent.futures import ProcessPoolExecutor

        context = None
        if sys.platform.startswith("linux"):
            # fork: workers inherit the imported rules and the built RuleSet instead of
            # importing them again; frozen objects keep the shared pages shared.
            context = multiprocessing.get_context("fork")
            ruleset_for(rule_ids)
            gc.freeze()
        return ProcessPoolExecutor(max_workers=min(self.workers, count), mp_context=context)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None


# After a file this large, a worker hands the memory its analysis freed back to the
# system (glibc keeps it otherwise, and a worker's resident size would stay at its largest
# file's): at 10k files the cold scan's processes peaked at 508 MB together without,
# 490 MB with (535 of the 10,015 files are this large; a trim costs microseconds).
TRIM_AFTER_BYTES = 32 * 1024


def _trimmed_result(
    job: Job, rule_ids: tuple[str, ...], cache: ResultCache | None
) -> FileReport | FixResult:
    """:func:`run_cached_job`; a scan's report trimmed to what reports read
    (:func:`~kmigrate.run.report_codec.trim_for_reports`) in the worker, so that the parent
    unpickles no edit plans, and the result is the same whether it came from the cache or
    not; with its findings' counts and JSON text
    (:func:`~kmigrate.run.report_codec.digest_findings`), which the parent would otherwise
    work out alone, one file after the other, for the report."""
    report = run_cached_job(job, rule_ids, cache)
    if not job.fix:
        trim_for_reports(report)
        digest_findings(report)  # the report's counts and text, made here in parallel
    if _file_size(job) >= TRIM_AFTER_BYTES:
        give_back_freed_memory()
    return report


def _file_size(job: Job) -> int:
    try:
        return os.stat(job.path).st_size
    except OSError:
        return 0


def select_ids(select: Iterable[str], ignore: Iterable[str]) -> tuple[str, ...]:
    from kmigrate.rules.registry import select_rules

    return tuple(r.id for r in select_rules(list(select) or None, list(ignore) or None))


def scan_text(
    text: str, select: Sequence[str] | None = None, path: str = "<memory>"
) -> list[Finding]:
    """Findings for module ``text`` with the selected rules; for tests and tools."""
    from kmigrate.engine.analyze import analyze_module_text, fingerprint_findings
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    ruleset = ruleset_for(select_ids(select or (), ()))
    analysis = analyze_module_text(path, text, ruleset, CONTEXT_SPEC)
    findings = analysis.findings
    fingerprint_findings(findings)
    from kmigrate.rules.km9_internal.unused_suppression import UnusedSuppression

    if select and analysis.suppressions is not None and UnusedSuppression.id in ruleset.ids:
        unused = analysis.suppressions.unused()
        findings += UnusedSuppression.findings_for(path, text, unused, ruleset.ids)
    return sorted(findings, key=Finding.sort_key)
