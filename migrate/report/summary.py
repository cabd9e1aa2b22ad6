"""Everything the reports say, computed once from a run: counts, scores, effort, pins.

Every format renders a :class:`ReportData`; none recomputes a number, so the table,
the JSON, the Markdown and the HTML cannot disagree. Orders are fixed here (by path,
by rule id, by effort) so reports of the same repository are byte-identical.

The portability score (docs/report.md):

    score = 100 * (1 - blocked / framework_statements)

``framework_statements`` counts the statements that import or use TensorFlow/Keras
(:mod:`kmigrate.report.footprint`); ``blocked`` counts the distinct lines holding a
finding that stops the code from running on every backend. ``score_now`` counts every
finding except ``info``; ``score`` (the headline, "after apply") counts only the
manual ones, since ``kmigrate apply`` rewrites the fixable ones exactly.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kmigrate.engine.model import RULE_CRASHED, Context, Finding, Severity
from kmigrate.engine.run_data import FindingCounts
from kmigrate.rules.effort import minutes_for

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from kmigrate.engine.run_data import BackendPin, FileReport, RunResult
    from kmigrate.report.backend_status import BackendStatus

TOP_FILES = 10

# What the score measures, in every format's label: a "portability" of 95% beside
# "183 files still need TensorFlow" read as a contradiction.
SCORE_LABEL = "TF/Keras statements without a blocking finding"


def is_manual(finding: Finding) -> bool:
    """A finding a person has to act on: not rewritten by `apply`, not a mere note."""
    return not finding.fixable and finding.severity is not Severity.INFO


def remedy(finding: Finding) -> str:
    """What a finding asks for, as every format labels it: ``fix`` (`apply` does it),
    ``manual`` (a person does), ``note`` (nothing of its own: an import kept until its
    uses are rewritten, TensorFlow outside model code), the same split the counts use."""
    if finding.fixable:
        return "fix"
    return "manual" if is_manual(finding) else "note"


_REMEDY_TEXT = {"fix": "fixable by `kmigrate apply`", "manual": "manual", "note": "note"}


def remedy_text(finding: Finding) -> str:
    """:func:`remedy` as a phrase for annotations (GitHub, GitLab)."""
    return _REMEDY_TEXT[remedy(finding)]


def effort_of(finding: Finding, rule: type | None = None) -> float:
    """Minutes of a person's time (0 for what `kmigrate apply` fixes); see rules/effort.py."""
    return _kind_effort(finding.rule, finding.context, finding.severity, finding.fixable, rule)


def _kind_effort(
    rule_id: str, context: Context, severity: Severity, fixable: bool, rule: object | None
) -> float:
    if fixable or severity is Severity.INFO:  # effort is a person's work: notes ask none
        return 0.0
    return minutes_for(rule_id, context.value, rule, severity.value)  # type: ignore[arg-type]


def score(blocked: int, statements: int | None) -> float | None:
    """Portability in percent (one decimal); None when the footprint is unknown."""
    if statements is None:
        return None
    statements = max(statements, blocked)
    if statements == 0:
        return 100.0
    return round(100.0 * (1.0 - blocked / statements), 1)


def folder_of(path: str) -> str:
    return posixpath.dirname(path) or "."


@dataclass
class Tally:
    """Counts shared by a file, a folder and the whole run."""

    findings: int = 0
    fixable: int = 0
    manual: int = 0
    effort_minutes: float = 0.0
    tf_statements: int | None = 0
    blocked_now: int = 0
    blocked_after_apply: int = 0

    @property
    def score(self) -> float | None:
        return score(self.blocked_after_apply, self.tf_statements)

    @property
    def score_now(self) -> float | None:
        return score(self.blocked_now, self.tf_statements)

    def add(self, other: Tally, footprint: bool = True) -> None:
        self.findings += other.findings
        self.fixable += other.fixable
        self.manual += other.manual
        self.effort_minutes += other.effort_minutes
        if not footprint:
            return
        if self.tf_statements is not None and other.tf_statements is not None:
            self.tf_statements += max(other.tf_statements, other.blocked_now)
        else:
            self.tf_statements = None
        self.blocked_now += other.blocked_now
        self.blocked_after_apply += other.blocked_after_apply


@dataclass
class FileStats(Tally):
    path: str = ""
    uses_tensorflow: bool = False
    parsed: bool = True
    # TensorFlow names the file still uses after `kmigrate apply`; None when unknown
    # (unparsed file, notebook)
    tf_leftovers: list[str] | None = None
    # the file's findings as the JSON report writes them, when its result carried them
    # (``FileReport.digest``, made by the result cache; in a cold scan maybe still on
    # disk, ``run.spill.SpilledText``: str() reads it); None: written from the findings
    findings_json: str | None = field(default=None, repr=False, compare=False)

    @property
    def tensorflow_free_after_apply(self) -> bool | None:
        """Whether no TensorFlow import is left once `apply` has run; None if unknown."""
        return None if self.tf_leftovers is None else not self.tf_leftovers

    def leftovers_text(self, shown: int = 3) -> str:
        """``yes``, ``no: K.int_shape, tf.shape``, ``n/a`` for the file tables."""
        if self.tf_leftovers is None:
            return "n/a"
        if not self.tf_leftovers:
            return "yes"
        more = f" +{len(self.tf_leftovers) - shown}" if len(self.tf_leftovers) > shown else ""
        return "no: " + ", ".join(self.tf_leftovers[:shown]) + more

    @property
    def folder(self) -> str:
        return folder_of(self.path)

    @property
    def portable(self) -> bool:
        """Nothing to migrate: no TF/Keras code, or none kmigrate finds a problem in."""
        return self.parsed and self.findings == 0


@dataclass
class FolderStats(Tally):
    folder: str = ""
    files: int = 0
    files_with_tensorflow: int = 0
    files_scored: int = 0  # parsed files with TF/Keras code


@dataclass
class RuleStats:
    rule: str
    name: str
    severity: str
    count: int = 0
    fixable: int = 0
    manual: int = 0
    effort_minutes: float = 0.0


@dataclass
class ReportData:
    files: list[FileStats]
    folders: list[FolderStats]
    rules: list[RuleStats]
    total: Tally
    by_context: dict[str, int]
    by_severity: dict[str, int]
    backend: BackendStatus | None = None
    rule_ids: tuple[str, ...] = ()
    top_files: list[FileStats] = field(default_factory=list)
    # the run the findings come from: they are sorted when first asked for (the JSON
    # report of a warm re-scan never asks: it joins each file's written findings)
    source: RunResult | None = field(default=None, repr=False, compare=False)

    @property
    def findings(self) -> list[Finding]:
        """Every finding, in report order (by path, cell, line, column, rule, message)."""
        known = self.__dict__.get("_findings")
        if known is None:
            known = self.__dict__["_findings"] = self.source.findings if self.source else []
        return known

    @property
    def incomplete(self) -> bool:
        """A rule crashed on some file (KM902): its findings there are missing."""
        return any(r.rule == RULE_CRASHED for r in self.rules)

    # -- file counts ---------------------------------------------------------
    @property
    def files_scanned(self) -> int:
        return len(self.files)

    @property
    def files_with_tensorflow(self) -> int:
        return sum(1 for f in self.files if f.uses_tensorflow)

    @property
    def files_with_findings(self) -> int:
        return sum(1 for f in self.files if f.findings)

    @property
    def files_portable(self) -> int:
        return sum(1 for f in self.files if f.portable)

    @property
    def files_unparsed(self) -> int:
        return sum(1 for f in self.files if not f.parsed)

    @property
    def files_needing_tensorflow(self) -> list[FileStats]:
        """Files that still import TensorFlow after `kmigrate apply`, by path."""
        return [f for f in self.files if f.tf_leftovers]

    @property
    def files_tensorflow_unknown(self) -> int:
        """Files whose TensorFlow after `apply` is unknown: notebooks, and files that do
        not parse or decode (one may import TensorFlow: it is never counted as free)."""
        return sum(
            1 for f in self.files if f.tf_leftovers is None and (f.uses_tensorflow or not f.parsed)
        )

    @property
    def files_tensorflow_free(self) -> int:
        """Files with TensorFlow/Keras code that import no TensorFlow after `apply`."""
        return sum(1 for f in self.files if f.uses_tensorflow and f.tf_leftovers == [])

    def tensorflow_headline(self, shown: int = 5) -> str:
        """One sentence every format shows: does the code still need TensorFlow after
        `kmigrate apply`, and for which names."""
        needing = self.files_needing_tensorflow
        unknown = self.files_tensorflow_unknown
        free = self.files_tensorflow_free
        sentence = (
            f"{free} of {self.files_with_tensorflow} files with TensorFlow/Keras code "
            "will be TensorFlow-free after `kmigrate apply`"
        )
        if unknown:
            sentence += f", {unknown} unknown (not parsed, notebooks)"
        if not needing:
            return sentence
        left = self.tensorflow_leftovers()
        names = ", ".join(
            f"`{name}` ({count} file{'s' if count > 1 else ''})"
            for name, count in list(left.items())[:shown]
        )
        more = f" and {len(left) - shown} more" if len(left) > shown else ""
        verb = "still needs" if len(needing) == 1 else "still need"
        return f"{sentence}; {len(needing)} {verb} it for {names}{more}"

    def tensorflow_leftovers(self) -> dict[str, int]:
        """Each TensorFlow name left after `apply` and in how many files, most files first."""
        counts: Counter[str] = Counter(n for f in self.files for n in f.tf_leftovers or ())
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    @property
    def fixable_share(self) -> float:
        """Share of findings `kmigrate apply` fixes, in percent (100 with no findings)."""
        if not self.total.findings:
            return 100.0
        return round(100.0 * self.total.fixable / self.total.findings, 1)

    def scored_folders(self) -> list[FolderStats]:
        return [f for f in self.folders if f.files_scored and f.score is not None]


def _rule_classes(rule_ids: set[str], known: Sequence[object] | None = None) -> dict[str, type]:
    """The rule (its class, or what the caller knows of it: ``known``, objects with a
    class's ``id``, ``name``, ``severity`` and ``effort_minutes``) of each id."""
    if known is not None:
        by_id = {getattr(rule, "id", None): rule for rule in known}
        return {rule_id: by_id[rule_id] for rule_id in rule_ids if rule_id in by_id}  # type: ignore[misc]
    try:
        from kmigrate.rules.registry import rule_by_id
    except ImportError:  # pragma: no cover - rules are part of the package
        return {}
    found = {}
    for rule_id in rule_ids:
        rule = rule_by_id(rule_id)
        if rule is not None:
            found[rule_id] = rule
    return found


def _footprint(report: FileReport, root: Path | None) -> int | None:
    """Framework statements of one file: from the engine when it says, else computed."""
    known = getattr(report, "tf_statements", None)
    if isinstance(known, int):
        return known
    if not report.uses_tensorflow:
        return 0
    if not report.parsed or root is None:
        return None
    from kmigrate.engine.sources import SourceError, decode_source
    from kmigrate.report.footprint import count_text

    for candidate in (root / report.path, Path(report.path)):
        try:
            data = candidate.read_bytes()
        except OSError:
            continue
        try:
            text = decode_source(data).text
        except SourceError:
            return None
        return count_text(text, report.path)
    return None


def count_findings(findings: Iterable[Finding]) -> FindingCounts:
    """``findings`` as the numbers need them: how many of each kind (rule, context,
    severity, fixable), and the distinct lines holding one that blocks the code now (all
    but ``info``) and after `apply` (the manual ones)."""
    kinds: dict[tuple[str, Context, Severity, bool], int] = {}
    blocking_lines: set[int] = set()
    manual_lines: set[int] = set()
    info = Severity.INFO
    for finding in findings:
        key = (finding.rule, finding.context, finding.severity, finding.fixable)
        kinds[key] = kinds.get(key, 0) + 1
        if finding.severity is not info:
            blocking_lines.add(finding.span.line)
            if not key[3]:
                manual_lines.add(finding.span.line)
    return FindingCounts(
        tuple((*key, count) for key, count in kinds.items()),
        len(blocking_lines),
        len(manual_lines),
    )


class _FindingCosts:
    """Effort and manual-ness of findings, worked out once per kind of finding.

    A large run has tens of thousands of findings but a few hundred kinds (rule,
    context, severity, fixable), and the numbers are counted by kind (:class:`FindingCounts`):
    efforts are multiples of a quarter minute (rules/effort.py), so adding one kind's
    effort ``n`` times and multiplying it by ``n`` give the same float.
    """

    def __init__(self, rules: dict[str, type]) -> None:
        self.rules = rules
        self._known: dict[tuple, tuple[float, bool]] = {}

    def of(
        self, rule_id: str, context: Context, severity: Severity, fixable: bool
    ) -> tuple[float, bool]:
        """(minutes of a person's time, whether it is manual) for one finding of a kind."""
        key = (rule_id, context, severity, fixable)
        known = self._known.get(key)
        if known is None:
            rule = self.rules.get(rule_id)
            manual = not fixable and severity is not Severity.INFO  # as is_manual says
            known = self._known[key] = (_kind_effort(*key, rule), manual)
        return known


_NO_FINDINGS = FindingCounts((), 0, 0)


def _counts(report: FileReport) -> FindingCounts:
    """The report's finding counts: stored with its cached result, else counted."""
    digest = getattr(report, "digest", None)
    if digest is not None and digest.fits(report):
        return digest.counts
    return count_findings(report.findings) if report.findings else _NO_FINDINGS


def _file_stats(
    report: FileReport, root: Path | None, costs: _FindingCosts, counts: FindingCounts
) -> FileStats:
    stats = FileStats(path=report.path, uses_tensorflow=report.uses_tensorflow)
    stats.parsed = report.parsed
    for rule_id, context, severity, fixable, count in counts.kinds:
        stats.findings += count
        if fixable:
            stats.fixable += count
        effort, manual = costs.of(rule_id, context, severity, fixable)
        if manual:
            stats.manual += count
        stats.effort_minutes += effort * count
    stats.blocked_now = counts.blocked_now
    stats.blocked_after_apply = counts.blocked_after_apply
    stats.tf_statements = _footprint(report, root) if report.parsed else None
    stats.tf_leftovers = _tf_leftovers(report, root)
    digest = getattr(report, "digest", None)
    if digest is not None and digest.text is not None and digest.fits(report):
        stats.findings_json = digest.text
    elif not report.findings:
        stats.findings_json = ""  # nothing to write (a file the pre-filter skips)
    return stats


def _tf_leftovers(report: FileReport, root: Path | None) -> list[str] | None:
    """TensorFlow names left after `apply`: as the worker (or a merged shard) worked them
    out, else read from the file; None for an unparsed file or notebook."""
    if not report.parsed or report.path.endswith(".ipynb"):
        return None  # unknown, never "free": an undecodable file may import TensorFlow
    if not report.uses_tensorflow:
        return []
    known = getattr(report, "tf_leftovers", None)
    if known is not None:
        return known
    from kmigrate.engine.sources import parse_or_none
    from kmigrate.report.footprint import apply_effects, leftovers, tensorflow_uses

    text = _source_text(report, root)
    tree = parse_or_none(text) if text is not None else None
    if tree is None or text is None:
        return None
    fixes = [f for f in report.findings if f.fixable]
    fixed = {(f.span.line, f.span.column) for f in fixes}
    return leftovers(tensorflow_uses(tree, text), fixed, apply_effects(fixes, tree, text))


def _source_text(report: FileReport, root: Path | None) -> str | None:
    from kmigrate.engine.sources import SourceError, decode_source

    for candidate in (*((root / report.path,) if root else ()), Path(report.path)):
        try:
            return decode_source(candidate.read_bytes()).text
        except OSError:
            continue
        except SourceError:
            return None
    return None


def build_report(
    result: RunResult,
    root: str | Path | None = None,
    backend: BackendStatus | None = None,
    top: int = TOP_FILES,
    rules: Sequence[object] | None = None,
) -> ReportData:
    """Compute every number the reports show from a run. ``rules``: what the caller
    knows of every rule (``commands.rule_catalog``); None: read the rule classes."""
    root_path = Path(root) if root else None
    reports = sorted(result.files, key=lambda r: r.path)
    counted = [_counts(r) for r in reports]
    rules_by_id = _rule_classes({kind[0] for c in counted for kind in c.kinds}, rules)
    costs = _FindingCosts(rules_by_id)
    files = [_file_stats(r, root_path, costs, c) for r, c in zip(reports, counted, strict=True)]

    total = Tally()
    folders: dict[str, FolderStats] = {}
    for stats in files:
        folder = folders.setdefault(stats.folder, FolderStats(folder=stats.folder))
        folder.files += 1
        folder.files_with_tensorflow += stats.uses_tensorflow
        folder.files_scored += stats.uses_tensorflow and stats.parsed
        # An unparsed file has no footprint: its findings count, its score does not.
        folder.add(stats, footprint=stats.parsed)
        total.add(stats, footprint=stats.parsed)

    # TF files of which none could be scored (they do not parse): no score, rather than 100%.
    for folder in folders.values():
        if folder.files_with_tensorflow and not folder.files_scored:
            folder.tf_statements = None
    if any(f.uses_tensorflow for f in files) and not any(
        f.uses_tensorflow and f.parsed for f in files
    ):
        total.tf_statements = None

    by_rule: dict[str, RuleStats] = {}
    contexts: Counter[Context] = Counter()
    severities: Counter[Severity] = Counter()
    for counts in counted:
        for rule_id, context, severity, fixable, count in counts.kinds:
            rule_stats = by_rule.get(rule_id)
            if rule_stats is None:
                rule = rules_by_id.get(rule_id)
                rule_stats = by_rule[rule_id] = _rule_stats(rule_id, rule, result)
            effort, manual = costs.of(rule_id, context, severity, fixable)
            rule_stats.count += count
            if fixable:
                rule_stats.fixable += count
            if manual:
                rule_stats.manual += count
            rule_stats.effort_minutes += effort * count
            contexts[context] += count
            severities[severity] += count

    offenders = [f for f in files if f.manual]  # manual effort: notes and fixes ask none
    offenders.sort(key=lambda f: (-f.effort_minutes, -f.manual, -f.findings, f.path))
    return ReportData(
        files=files,
        folders=[folders[k] for k in sorted(folders)],
        rules=[by_rule[k] for k in sorted(by_rule)],
        total=total,
        by_context=dict(sorted((c.value, n) for c, n in contexts.items())),
        by_severity=dict(sorted((s.value, n) for s, n in severities.items())),
        backend=backend,
        rule_ids=tuple(result.rule_ids),
        top_files=offenders[:top],
        source=result,
    )


def _rule_stats(rule_id: str, rule: object | None, result: RunResult) -> RuleStats:
    """A rule's line of the report: its name and severity are its class's; a rule this
    kmigrate does not know (a merged report's) takes the severity of its first finding."""
    severity = getattr(getattr(rule, "severity", None), "value", None)
    if severity is None:
        severity = next(f.severity.value for f in result.findings if f.rule == rule_id)
    return RuleStats(rule=rule_id, name=getattr(rule, "name", ""), severity=severity)


def format_minutes(minutes: float) -> str:
    """``25 min``, ``3.5 h``, ``6.1 days (49 h)`` (8-hour days)."""
    if minutes < 1:
        return "0 min" if minutes == 0 else "< 1 min"
    if minutes < 60:
        return f"{round(minutes)} min"
    hours = minutes / 60
    if hours < 16:
        return f"{hours:.1f} h"
    return f"{hours / 8:.1f} days ({round(hours)} h)"


def format_score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%" if value in (0.0, 100.0) else f"{value}%"


def build(
    result: RunResult,
    root: object = None,
    backend_pins: Sequence[BackendPin] | None = None,
    top: int = TOP_FILES,
    rules: Sequence[object] | None = None,
    **_: object,
) -> ReportData:
    """The numbers behind every format (see :mod:`kmigrate.report.summary`)."""
    backend = None
    if backend_pins is not None:
        from kmigrate.report.backend_status import BackendStatus

        backend = BackendStatus(tuple(backend_pins))
    return build_report(result, root=root or None, backend=backend, top=top, rules=rules)
