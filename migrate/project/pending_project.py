"""A cold scan's project index, waiting for the entries the first analyses give
(:class:`PendingProject`), and the planned jobs that carry it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kmigrate.engine.module_facts import LocalFactsFrom, ModuleFacts
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.sources import SourceError, read_bytes
from kmigrate.project.index_entries import IndexEntries, entry_for_bytes, record_layout
from kmigrate.project.project_files import content_digest, index_key

if TYPE_CHECKING:
    from kmigrate.engine.run_data import Job
    from kmigrate.project.facts_guess import FactsGuess


class ProjectResolver(Protocol):
    """What a pending project needs of its project (``index_pass.IndexedProject``,
    which imports this module): its root, and the resolution of its records."""

    root: Path
    digests: Mapping[str, str]  # the digest of every file's bytes, by key, as planned

    def resolve(
        self, records: list[ModuleRecord], made: Mapping[str, LocalFactsFrom] | None = None
    ) -> Mapping[str, ModuleFacts]: ...

    def with_notebooks(
        self,
        facts: Mapping[str, ModuleFacts],
        records: Sequence[ModuleRecord],
        notebooks: Sequence[tuple[Path, str]],
        made: Mapping[Path, Any] | None = None,
    ) -> Mapping[str, ModuleFacts]: ...


class PlannedJobs(list):
    """Jobs whose facts wait for the analysis of some of them (``pending``)."""

    pending: PendingProject | None = None


@dataclasses.dataclass
class PendingProject:
    """A project index missing the entries of files about to be analysed anyway.

    A cold scan would otherwise parse every file twice: once for the index, once for
    its analysis. Instead the files without a stored entry are analysed first on their
    own (their analysis hands back its entry and the facts the file gives about
    itself); then the project is resolved, and only the files whose project facts
    differ from their own are analysed again, with the project's facts."""

    project: ProjectResolver
    records: list[ModuleRecord]
    # by index_key(path); not their bytes: read again where needed (:meth:`bytes_of`),
    # a 10k-file project's bytes held from planning to the report were 104 MB
    files: dict[str, Path]
    deferred: set[str]  # keys of the files whose entry their analysis gives
    notebooks: list[tuple[Path, str]]  # (path, package) of the notebooks among the jobs
    entries: IndexEntries  # the run's entries, saved once the deferred ones are known
    guess: FactsGuess | None = None  # what the deferred files are analysed with first

    def finish(
        self, first: Sequence[tuple[Job, Any]], notebooks: Mapping[Path, Any] | None = None
    ) -> Mapping[str, ModuleFacts]:
        """The facts of every module, from the stored records and the entries the
        first analyses (job, report) returned (``notebooks``: the notebooks' entries,
        when workers made them meanwhile: ``notebook_facts.made_entry``)."""
        from kmigrate.engine.run_data import package_of

        packages: dict[Path, str] = {}
        records = list(self.records)
        given = {index_key(job.path): report for job, report in first}
        made: dict[str, LocalFactsFrom] = {}  # local facts the first analyses made
        for key in sorted(self.deferred):
            path = self.files.get(key)
            if path is None:
                continue
            report = given.get(key)
            digest = self.project.digests.get(key, "")
            if report is not None:
                entry = report.index_entry
            else:  # a deferred job filtered out before it ran: its entry is made here
                data = self.bytes_of(path)
                entry = entry_for_bytes(data) if data is not None else None
            if entry is None or not digest:
                continue
            layout = self.guess.layouts.get(key) if self.guess is not None else None
            if layout is None:
                layout = record_layout(path, self.project.root, package_of(path, packages))
            records.append(ModuleRecord(entry=entry, **layout))
            self.entries.add(digest, entry)
            local = getattr(report, "own_local", None)
            if local is not None:
                made[key] = local
        self.entries.save()
        facts = self.project.resolve(records, made)
        self.facts = self.project.with_notebooks(facts, records, self.notebooks, notebooks)
        return self.facts

    def facts_of(self, job: Job) -> ModuleFacts | None:
        """``job``'s facts once :meth:`finish` resolved the project (else None)."""
        facts = getattr(self, "facts", None)
        return None if facts is None else facts.get(index_key(job.path))

    def bytes_of(self, path: Path | str) -> bytes | None:
        """The file's bytes as they were planned: read again, None when they changed
        since (or the file is gone, or not part of the project): what was worked out
        from them then must not be stored under the bytes of now."""
        key = index_key(path)
        if key not in self.files:
            return None
        try:
            data = read_bytes(str(path))
        except SourceError:
            return None
        return data if content_digest(data) == self.project.digests.get(key) else None

    def release(self, facts: Mapping[str, ModuleFacts]) -> None:
        """Keep only ``facts`` (every job's, by key) once the jobs have them: the records,
        their entries and the resolution are not read again, and the caller keeps the
        planned jobs, so a 10k-file scan held them through the report."""
        self.facts = dict(facts)
        self.records = []
        self.guess = None
        # every entry of the run, saved by :meth:`finish` (48 MB at 5k files)
        self.entries = IndexEntries(self.entries.store)
