"""One file's job: read, pre-filter, decode, analyse (and for ``apply``, fix and check
again), in a worker process.

The analysis (``kmigrate.engine.analyze`` and what it imports) is imported by the
functions that analyse a file, not at the top: a warm re-scan or ``check`` takes every
result from the cache and never needs it (docs/performance.md, start-up).
"""

from __future__ import annotations

import ast
import gc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kmigrate.engine.model import RULE_CRASHED, UNPARSEABLE, Finding
from kmigrate.engine.run_data import FileReport, FixResult, Job
from kmigrate.engine.sources import SourceError, decode_source
from kmigrate.project.backend_markers import mentions_backend

if TYPE_CHECKING:
    from kmigrate.engine.analyze import FileAnalysis
    from kmigrate.engine.module_facts import LocalFactsFrom, ModuleFacts
    from kmigrate.engine.rule_walk import RuleSet
    from kmigrate.engine.tree_index import TreeIndex
    from kmigrate.project.facts_guess import FactsGuess

Progress = Callable[[int], None]


_RULESETS: dict[tuple[str, ...], RuleSet] = {}


def ruleset_for(rule_ids: Sequence[str]) -> RuleSet:
    """One RuleSet per selection per process (workers build their own once)."""
    key = tuple(rule_ids)
    if key not in _RULESETS:
        from kmigrate.engine.rule_walk import RuleSet  # analysis only (module docstring)
        from kmigrate.rules.registry import all_rules

        wanted = set(key)
        chosen = [r for r in all_rules() if r.id in wanted]
        _RULESETS[key] = RuleSet(chosen, claimants=all_rules())  # claims of every rule
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
    tests/engine/test_engine.py checks that no tree is caught in one.
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
        from kmigrate.report.footprint import (
            apply_effects,
            count_tf_statements,
            leftovers,
            tensorflow_uses,
        )

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
        fixes = [f for f in report.findings if f.fixable]
        effects = apply_effects(fixes, analysis.tree, unit.text, analysis.tree_index)
        report.tf_leftovers = leftovers(uses, fixed, effects)
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
        job.display, text, unit.ruleset, CONTEXT_SPEC, job.package, unit.facts, job.import_layout
    )
    findings = outcome.remaining
    result.error = outcome.error
    result.fixed = outcome.fixed
    result.long_lines = tuple(outcome.long_lines)
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
            result.helpers = outcome.helpers
        except NotebookError as error:
            result.error = f"cannot put the rewrite back into the notebook: {error}"
        except UnicodeError as error:
            result.error = f"the rewrite cannot be written as {source.encoding}: {error}"
    if result.error is not None:  # left untouched: report the file as it is
        result.helpers = []
        if "left untouched" not in result.error:
            result.error += "; the file is left untouched"
        result.fixed = 0
        findings = unit.analyze().findings
    return findings


def _reaches_framework(job: Job) -> bool:
    return job.facts is not None and job.facts.reaches_framework
