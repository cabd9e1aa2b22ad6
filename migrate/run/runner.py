"""Running rules over files: discovery, decoding, pre-filter, analysis, fixing.

Work is per file and independent, so it spreads over processes (``--jobs``); the
results are sorted, so the output does not depend on the number of processes.

The analysis (``kmigrate.engine.analyze`` and what it imports) is imported by the
functions that analyse a file, not at the top: a warm re-scan or ``check`` takes every
result from the cache and never needs it (docs/performance.md, start-up).
"""

from __future__ import annotations

import ast
import atexit
import fnmatch
import gc
import hashlib
import os
import warnings
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.engine.model import RULE_CRASHED, UNPARSEABLE, Finding
from kmigrate.engine.run_data import FileReport, FixResult, Job, RunResult, package_of
from kmigrate.engine.sources import SourceError, decode_source, read_bytes
from kmigrate.project.backend_markers import mentions_backend
from kmigrate.project.discover import discover, display_path, printable_name
from kmigrate.run.report_codec import digest_findings, load_report, store_report, trim_for_reports

if TYPE_CHECKING:
    from kmigrate.engine.analyze import FileAnalysis, RuleSet
    from kmigrate.engine.project_index import LocalFactsFrom, ModuleFacts
    from kmigrate.engine.tree_index import TreeIndex
    from kmigrate.project.config import Config
    from kmigrate.project.facts_guess import FactsGuess
    from kmigrate.project.index_pass import PendingProject
    from kmigrate.store.cache import ResultCache

Progress = Callable[[int], None]


_RULESETS: dict[tuple[str, ...], RuleSet] = {}


def ruleset_for(rule_ids: Sequence[str]) -> RuleSet:
    """One RuleSet per selection per process (workers build their own once)."""
    key = tuple(rule_ids)
    if key not in _RULESETS:
        from kmigrate.engine.analyze import RuleSet  # analysis only (module docstring)
        from kmigrate.rules.registry import all_rules

        wanted = set(key)
        _RULESETS[key] = RuleSet([r for r in all_rules() if r.id in wanted])
    return _RULESETS[key]


def _file_finding(display: str, message: str) -> Finding:
    from kmigrate.engine.analyze import unparseable_finding  # analysis only (module docstring)

    return unparseable_finding(display, message)


def run_job(
    job: Job, rule_ids: tuple[str, ...], data: bytes | None = None
) -> FileReport | FixResult:
    """Scan one file or notebook (a :class:`FileReport`), or fix it when ``job.fix`` (a
    :class:`FixResult`). Never raises for bad input.

    The cyclic garbage collector is paused for the file: analysis allocates millions
    of short-lived, cycle-free objects (tree nodes, sites, findings), which reference
    counting frees, and the collector's passes over them cost a fifth of the scan.
    The few small cycles left (helper closures of ``ast.literal_eval``, tracebacks
    of crashed rules) are collected when the collector next runs, after the file;
    tests/test_engine.py checks that no tree is caught in one.
    """
    if not gc.isenabled():
        return _run_job(job, rule_ids, data)
    gc.disable()
    try:
        return _run_job(job, rule_ids, data)
    finally:
        gc.enable()


def _run_job(job: Job, rule_ids: tuple[str, ...], data: bytes | None) -> FileReport | FixResult:
    """:func:`run_job` with the collector paused: load the file, then run the scan unit
    or the fix unit on it.

    ``data``: the file's bytes when the caller already read them (the result cache
    keys the result by exactly these bytes).
    """
    loaded = _load(job, rule_ids, data)
    if isinstance(loaded, FileReport):  # final before any analysis: skipped, or KM901
        return FixResult(loaded.path, loaded.findings) if job.fix else loaded
    return _fix_unit(loaded) if job.fix else _scan_unit(loaded)


@dataclass
class _Unit:
    """One file, read and decoded, ready for the scan unit or the fix unit."""

    job: Job
    data: bytes
    source: Any  # sources.Source: the decoded text and how to encode it back
    text: str  # the module text (a notebook's code cells joined)
    notebook: Any  # notebook.Notebook, or None for a .py file
    ruleset: RuleSet
    _analysis: FileAnalysis | None = field(default=None, repr=False)
    own_local: LocalFactsFrom | None = None  # a deferred job's, from its guess's index
    # the text's tree and its index when parsed already (a notebook read for its entry)
    tree: ast.Module | None = field(default=None, repr=False)
    tree_index: TreeIndex | None = field(default=None, repr=False)

    @property
    def facts(self) -> ModuleFacts | None:
        return self.job.facts

    def analyze(self) -> FileAnalysis:
        """The analysis of the text as it is, worked out once (a fix that is refused
        reports the untouched file, whose analysis the crash check already made)."""
        if self._analysis is None:
            from kmigrate.engine.analyze import analyze_module_text
            from kmigrate.rules.context_spec import CONTEXT_SPEC

            job = self.job
            guessed = _Guessed(self.facts, self.tree, self.tree_index)
            if job.deferred and _FACTS_GUESS:
                guessed = _guessed_facts(self.text, job, _FACTS_GUESS[0])
            analysis = analyze_module_text(
                job.display,
                self.text,
                self.ruleset,
                CONTEXT_SPEC,
                job.package,
                guessed.facts,
                shared_guess=job.shared_guess,
                tree=guessed.tree,
                tree_index=guessed.tree_index,
            )
            if guessed.entry is not None:  # analysed with a guess: as if with its own facts
                analysis.own_facts, analysis.index_entry = guessed.facts, guessed.entry
                self.own_local = guessed.local
            self._analysis = analysis
        return self._analysis

    def finish(self, findings: list[Finding]) -> list[Finding]:
        """The findings as the file's result holds them: on a notebook's cells (with
        the cells' own findings), without the codes ``per-file-ignores`` drops."""
        job = self.job
        if self.notebook is not None:
            from kmigrate.engine.analyze import fingerprint_findings

            findings = self.notebook.map_findings(findings)
            cell_findings = self.notebook.cell_findings(job.display)
            fingerprint_findings(cell_findings)
            findings += cell_findings
        return [f for f in findings if not f.rule.startswith(job.ignored_codes or ("\0",))]


# While the deferred files of a project are analysed: its FactsGuess (workers forked
# then inherit it; elsewhere they analyse each file with its own facts alone).
_FACTS_GUESS: list[FactsGuess] = []


@dataclass
class _Guessed:
    """What a deferred job is analysed with: the guess of its project facts, its tree
    and that tree's index, its index entry, and the local facts its guess's index made
    (see ``LocalFactsFrom``); None for what cannot be made (unparseable: its analysis
    then says why)."""

    facts: ModuleFacts | None = None
    tree: ast.Module | None = None
    tree_index: TreeIndex | None = None
    entry: dict | None = None
    local: LocalFactsFrom | None = None


def _guessed_facts(text: str, job: Job, guess: FactsGuess) -> _Guessed:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # as the analysis parses
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return _Guessed()
    from kmigrate.engine.tree_index import TreeIndex  # analysis only (module docstring)

    index = TreeIndex(tree)
    try:
        facts, entry, local = guess.facts(tree, job.path, job.package, index)
    except RecursionError:
        return _Guessed(tree=tree, tree_index=index)
    if job.shared_guess:
        facts = replace(facts, shared_paths=job.shared_guess)
    return _Guessed(facts, tree, index, entry, local)


def _load(job: Job, rule_ids: tuple[str, ...], data: bytes | None) -> _Unit | FileReport:
    """Read, pre-filter, size-check and decode the file (and open a notebook): a
    :class:`_Unit`, or the file's final report when there is nothing to analyse
    (empty) or the file cannot be used (a KM901 finding says why)."""
    from kmigrate.engine.sources import (
        MAX_FILE_MB,
        FileTooLargeError,
        read_bytes,
        size_limit,
    )
    from kmigrate.rules.context_spec import SOURCE_MARKERS

    def unusable(message: str) -> FileReport:
        finding = _file_finding(job.display, message + "; the file is left untouched")
        return FileReport(job.display, [finding], parsed=False)

    limit = size_limit("KMIGRATE_MAX_FILE_MB", MAX_FILE_MB)
    try:
        if data is None:
            data = read_bytes(job.path, limit)  # a file above the limit is never read
        elif len(data) > limit:
            raise FileTooLargeError(len(data), limit)
    except FileTooLargeError as error:
        return unusable(f"not analysed: {error} (generated code?; KMIGRATE_MAX_FILE_MB raises it)")
    except SourceError as error:
        return unusable(f"cannot read this file ({error})")
    if not _reaches_framework(job) and not any(marker in data for marker in SOURCE_MARKERS):
        # cannot contain TensorFlow or Keras code
        return FileReport(job.display, mentions_backend=mentions_backend(data))
    try:
        source = decode_source(data)
    except SourceError as error:
        return unusable(f"cannot decode this file: {error}")
    notebook = None
    text = source.text
    parsed = None
    if job.path.endswith(".ipynb"):
        from kmigrate.engine.notebook import NotebookError, load_notebook
        from kmigrate.project.notebook_facts import take_loaded

        parsed = take_loaded(text)  # loaded and parsed for its index entry already
        try:
            notebook = parsed.notebook if parsed is not None else load_notebook(text)
        except NotebookError as error:
            return unusable(f"cannot read this notebook: {error}")
        if notebook is None:  # not a Python notebook
            return FileReport(job.display, mentions_backend=mentions_backend(data))
        text = notebook.module_text
    unit = _Unit(job, data, source, text, notebook, ruleset_for(rule_ids))
    if parsed is not None:
        unit.tree, unit.tree_index = parsed.tree, parsed.tree_index
    return unit


def _scan_unit(unit: _Unit) -> FileReport:
    """``scan`` on one file: findings, plus what the report needs from the tree."""
    analysis = unit.analyze()
    too_big = _above_rewrite_limit(unit)
    if too_big:  # apply will not touch it: nothing in it is fixable
        for finding in analysis.findings:
            if finding.fixable:
                finding.fix, finding.fixed_later = None, False
                finding.message += f" (not rewritten: this file's {too_big})"
    report = FileReport(unit.job.display, uses_tensorflow=True, parsed=analysis.parsed)
    report.mentions_backend = mentions_backend(unit.data)  # for the report's backend pins
    if analysis.tree is not None:
        from kmigrate.report.footprint import count_tf_statements, leftovers, tensorflow_uses

        report.tf_statements = count_tf_statements(analysis.tree, analysis.tree_index)
    if unit.job.deferred:
        report.own_facts, report.index_entry = analysis.own_facts, analysis.index_entry
        report.own_local = unit.own_local
        report.shared_path_reads = analysis.shared_path_reads
    report.findings = unit.finish(analysis.findings)
    if analysis.tree is not None and unit.notebook is None:  # notebooks: lines per cell
        # worked out here, on the tree at hand: a warm re-scan reads it from the cache
        uses = tensorflow_uses(analysis.tree, unit.text, analysis.tree_index)
        fixed = {(f.span.line, f.span.column) for f in report.findings if f.fixable}
        report.tf_leftovers = leftovers(uses, fixed)
    if analysis.suppressions is not None and unit.notebook is None:
        report.unused_suppressions = analysis.suppressions.unused()
    return report


def _above_rewrite_limit(unit: _Unit) -> str:
    """Why ``apply`` leaves the file as it is whatever its findings ("" if it does not):
    more code than the rewrite limit. What the rewrite parses is measured: a notebook's
    code cells, not its outputs (plots make a few pages of code weigh megabytes)."""
    from kmigrate.engine.sources import MAX_REWRITE_MB, megabytes, size_limit

    limit = size_limit("KMIGRATE_MAX_REWRITE_MB", MAX_REWRITE_MB)
    size = len(unit.data) if unit.notebook is None else len(unit.text.encode("utf-8"))
    if size <= limit:
        return ""
    return (
        f"{megabytes(size)} of code is above the {megabytes(limit)} rewrite limit "
        "(generated code?; KMIGRATE_MAX_REWRITE_MB raises it)"
    )


def _fix_unit(unit: _Unit) -> FixResult:
    """``apply`` on one file: the rewrite goes into the result only when it parses,
    re-scans without KM901 or a new KM902, maps back onto the notebook's cells and
    encodes in the file's encoding; otherwise ``error`` says why and the findings are
    those of the untouched file. A file above the rewrite limit is only analysed."""
    result = FixResult(unit.job.display)
    too_big = _above_rewrite_limit(unit)
    if too_big:
        findings = unit.analyze().findings
        if any(f.fix is not None for f in findings):
            result.error = f"not rewritten: {too_big}; the file is left untouched"
    else:
        findings = _rewrite(unit, result)
    result.findings = unit.finish(findings)
    return result


def _rewrite(unit: _Unit, result: FixResult) -> list[Finding]:
    """Fix the file into ``result`` (text, count, or the error that refuses it); the
    findings left: of the rewrite, or of the untouched file when refused."""
    from kmigrate.engine.apply import fix_module_text
    from kmigrate.engine.notebook import NotebookError
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    job, text, notebook, source = unit.job, unit.text, unit.notebook, unit.source
    outcome = fix_module_text(
        job.display, text, unit.ruleset, CONTEXT_SPEC, job.package, unit.facts
    )
    findings = outcome.remaining
    result.error = outcome.error
    result.fixed = outcome.fixed
    new_text = outcome.text if outcome.error is None and outcome.text != text else None
    if new_text and text.endswith(("\n", "\r")) and not new_text.endswith(("\n", "\r")):
        new_text += "\r\n" if text.endswith("\r\n") else text[-1]  # LibCST drops a last lone CR
    if new_text is not None and any(f.rule == UNPARSEABLE for f in findings):
        result.error = f"the rewritten code did not re-scan cleanly ({UNPARSEABLE})"
    elif new_text is not None and any(f.rule == RULE_CRASHED for f in findings):
        crashes = sum(f.rule == RULE_CRASHED for f in unit.analyze().findings)
        if sum(f.rule == RULE_CRASHED for f in findings) > crashes:
            result.error = f"a rule crashed on the rewritten code ({RULE_CRASHED})"
    if new_text is not None and result.error is None:
        try:
            if notebook is not None:
                new_text = notebook.rebuild(new_text)
            source.encode(new_text)
            result.old_text, result.new_text = source.text, new_text
        except NotebookError as error:
            result.error = f"cannot put the rewrite back into the notebook: {error}"
        except UnicodeError as error:
            result.error = f"the rewrite cannot be written as {source.encoding}: {error}"
    if result.error is not None:  # left untouched: report the file as it is
        if "left untouched" not in result.error:
            result.error += "; the file is left untouched"
        result.fixed = 0
        findings = unit.analyze().findings
    return findings


def _ignored_codes(display: str, config: Config) -> tuple[str, ...]:
    codes: list[str] = []
    for pattern, ids in config.per_file_ignores.items():
        if fnmatch.fnmatch(display, pattern):
            codes.extend(i.upper() for i in ids)
    return tuple(codes)


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4): shard K of N, 1 <= K <= N. Raises ValueError otherwise."""
    k_text, sep, n_text = text.partition("/")
    if not sep:
        raise ValueError(f"--shard takes K/N (like 2/4), not {text!r}")
    k, n = int(k_text), int(n_text)
    if not 1 <= k <= n:
        raise ValueError(f"--shard {text}: K must be between 1 and N")
    return k, n


def in_shard(display: str, shard: tuple[int, int] | None) -> bool:
    """Whether the file reported as ``display`` belongs to shard K of N.

    A stable hash of the relative path (not Python's salted ``hash``), so every
    machine of a CI matrix agrees and a file stays in its shard as others come and go.
    """
    if shard is None or shard[1] == 1:
        return True
    k, n = shard
    digest = hashlib.blake2b(display.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % n == k - 1


def plan_jobs(
    paths: Sequence[Path],
    config: Config,
    fix: bool = False,
    shard: tuple[int, int] | None = None,
    index: bool = True,
    index_cache: bool = True,
    workers: int = 1,
) -> list[Job]:
    """One job per discovered file (only shard K of N's files when ``shard`` is given),
    each with what the project index decided about it (``index``; its entries cached
    under the project's cache folder unless ``index_cache`` is off)."""
    jobs = []
    walked = []  # every file found, also outside the shard: the index may reuse the walk
    packages: dict[Path, str] = {}
    folders: dict[Path, str] = {}
    for path in discover(paths, config.root, config.exclude):
        walked.append(path)
        display = _display_path(path, config.root, folders)
        if not in_shard(display, shard):
            continue
        jobs.append(
            Job(
                str(path),
                display,
                package_of(path, packages),
                _ignored_codes(display, config),
                fix,
            )
        )
    if index and jobs:
        from kmigrate.project.index_pass import attach_facts

        jobs = attach_facts(jobs, paths, config, index_cache, workers, walked)
    return jobs


def filter_jobs(jobs: Sequence[Job], keep: Callable[[Job], bool]) -> Sequence[Job]:
    """The jobs ``keep`` accepts, still attached to their pending project index (a
    plain list comprehension would drop it, and deferred jobs would lose their facts)."""
    kept = [job for job in jobs if keep(job)]
    pending = getattr(jobs, "pending", None)
    if pending is None:
        return kept
    from kmigrate.project.index_pass import PlannedJobs

    planned = PlannedJobs(kept)
    planned.pending = pending
    return planned


def _display_path(path: Path, root: Path, folders: dict[Path, str]) -> str:
    """:func:`display_path`, working each folder out once (``folders`` remembers them):
    a file is shown as its folder is, with its name appended."""
    folder = folders.get(path.parent)
    if folder is None:
        shown = display_path(path.parent, root)
        folder = folders[path.parent] = "" if shown == "." else shown.rstrip("/") + "/"
    return folder + printable_name(path.name)


def default_jobs() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def _reaches_framework(job: Job) -> bool:
    return job.facts is not None and job.facts.reaches_framework


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

    def __init__(self, progress: Progress | None, counted: Set[str] = frozenset()) -> None:
        """``counted``: paths whose progress was counted already (analysed again)."""
        self.reports: list[FileReport | FixResult] = []
        self.progress = progress
        self.counted = counted
        self.owns_freeze = gc.get_freeze_count() == 0

    def add(self, report: FileReport | FixResult) -> None:
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
            return _run_in_two_phases(jobs, pending, rule_ids, pool, progress, cache)
        return _run_jobs(jobs, rule_ids, pool, progress, cache)
    finally:
        pool.close()


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
) -> RunResult:
    """:func:`run_jobs` of plain jobs, in ``pool`` when it is worth it (``counted``: see
    :class:`_Collected`)."""
    collected = _Collected(progress, counted)
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
    deferred = [j for j in jobs if j.deferred]
    if pending.guess is not None:
        _FACTS_GUESS.append(pending.guess)
    try:
        # the notebooks' entries, which resolution needs, made by the workers meanwhile
        notebooks = pool.submit_first(deferred, rule_ids, pending.notebooks)
        first = _run_jobs(deferred, rule_ids, pool, progress, None)
    finally:
        _FACTS_GUESS.clear()
    by_path = {r.path: r for r in first.files}
    done = [(job, by_path[job.display]) for job in jobs if job.deferred]
    facts = pending.finish(done, {path: made.result() for path, made in notebooks.items()})
    kept: list[FileReport] = []
    rest: list[Job] = []
    if cache is not None:
        cache.prepare()
    for job in jobs:
        final = replace(job, facts=facts.get(_index_key(job.path)), deferred=False, shared_guess=())
        report = by_path.get(job.display) if job.deferred else None
        data = pending.bytes_of(job)
        if report is not None and _same_outcome(report, final.facts):
            report.own_facts = report.index_entry = report.own_local = None
            if cache is not None and data is not None and _may_hold_tensorflow(data, final):
                store_report(cache, cache.entry_key(final, data), report)
            kept.append(report)
        elif report is None and data is not None and not _may_hold_tensorflow(data, final):
            # no TensorFlow in it, nor reached through the project: the pre-filter's
            # empty report, made here (the bytes are at hand) rather than in a worker
            kept.append(run_job(final, rule_ids, data))
            if progress:
                progress(1)
        else:
            rest.append(final)
    second = _run_jobs(rest, rule_ids, pool, progress, cache, by_path.keys())
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
        if any(before.get(f.symbol) != after.get(f.symbol) for f in report.findings):
            return False
    # Of the file names shared with other modules, only those a rule asked about count.
    asked = report.shared_path_reads
    if _asked_only(own, asked) != _asked_only(facts, asked):
        return False
    if own.notes != facts.notes:
        from kmigrate.engine.analyze import replace_project_notes

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
