"""What a run is made of: the :class:`Job` a worker gets and what it hands back, a
:class:`FileReport` from ``scan`` or a :class:`FixResult` from ``apply``, gathered in a
:class:`RunResult`.

Plain picklable data, apart from the runner that produces it, because the cache, the
project scan and the reports all read it: they import this module, never the runner.
"""

from __future__ import annotations

import pickle
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.engine.model import Context, EnsureHelper, Finding, Severity

if TYPE_CHECKING:
    from kmigrate.engine.import_layout import ImportLayout
    from kmigrate.engine.module_facts import LocalFactsFrom, ModuleFacts


@dataclass(frozen=True)
class FindingCounts:
    """A file's findings as the report's numbers need them (``report.summary``): how
    many of each kind, and how many distinct lines they block now and after `apply`."""

    kinds: tuple[tuple[str, Context, Severity, bool, int], ...]  # rule, ..., fixable, how many
    blocked_now: int
    blocked_after_apply: int


class LazyFindings:
    """A file's findings not decoded yet, as bytes and their count (see
    :class:`FileReport`): a worker's :class:`PackedFindings` or the result cache's
    ``StoredFindings``, each saying how it decodes."""

    __slots__ = ("data", "count")

    def __init__(self, data: bytes, count: int) -> None:
        self.data = data
        self.count = count

    def __len__(self) -> int:
        return self.count

    def decode(self) -> list[Finding]:
        raise NotImplementedError


@dataclass(frozen=True)
class FindingsDigest:
    """What the reports need of a file's findings, worked out once, when its result is
    cached: their ``counts``, and their ``text`` as the JSON report writes them (made by
    :func:`kmigrate.report.json_report.findings_items`; None when a finding names
    another file). A warm re-scan of a large project then neither counts nor encodes
    tens of thousands of findings again. It stands for the findings only while they are
    the ones it was made from: the same list (``of``), as long (``count``), of a report
    with the same ``path`` (:meth:`fits`); a finding appended later (KM903) makes the
    report work them all out again. ``of`` is the undecoded findings (``LazyFindings``)
    while they are not decoded, so asking whether it fits decodes nothing."""

    counts: FindingCounts
    # or, in a cold scan, the text waiting on disk (``run.spill.SpilledText``): str() reads it
    text: str | None
    of: list[Finding] | LazyFindings = field(repr=False)
    count: int
    path: str

    def fits(self, report: FileReport) -> bool:
        return (
            report.findings_or_stored() is self.of
            and len(self.of) == self.count
            and report.path == self.path
        )


@dataclass
class FileReport:
    """One file's scan result (``scan``, ``check``): what the reports and the result
    cache read."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    uses_tensorflow: bool = False
    parsed: bool = True
    # (line, code) of ``# kmigrate: ignore`` codes that suppressed nothing
    unused_suppressions: list[tuple[int, str]] = field(default_factory=list)
    # statements using TF/Keras (the report's footprint), counted on the worker's tree
    tf_statements: int | None = None
    # the TensorFlow names left after `apply` (report.footprint.leftovers), worked out by
    # the worker; merge: those a shard's JSON report already worked out
    tf_leftovers: list[str] | None = None
    # a deferred job (see pending_project.PendingProject): the file's own facts and entry,
    # and the local facts the index of its first guess made (the project takes them
    # where they are its own instead of making them again)
    own_facts: ModuleFacts | None = None
    index_entry: dict | None = None
    own_local: LocalFactsFrom | None = None
    shared_path_reads: tuple[str, ...] = ()  # the file names whose users it asked about
    # what the reports need of the findings, when the result cache made or read it
    digest: FindingsDigest | None = field(default=None, repr=False, compare=False)
    # whether the file's bytes name a backend variable (backend_pins.mentions_backend),
    # noted where the run read them; None: not known, backend_pins reads the file
    mentions_backend: bool | None = None

    # -- findings not decoded yet ----------------------------------------------------
    # Two kinds of report hold their findings undecoded (``_stored``, no ``findings``
    # attribute) until something reads ``findings``; then ``__getattr__`` decodes them,
    # once. A cached result keeps them as the cache stored them (``StoredFindings``): a
    # warm re-scan's JSON report needs only each file's digest. A report crossing from a
    # worker has them pickled apart (``PackedFindings``, see ``__getstate__``): the
    # parent gathers every file's report while the workers run, and the JSON report of a
    # scan reads none, so it neither rebuilds tens of thousands of findings nor has the
    # garbage collector look at them.

    @classmethod
    def with_stored_findings(cls, stored: LazyFindings, **fields: Any) -> FileReport:
        """A report whose ``findings`` are decoded from ``stored`` when first read."""
        report = cls(**fields)
        del report.findings
        report._stored = stored
        return report

    def findings_or_stored(self) -> list[Finding] | LazyFindings | None:
        """The findings list, or the stored findings while they are not decoded: what a
        :class:`FindingsDigest` was made from, read without decoding anything."""
        known = self.__dict__
        return known["findings"] if "findings" in known else known.get("_stored")

    def __getattr__(self, name: str) -> Any:
        # called only when ``name`` is not found: ``findings`` not decoded yet
        stored = self.__dict__.get("_stored") if name == "findings" else None
        if stored is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        findings = self.findings = stored.decode()
        del self._stored
        if self.digest is not None and self.digest.of is stored:
            self.digest = replace(self.digest, of=findings)  # it still stands for them
        return findings

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        findings = state.get("findings")
        if findings:
            packed = PackedFindings(pickle.dumps(findings, pickle.HIGHEST_PROTOCOL), len(findings))
            del state["findings"]
            state["_stored"] = packed
            digest = self.digest
            if digest is not None and digest.fits(self):
                state["digest"] = replace(digest, of=packed)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


class PackedFindings(LazyFindings):
    """A report's findings pickled apart by the worker that made them (see
    :class:`FileReport`): bytes this run's own process pool made, never read from disk."""

    __slots__ = ()

    def decode(self) -> list[Finding]:
        return pickle.loads(self.data)


@dataclass
class FixResult:
    """One file's outcome in ``apply``: its rewrite, or why it is left untouched, and
    the findings left for a person."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    new_text: str | None = None  # the rewritten text, when it changed
    old_text: str | None = None  # the text it replaces (the file must still hold it)
    fixed: int = 0
    error: str | None = None  # why a file that needed rewriting is left untouched
    # the helper functions the rewrite calls, which the helper module beside the file
    # must define (kmigrate.run.helper_files adds that module's change to the run)
    helpers: list[EnsureHelper] = field(default_factory=list)
    location: str = ""  # where the file lies, for a file no job names (a helper module)
    # lines the rewrite left longer than the project's line length (not wrapped safely)
    long_lines: tuple[int, ...] = ()


@dataclass
class RunResult:
    files: list[FileReport] | list[FixResult]  # scan results, or apply's
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
    # what the project index decided about this module; None: analysed alone
    facts: ModuleFacts | None = None
    # analysed before the project is resolved: hand back its index entry and own facts
    deferred: bool = False
    # a deferred job: the file names it probably shares with other modules (read from
    # the project's bytes), so that a save paired with a load elsewhere is right the
    # first time; a wrong guess costs only the second analysis it was meant to save
    shared_guess: tuple[tuple[str, str], ...] = ()
    # apply only: where the project's isort/ruff put imports, its line length
    import_layout: ImportLayout | None = None


def package_of(path: Path, memo: dict[Path, str] | None = None) -> str:
    """Dotted package of a file, from the ``__init__.py`` files above it (for relative
    imports). ``memo``: folder -> package, shared by the files of a run (each folder is
    looked at once: a folder's package is its parent's and its own name)."""
    memo = {} if memo is None else memo
    found = memo.get(path.parent)
    if found is None:
        found = memo[path.parent] = _folder_package(path.resolve().parent, memo)
    return found


def _folder_package(folder: Path, memo: dict[Path, str]) -> str:
    found = memo.get(folder)
    if found is None:
        if not (folder / "__init__.py").is_file():
            found = ""
        else:
            above = _folder_package(folder.parent, memo) if folder.parent != folder else ""
            found = f"{above}.{folder.name}" if above else folder.name
        memo[folder] = found
    return found


# The environment variables a backend pin sets (names, not framework code).
BACKEND_VARIABLE = "KERAS_BACKEND"
LEGACY_VARIABLE = "TF_USE_LEGACY_KERAS"


@dataclass(frozen=True, order=True)
class BackendPin:
    """One place that sets the Keras backend (or forces Keras 2)."""

    path: str
    line: int
    variable: str  # KERAS_BACKEND, TF_USE_LEGACY_KERAS, or "keras.json"
    value: str  # "jax", "${{ matrix.backend }}", "" when not a literal
    kind: str  # ci, docker, env-file, test-config, keras-config, code, notebook
    cell: int | None = None  # notebooks: 1-based code cell

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        if self.cell is None:
            del data["cell"]
        return data
