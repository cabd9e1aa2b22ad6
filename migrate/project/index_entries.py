"""Each file's index entry (``project_entry.build_entry``), stored by content in the
index store (one pack per project), made in a process pool for many files, and the
:class:`~kmigrate.engine.module_record.ModuleRecord` of each file, whose entry is read
only when resolution needs it."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.engine.module_names import folder_below, names_below, package_below
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_entry import (
    ENTRY_FORMAT,
    build_entry,
    load_entry,
    store_entry,
    store_entry_at,
    valid_entry,
)
from kmigrate.engine.sources import SourceError, decode_source, read_bytes
from kmigrate.project.project_files import content_digest, index_key, shown_path
from kmigrate.project.stored_resolution import StoredResolution

if TYPE_CHECKING:
    from kmigrate.engine.spec import ContextSpec
    from kmigrate.store.cache import ResultCache


INDEX_FOLDER = ".index"  # inside the cache root; the dot keeps it out of run-key pruning


def _spec() -> ContextSpec:
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    return CONTEXT_SPEC


def _spec_key() -> str:
    """Entries depend on the builder's format and on the spec (which keywords hand
    over functions...), the rules' fact providers included: all name the folder. Sets
    are sorted: their ``repr`` order changes from process to process."""
    spec = _spec()
    fields = {
        f.name: sorted(v) if isinstance(v, frozenset) else v
        for f in dataclasses.fields(spec)
        if f.name != "provider_source"
        for v in (getattr(spec, f.name),)
    }
    fields["providers"] = [(p.name, p.version) for p in spec.providers()]
    text = f"{ENTRY_FORMAT}\0{sorted(fields.items())!r}"
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def index_store(root: Path) -> ResultCache | None:
    """The signed plain-data store of the index under the project's cache root, or None
    when there is no machine secret or the folders are not real folders (a link the
    tree planted is never followed)."""
    from kmigrate.store.cache import side_store

    return side_store(root, INDEX_FOLDER, _spec_key())


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


def index_records(
    files: Sequence[tuple[Path, bytes | None]],
    root: Path,
    store: ResultCache | None,
    workers: int = 1,
    deferred: Callable[[Path, bytes], bool] | None = None,
    stored: StoredResolution | None = None,
    entries: IndexEntries | None = None,
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

    entries = entries if entries is not None else IndexEntries(store)
    packages = packages if packages is not None else {}
    folders: dict[Path, tuple[str, ...] | None] = {}
    records: list[ModuleRecord] = []
    missing: list[tuple[Path, str, bytes, str]] = []  # path, package, bytes, digest
    left_out = False
    for path, data in files:
        package = package_of(path, packages)
        key = index_key(path)
        digest = digests.get(key) if digests is not None else None
        if digest is None:
            digest = content_digest(data) if data is not None else ""
        if stored is not None and stored.digest(key) == digest:
            fields = record_layout(path, root, package, folders)
            records.append(StoredRecord(data, entries, stored.patches(key), **fields))
            entries.complete = False
            continue
        if data is None:
            try:
                data = read_bytes(str(path))
            except SourceError:
                continue
            digest = content_digest(data)
        entry = entries.get(data, digest, one=stored is not None)
        if entry is None:
            if deferred is None or not deferred(path, data):
                missing.append((path, package, data, digest))
            else:
                left_out = True
            continue
        entries.used[digest] = entry
        records.append(_record(path, root, package, entry))
    built = entries_for([(path, data) for path, _, data, _ in missing], workers)
    for (path, package, _, digest), entry in zip(missing, built, strict=True):
        if entry is not None:
            entries.add(digest, entry)
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


class IndexEntries:
    """The entries of one run: read from the pack of the last full run when it is read,
    else one by one; new ones saved at the end (:meth:`save`)."""

    def __init__(self, store: ResultCache | None) -> None:
        self.store = store
        self._pack: EntryPack | None = None
        self.used: dict[str, dict] = {}  # digest -> entry of every file read in full
        self.new: dict[str, dict] = {}  # digest -> entry not stored yet
        self.complete = True  # whether ``used`` holds every file's entry

    def pack(self) -> EntryPack:
        if self._pack is None:
            self._pack = _load_pack(self.store) if self.store is not None else EntryPack()
        return self._pack

    def get(self, data: bytes, digest: str, one: bool = False) -> dict | None:
        """The stored entry of ``data`` or None; ``one``: without reading the pack
        unless it was read already."""
        if not one or self._pack is not None:
            entry = self._from_pack(digest)
            if entry is not None:
                return entry
        return load_entry(self.store, data, _spec()) if self.store is not None else None

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
        return entry if entry is not None and valid_entry(entry, _spec()) else None

    def add(self, digest: str, entry: dict) -> None:
        """A new entry, of the file whose bytes have ``digest`` (:func:`content_digest`):
        kept by digest only, not with the bytes (a cold scan of 10k files held them all
        until the entries were saved)."""
        self.used[digest] = entry
        self.new[digest] = entry

    def save(self) -> None:
        """Store the new entries, and the pack when every entry is known and it changed:
        many new entries only go into the pack, a few are also stored one by one."""
        store = self.store
        if store is None:
            return
        many = len(self.new) > _ONE_BY_ONE
        if self.complete and (many or self.used.keys() != self.pack().keys()):
            _store_pack(store, self.used)
        if not (many and self.complete):
            for digest, entry in self.new.items():
                store_entry_at(store, digest, entry)
        self.new.clear()


class StoredRecord(ModuleRecord):
    """A record of a file unchanged since the stored resolution: its entry is read
    when first needed (from the store, or parsed again if it went missing)."""

    def __init__(
        self, data: bytes | None, entries: IndexEntries, patches: bool, **fields: Any
    ) -> None:
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
            entry = self._entries.known(data, content_digest(data)) or entry_for_bytes(data)
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


def load_all(records: Sequence[ModuleRecord]) -> Callable[[], None]:
    """Read every entry not read yet, the pack first (for a full resolution)."""

    def load() -> None:
        for record in records:
            if isinstance(record, StoredRecord):
                record._entries.pack()
                break
        for record in records:
            _ = record.entry

    return load


# All entries of the project's last full run in one file: loading a thousand small files
# costs more than parsing one large one, and so does writing them. A run that made
# many entries stores them only there; one that made a few stores each on its own too.
# One line per entry, its digest, a tab and the entry as compact JSON (which never holds a
# raw newline): the first run after a cold scan needs a few entries (those its changes
# reach), found and decoded alone rather than the 23 MB pack of a 10k-file tree whole.
_PACK = "pack"
_PACK_KEY = "lines"


class EntryPack:
    """The stored pack, each entry decoded when asked for (a line that is not an entry
    reads as absent; the caller validates the entry it gets, as for any stored one)."""

    def __init__(self, body: bytes = b"") -> None:
        self.body = body
        self._spans: dict[str, tuple[int, int]] | None = None

    def spans(self) -> dict[str, tuple[int, int]]:
        """Digest -> (start, end) of its entry's JSON in the body, found once."""
        if self._spans is None:
            spans: dict[str, tuple[int, int]] = {}
            body = self.body
            start = 0
            while start < len(body):
                end = body.find(b"\n", start)
                if end < 0:
                    end = len(body)
                tab = body.find(b"\t", start, end)
                if tab > start:
                    spans[body[start:tab].decode("ascii", "replace")] = (tab + 1, end)
                start = end + 1
            self._spans = spans
        return self._spans

    def get(self, digest: str) -> dict | None:
        span = self.spans().get(digest)
        if span is None:
            return None
        try:
            entry = json.loads(self.body[span[0] : span[1]])
        except (ValueError, RecursionError):
            return None
        return entry if type(entry) is dict else None

    def keys(self) -> Set[str]:
        return self.spans().keys()


def _pack_lines(entries: Mapping[str, dict]) -> list[bytes]:
    """The pack's body in pieces (one per line and newline), as :class:`EntryPack` reads it."""
    pieces: list[bytes] = []
    for digest, entry in entries.items():
        text = json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        pieces += (digest.encode("ascii"), b"\t", text.encode("utf-8"), b"\n")
    return pieces


_OLD_PACK = "pack.entries"  # the pack as one JSON value (kmigrate before the lines)


def _store_pack(store: ResultCache, entries: Mapping[str, dict]) -> None:
    try:
        pieces = _pack_lines(entries)
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        return  # not plain data: not stored (entries are, as made by build_entry)
    if store.store_bytes(_PACK, _PACK_KEY, pieces):
        with contextlib.suppress(OSError):  # no reader left for it: 23 MB at 10k files
            (store.folder / _OLD_PACK).unlink(missing_ok=True)


def _load_pack(store: ResultCache) -> EntryPack:
    body = store.load_bytes(_PACK, _PACK_KEY)
    return EntryPack(body or b"")


def entries_for(files: Sequence[tuple[Path, bytes]], workers: int = 1) -> list[dict | None]:
    """The entry of each (path, bytes) of ``files``, in order (None: unparseable): made
    by ``workers`` processes when there are enough bytes to pay for starting them (they
    read the files again, so a file changed in between gives its new bytes' entry),
    else here."""
    if workers > 1 and sum(len(data) for _, data in files) >= _POOL_FROM_BYTES:
        return _build_in_pool([str(path) for path, _ in files], workers)
    return [entry_for_bytes(data) for _, data in files]


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
    key = index_key(path)
    parent = path.parent
    if folders is not None and parent in folders:
        below = folders[parent]
    else:
        below = folder_below(parent, root)
        if folders is not None:
            folders[parent] = below
    return {
        "key": key,
        "shown": shown_path(key, root),
        "package": package_below(package, below),
        "folder": os.path.dirname(key),
        "names": names_below(path.stem, package, below),
    }
