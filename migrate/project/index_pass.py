"""Building the project index for a run: which files, their entries (cached by content),
and each job's :class:`~kmigrate.engine.module_facts.ModuleFacts`.

The index covers the whole project (the config root), not only the files named: the
pre-commit hook checks one file, but that file's base layer and helpers live elsewhere.
Every ``.py`` file is indexed, also those without a TensorFlow/Keras marker: a package
``__init__.py`` that re-exports a base layer, or a layer module that only imports the
project's own ``K``, mentions neither.

A run reads every file and hashes it; what it does next depends on what changed since
the stored resolution (project/resolution_cache.py): nothing, and each job's facts are
read from it; a few files, and only those and what they reach are resolved again, the
entries of the other files read only if resolution needs them; everything (a first run),
and every file is parsed once, the scanned ones by their own analysis.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from collections import ChainMap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.engine.fact_provider import Resolve, local_values
from kmigrate.engine.module_facts import FileUse, LocalFactsFrom, ModuleFacts
from kmigrate.engine.module_record import ModuleRecord, imported_paths
from kmigrate.engine.project_entry import (
    ENTRY_FORMAT,
)
from kmigrate.engine.project_facts import ProjectFacts, file_users, shared_with
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.engine.sources import SourceError, read_bytes
from kmigrate.project.index_entries import (
    IndexEntries,
    StoredRecord,
    entries_for,
    index_records,
    index_store,
    load_all,
    record_layout,
)
from kmigrate.project.pending_project import PendingProject, PlannedJobs
from kmigrate.project.project_files import (
    ProjectFiles,
    content_digest,
    index_key,
    index_scope,
    shown_path,
)
from kmigrate.project.resolution_cache import load_resolution, resolve

if TYPE_CHECKING:
    from kmigrate.engine.run_data import Job
    from kmigrate.engine.spec import ContextSpec
    from kmigrate.project.config import Config
    from kmigrate.project.facts_guess import FactsGuess
    from kmigrate.project.stored_resolution import StoredResolution
    from kmigrate.store.cache import ResultCache


def attach_facts(
    jobs: list[Job],
    paths: Sequence[Path],
    config: Config,
    use_cache: bool,
    workers: int,
    walked: Sequence[Path] | None = None,
) -> list[Job]:
    """``jobs`` with the project index's facts about each module (``walked``: every file
    discovery found under ``paths``, see :func:`index_scope`)."""
    root = config.root.resolve()
    project_notebooks: list[Path] = []
    scope = index_scope(paths, root, config.exclude, walked, project_notebooks)
    if not scope:
        return jobs
    store = index_store(root) if use_cache else None
    project = IndexedProject(root, store, None, tuple(sorted(set(config.model_bases))))
    project.notebook_paths = project_notebooks
    read = ProjectFiles(scope, project.stored)
    if not read.items:
        return jobs
    project.take(read.digests, read.stamps)
    digests = read.digests
    notebooks = [(Path(j.path), j.package) for j in jobs if j.path.endswith(".ipynb")]
    if project.stored is not None and project.stored.project == project.key:  # unchanged

        def full() -> Mapping[str, ModuleFacts]:  # a stored row does not fit
            project.stored = None
            files = read.complete()
            return project.resolve(index_records(files, root, store, workers, digests=digests))

        facts: Mapping[str, ModuleFacts] = project.with_file_users(project.stored.facts(full))
        if notebooks:
            facts = project.with_known_notebooks(facts, read.items, notebooks, workers)
        return with_facts(jobs, facts)
    files = read.items
    # Scanned files whose entry is not stored are parsed once, by their analysis
    # (run alone first; see PendingProject), not also here. Only for many files: a file
    # whose project facts differ from its own (a helper, a layer on a project base) is
    # then analysed twice, which costs more than parsing it once more for its entry, and
    # the pre-commit hook checks a few files, just edited.
    scanned = {index_key(j.path) for j in jobs if not j.fix and j.path.endswith(".py")}

    def deferred(path: Path, data: bytes) -> bool:
        return index_key(path) in scanned and may_hold_tensorflow(data)

    entries = IndexEntries(store)
    later_if = deferred if _many_new(scanned, project.stored, digests) else None
    packages: dict[Path, str] = {}
    records = index_records(
        files, root, store, workers, later_if, project.stored, entries, packages, digests
    )
    known = {record.key for record in records}
    later = {k for j in jobs if (k := index_key(j.path)) in scanned and k not in known}
    if later:
        by_path = {index_key(p): (p, d) for p, d in read.complete()}
        paths = {key: path for key, (path, _) in by_path.items()}
        pending = PendingProject(project, records, paths, later, notebooks, entries)
        pending.guess = facts_guess(records, by_path, later, root, project.spec, packages, workers)
        guesses = guess_shared_paths(records, by_path, later, root)
        del by_path, files, read  # the bytes: not held through the run (bytes_of reads)
        planned = PlannedJobs(
            dataclasses.replace(
                j,
                deferred=index_key(j.path) in later,
                shared_guess=guesses.get(index_key(j.path), ()),
            )
            for j in jobs
        )
        planned.pending = pending
        return planned
    facts = project.with_notebooks(project.resolve(records), records, notebooks)
    return with_facts(jobs, facts)


_PARSE_TWICE_UP_TO = 8  # scanned files whose entries are made here rather than deferred


def _many_new(scanned: set[str], stored: StoredResolution | None, digests: Mapping) -> bool:
    """Whether more than a few scanned files are new or changed since the stored
    resolution: only then are their entries left to their analyses (deferred). A warm
    re-scan after an edit parses the edited files here instead: deferring them would
    build the guess of their facts from every module of the project (a fifth of a
    warm re-scan of 10,000 files) to spare a few parses."""
    if len(scanned) <= _PARSE_TWICE_UP_TO:
        return False
    if stored is None:
        return True
    new = 0
    for key in scanned:
        if stored.digest(key) != digests.get(key):
            new += 1
            if new > _PARSE_TWICE_UP_TO:
                return True
    return False


class IndexedProject:
    """One project's files (by digest), its config's ``model-bases`` and its stored
    resolution (one per root and ``model-bases``: a config edit resolves again)."""

    def __init__(
        self,
        root: Path,
        store: ResultCache | None,
        digests: dict[str, str] | None,
        model_bases: tuple[str, ...] = (),
    ) -> None:
        self.root = root
        self.store = store
        self.model_bases = model_bases
        where = "\0".join([str(root), *model_bases])
        self.root_key = content_digest(where.encode("utf-8", "surrogatepass"))
        self.stored = load_resolution(store, self.root_key) if store is not None else None
        self.stamps: dict[str, list[int] | None] = {}
        self.notebook_paths: Sequence[Path] = ()  # the project's notebooks
        self.notebook_entries: dict[str, dict] = {}  # their entries made this run, by key
        if digests is not None:
            self.take(digests)

    def take(
        self, digests: dict[str, str], stamps: dict[str, list[int] | None] | None = None
    ) -> None:
        """The project's files, by digest (``stamps``: by stat, :class:`ProjectFiles`)."""
        self.digests = digests
        self.stamps = stamps or {}
        self.key = _project_key(self.root, digests, self.model_bases)

    @functools.cached_property
    def spec(self) -> ContextSpec:
        """The context spec with the config's ``model-bases`` (imported when resolving:
        a warm run with the project unchanged resolves nothing)."""
        from kmigrate.rules.context_spec import CONTEXT_SPEC

        if not self.model_bases:
            return CONTEXT_SPEC
        return dataclasses.replace(CONTEXT_SPEC, model_base_names=frozenset(self.model_bases))

    def resolve(
        self, records: list[ModuleRecord], made: Mapping[str, LocalFactsFrom] | None = None
    ) -> Mapping[str, ModuleFacts]:
        """The facts of every module (``made``: local facts made by smaller indexes,
        taken where they are the project's own)."""
        return self.with_file_users(
            resolve(
                records,
                self.digests,
                self.key,
                self.spec,
                self.store,
                self.root_key,
                self.stored,
                load_all(records),
                made,
                self.stamps,
            )
        )

    def with_file_users(self, facts: ProjectFacts) -> ProjectFacts:
        """``facts`` told about the notebooks that use saved files (read only if a module
        with saved-file names or SavedModel saves asks)."""
        if self.notebook_paths:
            paths, root, store, spec = self.notebook_paths, self.root, self.store, self.spec
            made = self.notebook_entries  # filled in by with_notebooks before it asks
            facts.add_file_users(lambda: notebook_file_users(paths, root, store, spec, made))
        return facts

    def with_notebooks(
        self,
        facts: Mapping[str, ModuleFacts],
        records: Sequence[ModuleRecord],
        notebooks: Sequence[tuple[Path, str]],
        made: Mapping[Path, Any] | None = None,
    ) -> Mapping[str, ModuleFacts]:
        """``facts`` and those of the ``notebooks`` (path, package) in this project (kept
        for the next run: see :meth:`with_known_notebooks`; ``made``: their entries made
        by workers, see ``notebook_facts.made_entry``)."""
        from kmigrate.project.notebook_facts import (
            notebook_facts,
            notebook_record,
            store_notebook_facts,
        )

        if not notebooks or not isinstance(facts, ProjectFacts):
            return facts
        found = []
        for path, package in notebooks:
            layout = record_layout(path, self.root, package)
            record = notebook_record(path, layout, self.store, (made or {}).get(path))
            if record is not None:
                found.append(record)
                self.notebook_entries[record.key] = record.entry
        known = notebook_facts(found, records, facts, _may_patch, self.spec)
        if self.store is not None:
            store_notebook_facts(self.store, self.root_key, self._notebooks_key(notebooks), known)
        return ChainMap(known, facts)  # type: ignore[arg-type]

    def with_known_notebooks(
        self,
        facts: Mapping[str, ModuleFacts],
        files: Sequence[tuple[Path, bytes | None]],
        notebooks: Sequence[tuple[Path, str]],
        workers: int,
    ) -> Mapping[str, ModuleFacts]:
        """:meth:`with_notebooks` for a project unchanged since its stored resolution
        (whose ``files`` are read): the notebooks' facts of the last run when neither
        they nor kmigrate changed, else worked out (which indexes every file)."""
        from kmigrate.project.notebook_facts import load_notebook_facts

        if self.store is not None and isinstance(facts, ProjectFacts):
            key = self._notebooks_key(notebooks)
            known = load_notebook_facts(self.store, self.root_key, key)
            if known is not None:
                return ChainMap(known, facts)  # type: ignore[arg-type]
        records = index_records(
            files, self.root, self.store, workers, None, self.stored, digests=self.digests
        )
        return self.with_notebooks(facts, records, notebooks)

    def _notebooks_key(self, notebooks: Sequence[tuple[Path, str]]) -> str:
        """What the notebooks' facts come from: this project (its key), each notebook's
        place, package and bytes, and kmigrate's build."""
        from kmigrate.project.stored_resolution import build_key

        parts = [build_key(), self.key]
        for path, package in notebooks:
            try:
                digest = content_digest(read_bytes(str(path)))
            except SourceError:
                digest = "unreadable"
            parts.append(f"{index_key(path)}\0{package}\0{digest}")
        return content_digest("\n".join(parts).encode("utf-8", "surrogatepass"))


def _may_patch(record: ModuleRecord) -> bool:
    if isinstance(record, StoredRecord):
        return record.patches  # without reading the entry
    return bool(record.entry["patches"])


# A one-line string literal; its text is a file name when it ends like a saved model.
_STRING_LITERAL = re.compile(rb"""(["'])([^"'\\\r\n]*)\1""")


def guess_shared_paths(
    records: Sequence[ModuleRecord],
    files: dict[str, tuple[Path, bytes]],
    later: set[str],
    root: Path,
) -> dict[str, tuple[tuple[str, str], ...]]:
    """For each file in ``later`` (not indexed yet), the file names it shares with
    other modules as the resolved index will say (``ModuleFacts.shared_paths``), read
    from string literals in the bytes. Exact for plain code; where it is not (a name in
    a comment, an f-string), the runner sees the answer change and analyses again."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    suffixes = tuple(s.encode() for s in CONTEXT_SPEC.saved_file_suffixes)

    def literals(key: str) -> set[str]:
        found = files.get(key)
        names = set()
        for match in _STRING_LITERAL.finditer(found[1] if found else b""):
            text = match.group(2)
            if text.endswith(suffixes):
                names.add(text.decode("utf-8", "replace"))
        return names

    names: dict[str, tuple[str, list[str]]] = {}  # key -> (shown path, file names)
    for record in records:
        # an entry not read yet (a stored record) is not read for a guess
        lazy = isinstance(record, StoredRecord) and "_entry" not in record.__dict__
        paths = sorted(literals(record.key)) if lazy else list(record.entry["paths"])
        names[record.key] = (record.shown or record.key, paths)
    for key in later:
        if key in files:
            names[key] = (shown_path(key, root), sorted(literals(key)))
    users = file_users(names.values())
    guesses = {}
    for key in later:
        if key in names and (shared := shared_with(users, *names[key])):
            guesses[key] = shared
    return guesses


def facts_guess(
    records: Sequence[ModuleRecord],
    files: dict[str, tuple[Path, bytes]],
    later: set[str],
    root: Path,
    spec: ContextSpec,
    packages: dict[Path, str] | None = None,
    workers: int = 1,
) -> FactsGuess:
    """What the files in ``later`` are analysed with before the project is resolved
    (see :mod:`~kmigrate.project.facts_guess`): the records read already, and the
    entries of the files in ``later`` that the others need most, parsed here (by
    ``workers`` processes when they are many: 874 files, 2.6 s of a 10k-file tree).
    ``packages``: each folder's package, as far as worked out already."""
    # only a run with files to analyse first guesses: a warm one never imports it
    from kmigrate.engine.run_data import package_of
    from kmigrate.project.facts_guess import (
        BUDGET_SHARE,
        FactsGuess,
        choose_providers,
        module_keys,
        useful_imports,
    )

    # an entry not read yet (a stored record) is not read for a guess
    known = {r.key: r for r in records if not isinstance(r, StoredRecord) or "_entry" in r.__dict__}
    packages = packages if packages is not None else {}
    layouts: dict[str, dict[str, Any]] = {}
    by_name: dict[str, list[str]] = {}
    for record in known.values():
        for name in record.names:
            by_name.setdefault(name, []).append(record.key)
    for key in sorted(later):
        if key in files:
            path = files[key][0]
            layouts[key] = layout = record_layout(path, root, package_of(path, packages))
            for name in layout["names"]:
                by_name.setdefault(name, []).append(key)
    roots = {name.partition(".")[0] for name in by_name}
    needs: dict[str, set[str]] = {}  # key -> keys of the files its facts may depend on
    paths = ProjectIndex([], spec)
    importers: dict[str, list[str]] = {}  # import path -> files naming it (imported_by)
    for record in known.values():
        for path in imported_paths(record):
            importers.setdefault(path, []).append(record.shown or record.key)
    for key, layout in layouts.items():
        imports = useful_imports(files[key][1], layout["package"], roots, by_name.__contains__)
        if imports:
            needs[key] = module_keys(imports, by_name) - {key}
        for path in imports:  # a module named itself: most often by a star import
            star = path + ".*" if path in by_name else path
            importers.setdefault(star, []).append(layout["shown"])
    todo = [k for found in needs.values() for k in found if k in known]
    while todo:  # a package's __init__.py re-exporting what its modules bind
        key = todo.pop()
        if key not in needs:
            needs[key] = module_keys(paths.import_paths(known[key]), by_name) - {key}
            todo.extend(k for k in needs[key] if k in known)
    sizes = {key: len(files[key][1]) for key in layouts}
    budget = int(sum(sizes.values()) * BUDGET_SHARE)
    providers = choose_providers(needs, sizes, budget)
    entries = entries_for([files[key] for key in providers], workers)
    parsed = [
        ModuleRecord(entry=entry, **layouts[key])
        for key, entry in zip(providers, entries, strict=True)
        if entry is not None
    ]

    def layout(path: Path, package: str) -> dict[str, Any]:
        found = layouts.get(index_key(path))
        return found if found is not None else record_layout(path, root, package)

    # a guess, as the rest: a file naming Keras in a comment costs an analysis, no answer
    keras = any(b"keras" in data for _, data in files.values())
    return FactsGuess([*known.values(), *parsed], layout, layouts, spec, importers, keras)


def may_hold_tensorflow(data: bytes) -> bool:
    from kmigrate.rules.context_spec import SOURCE_MARKERS

    return any(marker in data for marker in SOURCE_MARKERS)


def with_facts(jobs: Sequence[Job], by_key: Mapping[str, ModuleFacts]) -> list[Job]:
    attached = []
    for job in jobs:
        facts = by_key.get(index_key(job.path))
        if facts is None:
            attached.append(dataclasses.replace(job, deferred=False))
            continue
        attached.append(dataclasses.replace(job, facts=facts, deferred=False))
    return attached


# -- the project's key: a re-run on an unchanged project (the pre-commit hook on a
# file it checked before, a warm scan) resolves nothing.


def _project_key(root: Path, digests: Mapping[str, str], model_bases: Sequence[str] = ()) -> str:
    digest = hashlib.blake2b(f"{root}\0{ENTRY_FORMAT}\0{model_bases}".encode(), digest_size=16)
    for key, file_digest in digests.items():
        digest.update(f"{key}\0{file_digest}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def notebook_file_users(
    paths: Sequence[Path],
    root: Path,
    store: ResultCache | None,
    spec: ContextSpec,
    made: Mapping[str, dict] | None = None,
) -> dict[str, FileUse]:
    """The notebooks among ``paths`` with the saved files they name and their local
    values of the rules' fact providers: a module's save renamed to `.keras` would break
    the notebook that loads the old file, a SavedModel save rewritten the notebook that
    reloads it. A notebook's calls are resolved through its own imports (nothing else
    binds its names). Entries are stored by the notebooks' bytes; ``made``: those this
    run made already (the scanned notebooks'), by key."""
    from kmigrate.project.notebook_facts import notebook_entry

    found: dict[str, FileUse] = {}
    for path in paths:
        key = index_key(path)
        entry = (made or {}).get(key) or notebook_entry(path, store)
        if entry is None:
            continue
        values = local_values(spec.providers(), entry["provided"], _own_imports(entry, spec))
        found[key] = (shown_path(key, root), tuple(entry["paths"]), values)
    return found


def _own_imports(entry: dict, spec: ContextSpec) -> Resolve:
    """Resolution of an entry's callees by its own imports alone: ``tf.saved_model.load``
    after ``import tensorflow as tf``."""
    bound = {
        local: f"{module}.{name}" if name and module else name or module
        for local, module, name, level in entry["imports"]
        if local != "*" and not level
    }

    def resolve(callee: str, path: str) -> str | None:
        root, _, rest = callee.partition(".")
        if path:  # the root is bound by an import in the function around the call
            return spec.canonical(path)
        if root in bound:
            return spec.canonical(f"{bound[root]}.{rest}" if rest else bound[root])
        return None

    return resolve
