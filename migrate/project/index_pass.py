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

import ast
import dataclasses
import functools
import gc
import hashlib
import os
import re
import stat
import sys
import time
import warnings
from collections import ChainMap
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.engine.module_facts import NO_RELOAD, FileUse, LocalFactsFrom, ModuleFacts, Reload
from kmigrate.engine.module_names import folder_below, names_below, package_below
from kmigrate.engine.module_record import ModuleRecord, imported_paths
from kmigrate.engine.project_entry import (
    ENTRY_FORMAT,
    build_entry,
    load_entry,
    store_entry,
    valid_entry,
)
from kmigrate.engine.project_facts import ProjectFacts, file_users, shared_with
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.engine.sources import SourceError, decode_source, read_bytes
from kmigrate.project.discover import discover
from kmigrate.project.resolution_cache import load_resolution, resolve
from kmigrate.project.stored_resolution import StoredResolution

if TYPE_CHECKING:
    from kmigrate.engine.run_data import Job
    from kmigrate.engine.spec import ContextSpec
    from kmigrate.project.config import Config
    from kmigrate.project.facts_guess import FactsGuess
    from kmigrate.store.cache import ResultCache

MAX_INDEXED_FILES = 20_000  # beyond this, files are analysed alone
INDEX_FOLDER = ".index"  # inside the cache root; the dot keeps it out of run-key pruning


def _spec_key() -> str:
    """Entries depend on the builder's format and on the spec (which keywords hand
    over functions...): both name the folder. Sets are sorted: their ``repr`` order
    changes from process to process."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    fields = {
        f.name: sorted(v) if isinstance(v, frozenset) else v
        for f in dataclasses.fields(CONTEXT_SPEC)
        for v in (getattr(CONTEXT_SPEC, f.name),)
    }
    text = f"{ENTRY_FORMAT}\0{sorted(fields.items())!r}"
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def index_store(root: Path) -> ResultCache | None:
    """The signed plain-data store of the index under the project's cache root, or None
    when there is no machine secret or the folders are not real folders (a link the
    tree planted is never followed)."""
    from kmigrate.store.cache import side_store

    return side_store(root, INDEX_FOLDER, _spec_key())


def index_scope(
    paths: Sequence[Path],
    root: Path,
    exclude: Sequence[str],
    walked: Sequence[Path] | None = None,
    notebooks: list[Path] | None = None,
) -> list[Path]:
    """The files of the project the named ``paths`` belong to (its notebooks appended to
    ``notebooks`` when given: they are not modules, but use the files modules save).

    ``walked``: what discovery found under ``paths``. When they are the project's folder
    itself (``kmigrate scan .``, ``check`` without files), that walk is the project's:
    the same files in the same order, spelled from the folder as named rather than from
    the root, so it is reused instead of walking the tree a second time."""
    root = root.resolve()
    resolved = [Path(p).resolve() for p in paths]
    inside = all(_is_within(p, root) for p in resolved)
    starts = [root] if inside else list(paths)
    if walked is not None and resolved == [root]:
        candidates: Iterable[Path] = (root / path.relative_to(paths[0]) for path in walked)
    else:
        candidates = discover(starts, root, exclude)
    found = []
    for path in candidates:
        if path.suffix == ".py":
            found.append(path)
            if len(found) > MAX_INDEXED_FILES:
                return []
        elif notebooks is not None and path.suffix == ".ipynb":
            notebooks.append(path)
    return found


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def entry_for_bytes(data: bytes) -> dict | None:
    """Parse and summarise one file; None when it cannot be decoded or parsed.
    The cyclic collector is paused, as for analysis (see runner.run_job): a tree is
    millions of cycle-free objects that reference counting frees."""
    if not gc.isenabled():
        return _entry_for_bytes(data)
    gc.disable()
    try:
        return _entry_for_bytes(data)
    finally:
        gc.enable()


def _entry_for_bytes(data: bytes) -> dict | None:
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    try:
        text = decode_source(data).text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        return build_entry(tree, CONTEXT_SPEC)
    except RecursionError:
        return None


def _entry_for_path(path: str) -> dict | None:
    try:
        data = read_bytes(path)
    except SourceError:
        return None
    return entry_for_bytes(data)


def read_files(files: Sequence[Path]) -> list[tuple[Path, bytes]]:
    """(path, bytes) of every readable file."""
    found = []
    for path in files:
        try:
            found.append((path, read_bytes(str(path))))
        except SourceError:
            continue
    return found


# A file's stat stands for its bytes only if its last change was this long before the
# stat was taken: a later change then gives it a later ctime (see ProjectFiles).
SETTLED_NS = 2_000_000_000
_CTIME_IS_CREATION = sys.platform == "win32"


def file_stamp(info: os.stat_result, now_ns: int) -> list[int] | None:
    """What the stored resolution keeps of a file's stat, to know it unchanged without
    reading it: size, mtime, ctime, inode and device; None when its last change is too
    recent (less than ``SETTLED_NS`` before ``now_ns``) to tell a later one apart, and
    on Windows, where ``st_ctime`` is the creation time (a change leaves it as it is)."""
    if _CTIME_IS_CREATION or now_ns - max(info.st_mtime_ns, info.st_ctime_ns) < SETTLED_NS:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]


class ProjectFiles:
    """The project's files as a run reads them: ``items`` (path, bytes), ``digests`` and
    ``stamps`` by key.

    A file whose stat is the one the stored resolution keeps with its digest
    (:func:`file_stamp`) is not read: its bytes are None here and read when something
    needs them (:meth:`complete`; a record's entry). That relies on the kernel setting a
    file's ctime to the current time at every change of its bytes, size, times or
    inode, and on no one setting the clock back: a stamp is only kept when the file's
    last change was ``SETTLED_NS`` before the stat, so any later change, even within the
    file system's timestamp granularity, gives another ctime (a replaced file, as an
    editor saves, another inode). Everything else, a stat newer than that or one that
    differs in any field, is read and hashed. The stat is taken before the bytes are
    read: a change in between leaves a stamp that the next run finds changed."""

    def __init__(self, paths: Sequence[Path], stored: StoredResolution | None) -> None:
        self.items: list[tuple[Path, bytes | None]] = []
        self.digests: dict[str, str] = {}
        self.stamps: dict[str, list[int] | None] = {}
        now = time.time_ns()
        for path in paths:
            key = _key(path)
            try:
                info = os.stat(path)
            except OSError:
                continue
            stamp = file_stamp(info, now) if stat.S_ISREG(info.st_mode) else None
            known = stored.stamped_digest(key, stamp) if stored is not None and stamp else None
            if known is not None:
                self.items.append((path, None))
                self.digests[key] = known
                self.stamps[key] = stamp
                continue
            try:
                data = read_bytes(str(path))
            except SourceError:
                continue
            self.items.append((path, data))
            self.digests[key] = _digest(data)
            self.stamps[key] = stamp

    def complete(self) -> list[tuple[Path, bytes]]:
        """Every file with its bytes, reading those not read (one gone unreadable since
        is left out, as it would have been)."""
        found = []
        for path, data in self.items:
            if data is None:
                try:
                    data = read_bytes(str(path))
                except SourceError:
                    continue
            found.append((path, data))
        self.items = list(found)
        return found


def index_records(
    files: Sequence[tuple[Path, bytes | None]],
    root: Path,
    store: ResultCache | None,
    workers: int = 1,
    deferred: Callable[[Path, bytes], bool] | None = None,
    stored: StoredResolution | None = None,
    entries: _Entries | None = None,
    packages: dict[Path, str] | None = None,
    digests: Mapping[str, str] | None = None,
) -> list[ModuleRecord]:
    """One record per parseable file; entries from ``store`` (the signed index cache)
    when stored. Files for which ``deferred`` says so and whose entry is not stored are
    left out: their analysis will give their entry (see :class:`PendingProject`, which
    then saves the new entries; otherwise they are saved here).

    Files unchanged since the ``stored`` resolution get a record that reads its entry
    only when resolution needs it: after an edit, most entries are never read. Their
    bytes may be None (not read: :class:`ProjectFiles`); any other file's are read.
    ``packages``: each folder's package, as far as worked out already (filled in);
    ``digests``: each file's digest by key, as far as worked out already."""
    from kmigrate.engine.run_data import package_of

    entries = entries if entries is not None else _Entries(store)
    packages = packages if packages is not None else {}
    folders: dict[Path, tuple[str, ...] | None] = {}
    records: list[ModuleRecord] = []
    missing: list[tuple[Path, str, bytes]] = []
    left_out = False
    for path, data in files:
        package = package_of(path, packages)
        key = _key(path)
        digest = digests.get(key) if digests is not None else None
        if digest is None:
            digest = _digest(data) if data is not None else ""
        if stored is not None and stored.digest(key) == digest:
            fields = record_layout(path, root, package, folders)
            records.append(_StoredRecord(data, entries, stored.patches(key), **fields))
            entries.complete = False
            continue
        if data is None:
            try:
                data = read_bytes(str(path))
            except SourceError:
                continue
            digest = _digest(data)
        entry = entries.get(data, digest, one=stored is not None)
        if entry is None:
            if deferred is None or not deferred(path, data):
                missing.append((path, package, data))
            else:
                left_out = True
            continue
        entries.used[digest] = entry
        records.append(_record(path, root, package, entry))
    if workers > 1 and sum(len(data) for _, _, data in missing) >= _POOL_FROM_BYTES:
        built = _build_in_pool([str(p) for p, _, _ in missing], workers)
    else:
        built = [entry_for_bytes(data) for _, _, data in missing]
    for (path, package, data), entry in zip(missing, built, strict=True):
        if entry is not None:
            entries.add(data, entry)
            records.append(_record(path, root, package, entry))
    if not left_out:
        entries.save()
    return records


# Entries of fewer bytes than this are made here rather than in worker processes: the
# files left to index on a cold scan are those without TensorFlow (``__init__.py``,
# setup scripts), often small: starting processes for them took tensorflow/addons 30 ms
# to parse its 31 files (28 kB) in 7, and the generated corpus (185 files, 240 kB) a
# little longer than here, for more CPU time.
_POOL_FROM_BYTES = 500_000

# A run that makes more entries than this (a cold run) stores them all in the pack, in
# one write, instead of a thousand small files; fewer are stored one by one.
_ONE_BY_ONE = 16


class _Entries:
    """The entries of one run: read from the pack of the last full run when it is read,
    else one by one; new ones saved at the end (:meth:`save`)."""

    def __init__(self, store: ResultCache | None) -> None:
        self.store = store
        self._pack: dict[str, dict] | None = None
        self.used: dict[str, dict] = {}  # digest -> entry of every file read in full
        self.new: dict[str, tuple[bytes, dict]] = {}  # digest -> (bytes, entry) not stored
        self.complete = True  # whether ``used`` holds every file's entry

    def pack(self) -> dict[str, dict]:
        if self._pack is None:
            self._pack = _load_pack(self.store) if self.store is not None else {}
        return self._pack

    def get(self, data: bytes, digest: str, one: bool = False) -> dict | None:
        """The stored entry of ``data`` or None; ``one``: without reading the pack
        unless it was read already."""
        if not one or self._pack is not None:
            entry = self._from_pack(digest)
            if entry is not None:
                return entry
        return load_entry(self.store, data) if self.store is not None else None

    def known(self, data: bytes, digest: str) -> dict | None:
        """The entry of a file the stored resolution was made from: stored on its own,
        or only in the pack (a cold run stores its entries there alone); one found in
        the pack is stored on its own, so that the next run reads one small file."""
        entry = self.get(data, digest, one=True)
        if entry is None and self._pack is None and self.store is not None:
            entry = self._from_pack(digest)
            if entry is not None:
                store_entry(self.store, data, entry)
        return entry

    def _from_pack(self, digest: str) -> dict | None:
        entry = self.pack().get(digest)
        return entry if entry is not None and valid_entry(entry) else None

    def add(self, data: bytes, entry: dict) -> None:
        digest = _digest(data)
        self.used[digest] = entry
        self.new[digest] = (data, entry)

    def save(self) -> None:
        """Store the new entries, and the pack when every entry is known and it changed:
        many new entries only go into the pack, a few are also stored one by one."""
        store = self.store
        if store is None:
            return
        many = len(self.new) > _ONE_BY_ONE
        if self.complete and (many or self.used.keys() != self.pack().keys()):
            store.store_value(_PACK, "entries", self.used)
        if not (many and self.complete):
            for data, entry in self.new.values():
                store_entry(store, data, entry)
        self.new.clear()


class _StoredRecord(ModuleRecord):
    """A record of a file unchanged since the stored resolution: its entry is read
    when first needed (from the store, or parsed again if it went missing)."""

    def __init__(self, data: bytes | None, entries: _Entries, patches: bool, **fields: Any) -> None:
        super().__init__(entry=None, **fields)  # type: ignore[arg-type]
        self._data = data  # None: not read yet (its stat was the stored one)
        self._entries = entries
        self.patches = patches  # whether the entry replaces TF/Keras functions

    @property  # type: ignore[override]
    def entry(self) -> dict:
        entry = self.__dict__.get("_entry")
        if entry is None:
            data = self._data
            if data is None:
                try:
                    data = read_bytes(self.key)
                except SourceError:
                    data = b""  # gone since: as if it defined nothing
            entry = self._entries.known(data, _digest(data)) or entry_for_bytes(data)
            # the same bytes parsed before; if they cannot now (out of memory), the
            # module is taken to define nothing rather than failing the run
            self.__dict__["_entry"] = entry = entry or _empty_entry()
        return entry

    @entry.setter
    def entry(self, value: dict | None) -> None:
        self.__dict__["_entry"] = value


def _empty_entry() -> dict:
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    return build_entry(ast.Module(body=[], type_ignores=[]), CONTEXT_SPEC)


def _load_all(records: Sequence[ModuleRecord]) -> Callable[[], None]:
    """Read every entry not read yet, the pack first (for a full resolution)."""

    def load() -> None:
        for record in records:
            if isinstance(record, _StoredRecord):
                record._entries.pack()
                break
        for record in records:
            _ = record.entry

    return load


# All entries of the project's last full run in one file: loading a thousand small files
# costs more than parsing one large one, and so does writing them. A run that made
# many entries stores them only there; one that made a few stores each on its own too.
_PACK = "pack"


def _checked_pack(value: object) -> dict[str, dict]:
    if not isinstance(value, dict):
        raise ValueError("not a pack of entries")
    return value  # each entry is validated where it is used


def _load_pack(store: ResultCache) -> dict[str, dict]:
    return store.load_value(_PACK, "entries", _checked_pack) or {}


def _build_in_pool(paths: list[str], workers: int) -> list[dict | None]:
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
    chunk = max(1, min(32, len(paths) // (workers * 4)))
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(_entry_for_path, paths, chunksize=chunk))


def _record(path: Path, root: Path, package: str, entry: dict) -> ModuleRecord:
    return ModuleRecord(entry=entry, **record_layout(path, root, package))


def record_layout(
    path: Path,
    root: Path,
    package: str,
    folders: dict[Path, tuple[str, ...] | None] | None = None,
) -> dict[str, Any]:
    """A record's fields besides its entry: its key, the path reports show, its package,
    folder and module names. ``folders``: each folder's parts below the root, as far
    as worked out already (filled in; a project's files share a few hundred folders)."""
    key = _key(path)
    parent = path.parent
    if folders is not None and parent in folders:
        below = folders[parent]
    else:
        below = folder_below(parent, root)
        if folders is not None:
            folders[parent] = below
    return {
        "key": key,
        "shown": _shown(key, root),
        "package": package_below(package, below),
        "folder": os.path.dirname(key),
        "names": names_below(path.stem, package, below),
    }


def _shown(key: str, root: Path) -> str:
    """The path reports show for the file at ``key``: relative to the root when inside."""
    top = str(root)
    if key.startswith(top + os.sep):
        return key[len(top) + 1 :]  # what relpath gives, without its normalisation
    return os.path.relpath(key, root) if key.startswith(top) else key


def _key(path: Path | str) -> str:
    """An absolute path without resolving links: discovery already refused links out of
    the tree, and ``realpath`` on every file of a large project costs more than the rest."""
    return os.path.normpath(os.path.abspath(path))


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
    project = _Project(root, store, None, tuple(sorted(set(config.model_bases))))
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
        return _with_facts(jobs, facts)
    files = read.items
    # Scanned files whose entry is not stored are parsed once, by their analysis
    # (run alone first; see PendingProject), not also here. Only for many files: a file
    # whose project facts differ from its own (a helper, a layer on a project base) is
    # then analysed twice, which costs more than parsing it once more for its entry, and
    # the pre-commit hook checks a few files, just edited.
    scanned = {_key(j.path) for j in jobs if not j.fix and j.path.endswith(".py")}

    def deferred(path: Path, data: bytes) -> bool:
        return _key(path) in scanned and _may_hold_tensorflow(data)

    entries = _Entries(store)
    later_if = deferred if len(scanned) > _PARSE_TWICE_UP_TO else None
    packages: dict[Path, str] = {}
    records = index_records(
        files, root, store, workers, later_if, project.stored, entries, packages, digests
    )
    known = {record.key for record in records}
    later = {k for j in jobs if (k := _key(j.path)) in scanned and k not in known}
    if later:
        by_path = {_key(p): (p, d) for p, d in read.complete()}
        pending = PendingProject(project, records, by_path, later, notebooks, entries)
        pending.guess = facts_guess(records, by_path, later, root, project.spec, packages)
        guesses = guess_shared_paths(records, by_path, later, root)
        planned = PlannedJobs(
            dataclasses.replace(
                j, deferred=_key(j.path) in later, shared_guess=guesses.get(_key(j.path), ())
            )
            for j in jobs
        )
        planned.pending = pending
        return planned
    facts = project.with_notebooks(project.resolve(records), records, notebooks)
    return _with_facts(jobs, facts)


_PARSE_TWICE_UP_TO = 8  # scanned files whose entries are made here rather than deferred


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class _Project:
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
        self.root_key = _digest(where.encode("utf-8", "surrogatepass"))
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
                _load_all(records),
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
                digest = _digest(read_bytes(str(path)))
            except SourceError:
                digest = "unreadable"
            parts.append(f"{_key(path)}\0{package}\0{digest}")
        return _digest("\n".join(parts).encode("utf-8", "surrogatepass"))


def _may_patch(record: ModuleRecord) -> bool:
    if isinstance(record, _StoredRecord):
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
        lazy = isinstance(record, _StoredRecord) and "_entry" not in record.__dict__
        paths = sorted(literals(record.key)) if lazy else list(record.entry["paths"])
        names[record.key] = (record.shown or record.key, paths)
    for key in later:
        if key in files:
            names[key] = (_shown(key, root), sorted(literals(key)))
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
) -> FactsGuess:
    """What the files in ``later`` are analysed with before the project is resolved
    (see :mod:`~kmigrate.project.facts_guess`): the records read already, and the
    entries of the files in ``later`` that the others need most, parsed here.
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
    known = {
        r.key: r for r in records if not isinstance(r, _StoredRecord) or "_entry" in r.__dict__
    }
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
    parsed = []
    for key in choose_providers(needs, sizes, budget):
        entry = entry_for_bytes(files[key][1])
        if entry is not None:
            parsed.append(ModuleRecord(entry=entry, **layouts[key]))

    def layout(path: Path, package: str) -> dict[str, Any]:
        found = layouts.get(_key(path))
        return found if found is not None else record_layout(path, root, package)

    return FactsGuess([*known.values(), *parsed], layout, layouts, spec, importers)


def _may_hold_tensorflow(data: bytes) -> bool:
    from kmigrate.rules.context_spec import SOURCE_MARKERS

    return any(marker in data for marker in SOURCE_MARKERS)


def _with_facts(jobs: Sequence[Job], by_key: Mapping[str, ModuleFacts]) -> list[Job]:
    attached = []
    for job in jobs:
        facts = by_key.get(_key(job.path))
        if facts is None:
            attached.append(dataclasses.replace(job, deferred=False))
            continue
        attached.append(dataclasses.replace(job, facts=facts, deferred=False))
    return attached


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

    project: _Project
    records: list[ModuleRecord]
    files: dict[str, tuple[Path, bytes]]  # by _key(path)
    deferred: set[str]  # keys of the files whose entry their analysis gives
    notebooks: list[tuple[Path, str]]  # (path, package) of the notebooks among the jobs
    entries: _Entries  # the run's entries, saved once the deferred ones are known
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
        given = {_key(job.path): report for job, report in first}
        made: dict[str, LocalFactsFrom] = {}  # local facts the first analyses made
        for key in sorted(self.deferred):
            found = self.files.get(key)
            if found is None:
                continue
            path, data = found
            # a deferred job filtered out before it ran: its entry is made here
            report = given.get(key)
            entry = report.index_entry if report is not None else entry_for_bytes(data)
            if entry is None:
                continue
            layout = self.guess.layouts.get(key) if self.guess is not None else None
            if layout is None:
                layout = record_layout(path, self.project.root, package_of(path, packages))
            records.append(ModuleRecord(entry=entry, **layout))
            self.entries.add(data, entry)
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
        return None if facts is None else facts.get(_key(job.path))

    def bytes_of(self, job: Job) -> bytes | None:
        found = self.files.get(_key(job.path))
        return found[1] if found else None

    def release(self, facts: Mapping[str, ModuleFacts]) -> None:
        """Keep only ``facts`` (every job's, by key) once the jobs have them: the files'
        bytes, the records and the resolution are not read again (the second phase
        reads its files itself), and the caller keeps the planned jobs, so a 10k-file
        scan held them through the report (190 MB of bytes alone)."""
        self.facts = dict(facts)
        self.files = {}
        self.records = []
        self.guess = None


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
    """The notebooks among ``paths`` that name saved files or reload SavedModels: a
    module's save renamed to `.keras` would break the notebook that loads the old file.
    A notebook's reloads are resolved through its own imports (nothing else binds its
    names). Entries are stored by the notebooks' bytes; ``made``: those this run made
    already (the scanned notebooks'), by key."""
    from kmigrate.project.notebook_facts import notebook_entry

    found: dict[str, FileUse] = {}
    for path in paths:
        key = _key(path)
        entry = (made or {}).get(key) or notebook_entry(path, store)
        if entry is None:
            continue
        reload = _first_reload(entry, spec)
        if entry["paths"] or reload[0]:
            found[key] = (_shown(key, root), tuple(entry["paths"]), reload)
    return found


def _first_reload(entry: dict, spec: ContextSpec) -> Reload:
    """An entry's first SavedModel reload resolved by its own imports:
    ``tf.saved_model.load`` after ``import tensorflow as tf``."""
    bound = {
        local: f"{module}.{name}" if name and module else name or module
        for local, module, name, level in entry["imports"]
        if local != "*" and not level
    }
    found = []
    for callee, line, path, folder in entry["saved_model_calls"]:
        root, _, rest = callee.partition(".")
        if path:  # the root is bound by an import in the function around the call
            qualified = path
        elif root in bound:
            qualified = f"{bound[root]}.{rest}" if rest else bound[root]
        else:
            continue
        symbol = spec.canonical(qualified)
        if spec.reloads_saved_model(symbol, folder):
            found.append((line, symbol))
    return min(found, default=NO_RELOAD)
