"""Which files a project's index covers and their bytes: the config root's Python
files (excluded ones left out), each read and hashed, or known unchanged by its stat
against the stored resolution (:class:`ProjectFiles`)."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from kmigrate.engine.sources import SourceError, read_bytes
from kmigrate.project.discover import discover
from kmigrate.project.stored_resolution import StoredResolution

MAX_INDEXED_FILES = 20_000  # beyond this, files are analysed alone


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
            key = index_key(path)
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
            self.digests[key] = content_digest(data)
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


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def index_key(path: Path | str) -> str:
    """An absolute path without resolving links: discovery already refused links out of
    the tree, and ``realpath`` on every file of a large project costs more than the rest."""
    return os.path.normpath(os.path.abspath(path))


def shown_path(key: str, root: Path) -> str:
    """The path reports show for the file at ``key``: relative to the root when inside."""
    top = str(root)
    if key.startswith(top + os.sep):
        return key[len(top) + 1 :]  # what relpath gives, without its normalisation
    return os.path.relpath(key, root) if key.startswith(top) else key
