"""Building the project index for a run: which files, their entries (cached by content),
and each job's :class:`~kmigrate.engine.project_index.ModuleFacts`.

The index covers the whole project (the config root), not only the files named: the
pre-commit hook checks one file, but that file's base layer and helpers live elsewhere.
Every ``.py`` file is indexed, also those without a TensorFlow/Keras marker: a package
``__init__.py`` that re-exports a base layer, or a layer module that only imports the
project's own ``K``, mentions neither.
"""

from __future__ import annotations

import ast
import dataclasses
import gc
import hashlib
import os
import re
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.commands.discover import discover
from kmigrate.engine.project_index import (
    ENTRY_FORMAT,
    ModuleFacts,
    ModuleRecord,
    ProjectIndex,
    build_entry,
    load_entry,
    module_names,
    relative_package,
    store_entry,
    valid_entry,
)
from kmigrate.engine.sources import SourceError, decode_source, read_bytes

if TYPE_CHECKING:
    from kmigrate.commands.cache import ResultCache
    from kmigrate.commands.config import Config
    from kmigrate.commands.jobs import Job

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
    from kmigrate.commands.cache import ResultCache, cache_root, is_real_dir, machine_secret

    secret = machine_secret()
    if secret is None:
        return None
    root_folder = cache_root(root)
    folder = root_folder / INDEX_FOLDER / _spec_key()
    if os.path.lexists(root_folder) and not is_real_dir(root_folder):
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not all(is_real_dir(f) for f in (root_folder, folder.parent, folder)):
        return None
    return ResultCache(folder, secret=secret)


def index_scope(paths: Sequence[Path], root: Path, exclude: Sequence[str]) -> list[Path]:
    """The files of the project the named ``paths`` belong to."""
    root = root.resolve()
    inside = all(_is_within(Path(p).resolve(), root) for p in paths)
    starts = [root] if inside else list(paths)
    found = []
    for path in discover(starts, root, exclude):
        if path.suffix == ".py":
            found.append(path)
            if len(found) > MAX_INDEXED_FILES:
                return []
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


def _entry_for_path(path: str, store: ResultCache | None) -> dict | None:
    try:
        data = read_bytes(path)
    except SourceError:
        return None
    entry = entry_for_bytes(data)
    if entry is not None and store is not None:
        store_entry(store, data, entry)
    return entry


def read_files(files: Sequence[Path]) -> list[tuple[Path, bytes]]:
    """(path, bytes) of every readable file."""
    found = []
    for path in files:
        try:
            found.append((path, read_bytes(str(path))))
        except SourceError:
            continue
    return found


def index_records(
    files: Sequence[tuple[Path, bytes]],
    root: Path,
    store: ResultCache | None,
    workers: int = 1,
    deferred: Callable[[Path, bytes], bool] | None = None,
) -> list[ModuleRecord]:
    """One record per parseable file; entries from ``store`` (the signed index cache)
    when stored. Files for which ``deferred`` says so and whose entry is not stored are
    left out: their analysis will give their entry (see :class:`PendingProject`)."""
    from kmigrate.commands.jobs import package_of

    packages: dict[Path, str] = {}
    records: list[ModuleRecord] = []
    missing: list[tuple[Path, str, bytes]] = []
    pack = _load_pack(store) if store is not None else {}
    used: dict[str, dict] = {}
    for path, data in files:
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        entry = pack.get(digest)
        if entry is None or not valid_entry(entry):
            entry = load_entry(store, data) if store is not None else None
        package = package_of(path, packages)
        if entry is None:
            if deferred is None or not deferred(path, data):
                missing.append((path, package, data))
            continue
        used[digest] = entry
        records.append(_record(path, root, package, entry))
    if store is not None and used.keys() != pack.keys():
        store.store_value(_PACK, "entries", used)
    if len(missing) >= 16 and workers > 1:
        entries = _build_in_pool([str(p) for p, _, _ in missing], store, workers)
    else:
        entries = []
        for _, _, data in missing:
            entry = entry_for_bytes(data)
            if entry is not None and store is not None:
                store_entry(store, data, entry)
            entries.append(entry)
    for (path, package, _), entry in zip(missing, entries, strict=True):
        if entry is not None:
            records.append(_record(path, root, package, entry))
    return records


# All entries of the project's last run in one file: loading a thousand small files
# costs more than parsing one large one. Per-file entries stay the source of truth.
_PACK = "pack"


def _checked_pack(value: object) -> dict[str, dict]:
    if not isinstance(value, dict):
        raise ValueError("not a pack of entries")
    return value  # each entry is validated where it is used


def _load_pack(store: ResultCache) -> dict[str, dict]:
    return store.load_value(_PACK, "entries", _checked_pack) or {}


def _build_in_pool(paths: list[str], store: ResultCache | None, workers: int) -> list[dict | None]:
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
    chunk = max(1, min(32, len(paths) // (workers * 4)))
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(_entry_for_path, paths, [store] * len(paths), chunksize=chunk))


def _record(path: Path, root: Path, package: str, entry: dict) -> ModuleRecord:
    key = _key(path)
    return ModuleRecord(
        key=key,
        shown=os.path.relpath(key, root) if key.startswith(str(root)) else key,
        entry=entry,
        package=relative_package(path, root, package),
        folder=os.path.dirname(key),
        names=module_names(path, root, package),
    )


def _key(path: Path | str) -> str:
    """An absolute path without resolving links: discovery already refused links out of
    the tree, and ``realpath`` on every file of a large project costs more than the rest."""
    return os.path.normpath(os.path.abspath(path))


def attach_facts(
    jobs: list[Job], paths: Sequence[Path], config: Config, use_cache: bool, workers: int
) -> list[Job]:
    """``jobs`` with the project index's facts about each module."""
    root = config.root.resolve()
    files = read_files(index_scope(paths, root, config.exclude))
    if not files:
        return jobs
    store = index_store(root) if use_cache else None
    project_key = _project_key(root, files)
    by_key = load_facts(store, project_key) if store is not None else None
    if by_key is None:
        # Scanned files whose entry is not stored are parsed once, by their analysis
        # (run alone first; see PendingProject), not also here.
        scanned = {_key(j.path) for j in jobs if not j.fix and j.path.endswith(".py")}

        def deferred(path: Path, data: bytes) -> bool:
            return _key(path) in scanned and _may_hold_tensorflow(data)

        records = index_records(files, root, store, workers, deferred)
        known = {record.key for record in records}
        later = {k for j in jobs if (k := _key(j.path)) in scanned and k not in known}
        if later:
            by_path = {_key(p): (p, d) for p, d in files}
            pending = PendingProject(root, store, project_key, records, by_path, later)
            guesses = guess_shared_paths(records, by_path, later, root)
            planned = PlannedJobs(
                dataclasses.replace(
                    j, deferred=_key(j.path) in later, shared_guess=guesses.get(_key(j.path), ())
                )
                for j in jobs
            )
            planned.pending = pending
            return planned
        by_key = _all_facts(records)
        if store is not None:
            store_facts(store, project_key, by_key)
    return _with_facts(jobs, by_key)


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
    names: dict[str, tuple[str, set[str]]] = {}  # key -> (shown path, file names)
    for record in records:
        names[record.key] = (record.shown or record.key, set(record.entry["paths"]))
    for key in later:
        found = files.get(key)
        if found is None:
            continue
        literals = set()
        for match in _STRING_LITERAL.finditer(found[1]):
            text = match.group(2)
            if text.endswith(suffixes):
                literals.add(text.decode("utf-8", "replace"))
        shown = os.path.relpath(key, root) if key.startswith(str(root)) else key
        names[key] = (shown, literals)
    users: dict[str, list[str]] = {}
    for shown, paths in names.values():
        for path in paths:
            users.setdefault(path, []).append(shown)
    guesses = {}
    for key in later:
        if key not in names:
            continue
        shown, paths = names[key]
        shared = []
        for path in sorted(paths):
            others = [u for u in users.get(path, ()) if u != shown]
            if others:
                shared.append((path, ", ".join(sorted(others)[:3])))
        if shared:
            guesses[key] = tuple(shared)
    return guesses


def _may_hold_tensorflow(data: bytes) -> bool:
    from kmigrate.rules.context_spec import SOURCE_MARKERS

    return any(marker in data for marker in SOURCE_MARKERS)


def _all_facts(records: list[ModuleRecord]) -> dict[str, ModuleFacts]:
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    project = ProjectIndex(records, CONTEXT_SPEC)
    return {record.key: project.facts(record) for record in records}


def _with_facts(jobs: Sequence[Job], by_key: dict[str, ModuleFacts]) -> list[Job]:
    attached = []
    for job in jobs:
        facts = by_key.get(_key(job.path))
        if facts is None or job.path.endswith(".ipynb"):
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

    root: Path
    store: ResultCache | None
    project_key: str
    records: list[ModuleRecord]
    files: dict[str, tuple[Path, bytes]]  # by _key(path)
    deferred: set[str]  # keys of the files whose entry their analysis gives

    def finish(self, first: Sequence[tuple[Job, Any]]) -> dict[str, ModuleFacts]:
        """The facts of every module, from the stored records and the entries the
        first analyses (job, report) returned."""
        from kmigrate.commands.jobs import package_of

        packages: dict[Path, str] = {}
        records = list(self.records)
        given = {_key(job.path): report.index_entry for job, report in first}
        for key in sorted(self.deferred):
            found = self.files.get(key)
            if found is None:
                continue
            path, data = found
            # a deferred job filtered out before it ran: its entry is made here
            entry = given[key] if key in given else entry_for_bytes(data)
            if entry is None:
                continue
            records.append(_record(path, self.root, package_of(path, packages), entry))
            if self.store is not None:
                store_entry(self.store, data, entry)
        by_key = _all_facts(records)
        if self.store is not None:
            store_facts(self.store, self.project_key, by_key)
        return by_key

    def bytes_of(self, job: Job) -> bytes | None:
        found = self.files.get(_key(job.path))
        return found[1] if found else None


# -- the project's facts, cached whole: a re-run on an unchanged project (the
# pre-commit hook on a file it checked before, a warm scan) resolves nothing.


def _project_key(root: Path, files: Sequence[tuple[Path, bytes]]) -> str:
    digest = hashlib.blake2b(f"{root}\0{ENTRY_FORMAT}".encode(), digest_size=16)
    for path, data in files:
        digest.update(f"{_key(path)}\0".encode())
        digest.update(hashlib.blake2b(data, digest_size=16).digest())
    return digest.hexdigest()


_FACTS_FIELDS = tuple(f.name for f in dataclasses.fields(ModuleFacts))
_PAIRED_FIELDS = frozenset({"bindings", "notes", "patched", "shared_paths"})


_FACTS = "facts"


def load_facts(store: ResultCache, project_key: str) -> dict[str, ModuleFacts] | None:
    """The stored facts of every module, or None (missing, unsigned or malformed: a miss)."""

    def decode(stored: Any) -> dict[str, ModuleFacts]:
        try:
            return {key: _facts_from_json(value) for key, value in stored.items()}
        except AttributeError as error:  # not a dict, or a record that is not one
            raise ValueError("not a facts table") from error

    return store.load_value(_FACTS, project_key, decode)


def _facts_from_json(value: dict) -> ModuleFacts:
    if set(value) != set(_FACTS_FIELDS):
        raise ValueError("not a facts record")
    fields = {}
    for name in _FACTS_FIELDS:
        items = value[name]
        if name in _PAIRED_FIELDS:
            pairs = tuple(tuple(item) for item in items)
            if not all(len(p) == 2 and all(isinstance(s, str) for s in p) for p in pairs):
                raise ValueError(name)
            fields[name] = pairs
        else:
            if not all(isinstance(item, str) for item in items):
                raise ValueError(name)
            fields[name] = tuple(items)
    return ModuleFacts(**fields)


def store_facts(store: ResultCache, project_key: str, facts: dict[str, ModuleFacts]) -> None:
    """Store the project's facts, replacing those of earlier versions of the project."""
    data = {key: dataclasses.asdict(value) for key, value in facts.items()}
    try:
        for old in store.folder.glob(f"{_FACTS}.*"):
            old.unlink(missing_ok=True)
    except OSError:
        return
    store.store_value(_FACTS, project_key, data)
