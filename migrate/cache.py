"""The result cache: a file's scan result, keyed by what decides it.

A re-scan should only analyse what changed. Each file's result is stored under a
hash of its bytes plus everything else that shapes the result for that file (its
reported path, package, per-file ignores), inside a folder for one *run key*:
the kmigrate version, a fingerprint of kmigrate's own code (so an edited rule
never serves stale findings), the Python version (``ast`` differs between
versions), the selected rule ids, the config's ``cache_key()`` and the
``KMIGRATE_*`` environment variables that change results (size limits).

Layout, under ``.kmigrate_cache/`` at the project root (or ``$KMIGRATE_CACHE_DIR``)::

    .kmigrate_cache/.gitignore       "*": the folder never shows up in ``git status``
    .kmigrate_cache/CACHEDIR.TAG     backup tools skip it
    .kmigrate_cache/<run key>/<file key>    one pickled FileReport per file version

An entry serves reports, not ``apply``: a finding keeps whether it is fixable but
not its edit plan, nor the node text its fingerprint was made from
(:func:`trim_for_reports`; a scan's report uses neither, and ``apply`` analyses a
file with fixes again), so entries are smaller and load faster. The runner
trims every scan result alike, so a result never depends on whether it came from the
cache.

Entries are private to kmigrate and versioned (``FORMAT`` + the run key), so
pickle is safe here: nothing else writes them. Writes are atomic (temporary file
+ rename) so parallel workers and concurrent runs never see half an entry; a
corrupt or unreadable entry is a miss. Only the most recent ``KEEP_RUNS`` run
keys are kept, and entries not rewritten for ``MAX_AGE_DAYS`` are dropped, so the
folder does not grow without bound. A cache that cannot be written (read-only
tree) silently turns itself off.
"""

from __future__ import annotations

import copyreg
import dataclasses
import hashlib
import io
import os
import pickle
import shutil
import sys
import tempfile
import time
from operator import attrgetter
from pathlib import Path
from typing import Any

from kmigrate import __version__
from kmigrate.model import EditPlan, Finding

FORMAT = 2  # 2: findings without edit plans and fingerprint inputs, pickled by constructor
_MAGIC = b"KMC%d\n" % FORMAT
CACHE_DIR_NAME = ".kmigrate_cache"
ENV_DIR = "KMIGRATE_CACHE_DIR"
KEEP_RUNS = 8
MAX_AGE_DAYS = 30
_PRUNE_MARKER = ".last-prune"
_CODE_SUFFIXES = (".py", ".tsv", ".toml", ".json", ".txt", ".yaml", ".html")
# The fix of a trimmed fixable finding: it says "fixable", and nothing about how.
FIX_NOT_KEPT = EditPlan(edits=(), description="(not kept in scan results)")


def trim_for_reports(report: Any) -> None:
    """Drop, in place, what only ``apply`` uses from a scan report's findings: edit
    plans (replaced by :data:`FIX_NOT_KEPT`, so ``fixable`` holds). (``source_text``,
    the fingerprint's input, is dropped by ``fingerprint_findings`` already.)

    Edit plans are many small objects (edits, arguments, spans): without them a scan
    result or cache entry pickles in half the time and loads in two thirds.
    """
    for finding in getattr(report, "findings", ()):
        if finding.fix is not None:
            finding.fix = FIX_NOT_KEPT


_FINDING_FIELDS = dataclasses.fields(Finding)
_finding_args = attrgetter(*(item.name for item in _FINDING_FIELDS))


def _reduce_finding(finding: Finding) -> tuple:
    """Pickle a finding as a call of its constructor. Loading then runs ``__init__``,
    which is a third faster than pickle's default (an empty object, then an attribute
    dict to copy into it): tens of thousands of findings load on every warm run."""
    return Finding, _finding_args(finding)


# The picklers' reducers, plus the finding's when every field is a constructor argument.
_REDUCERS = dict(copyreg.dispatch_table)
if all(item.init for item in _FINDING_FIELDS):
    _REDUCERS[Finding] = _reduce_finding


def _pickled(value: Any) -> bytes:
    """``pickle.dumps(value)``, findings by constructor (see :func:`_reduce_finding`)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _REDUCERS
    pickler.dump(value)
    return buffer.getvalue()


def code_fingerprint() -> str:
    """A digest of kmigrate's own files (name, size, mtime): edits to a rule or to
    the engine invalidate every cached result, even without a version bump."""
    import kmigrate
    import kmigrate.rules

    digest = hashlib.blake2b(digest_size=12)
    for package in (kmigrate, kmigrate.rules):
        for folder in getattr(package, "__path__", ()):
            _fingerprint_tree(Path(folder), digest)
    return digest.hexdigest()


def _fingerprint_tree(folder: Path, digest: Any) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name == "__pycache__" or entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            _fingerprint_tree(Path(entry.path), digest)
        elif entry.name.endswith(_CODE_SUFFIXES):
            stat = entry.stat()
            digest.update(f"{entry.path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())


def run_key(rule_ids: tuple[str, ...], config_key: str, fingerprint: str | None = None) -> str:
    """The folder name for one (kmigrate build, rule selection, config) combination."""
    parts = (
        FORMAT,
        __version__,
        fingerprint if fingerprint is not None else code_fingerprint(),
        sys.version_info[:2],
        tuple(rule_ids),
        config_key,
        # KMIGRATE_MAX_FILE_MB and friends change results; the cache location does not
        sorted((k, v) for k, v in os.environ.items() if k.startswith("KMIGRATE_") and k != ENV_DIR),
    )
    return hashlib.blake2b(repr(parts).encode(), digest_size=10).hexdigest()


def cache_root(project_root: Path) -> Path:
    """Where the cache lives: ``$KMIGRATE_CACHE_DIR`` or ``<project root>/.kmigrate_cache``."""
    override = os.environ.get(ENV_DIR)
    return Path(override) if override else Path(project_root) / CACHE_DIR_NAME


@dataclasses.dataclass
class ResultCache:
    """The entries of one run key. Picklable, so worker processes can write entries."""

    folder: Path
    writable: bool = True

    @classmethod
    def open(cls, project_root: Path, rule_ids: tuple[str, ...], config_key: str) -> ResultCache:
        root = cache_root(project_root)
        return cls(root / run_key(rule_ids, config_key))

    # -- keys --------------------------------------------------------------------
    @staticmethod
    def entry_key(job: Any, data: bytes) -> str:
        """Key of one file version: its bytes and the job's fields that shape the
        result (everything but the filesystem path and the fix flag)."""
        digest = hashlib.blake2b(data, digest_size=16)
        if dataclasses.is_dataclass(job):
            for item in dataclasses.fields(job):
                if item.name not in ("path", "fix"):
                    digest.update(f"\0{item.name}={getattr(job, item.name)!r}".encode())
        return digest.hexdigest()

    # -- reading -----------------------------------------------------------------
    def load(self, key: str) -> Any | None:
        """The stored result for ``key``, or None (missing, corrupt, other format)."""
        try:
            with open(self.folder / key, "rb") as handle:
                blob = handle.read()
        except OSError:
            return None
        if not blob.startswith(_MAGIC):
            return None
        try:
            return pickle.loads(memoryview(blob)[len(_MAGIC) :])
        except Exception:  # noqa: BLE001 - a damaged entry is only a miss
            return None

    # -- writing -----------------------------------------------------------------
    def prepare(self) -> bool:
        """Create the folders (with ``.gitignore`` and ``CACHEDIR.TAG``), mark this run
        key as recently used and prune old ones. False when the cache cannot be written."""
        if not self.writable:
            return False
        root = self.folder.parent
        try:
            fresh_root = not root.is_dir()
            self.folder.mkdir(parents=True, exist_ok=True)
            if fresh_root or not (root / ".gitignore").is_file():
                (root / ".gitignore").write_text("# created by kmigrate\n*\n", encoding="utf-8")
                (root / "CACHEDIR.TAG").write_text(
                    "Signature: 8a477f597d28d172789f06886806bc55\n"
                    "# This file is a cache directory tag created by kmigrate.\n",
                    encoding="utf-8",
                )
            os.utime(self.folder)
        except OSError:
            self.writable = False
            return False
        self._prune()
        return True

    def store(self, key: str, value: Any) -> None:
        """Write one entry atomically; failures only mean the entry is not cached.

        ``value`` (a file's report) is trimmed first, in place (:func:`trim_for_reports`):
        the caller goes on with what a later cache hit returns.
        """
        trim_for_reports(value)
        if not self.writable:
            return
        try:
            blob = _pickled(value)
        except Exception:  # noqa: BLE001 - an unpicklable result is simply not cached
            return
        try:
            handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=self.folder)
        except OSError:
            self.writable = False
            return
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(_MAGIC)
                out.write(blob)
            os.replace(temp, self.folder / key)
        except OSError:
            try:
                os.unlink(temp)
            except OSError:
                pass

    # -- housekeeping ------------------------------------------------------------
    def _prune(self) -> None:
        """Drop run keys beyond the ``KEEP_RUNS`` most recently used, and (at most
        once a day) entries of this run key older than ``MAX_AGE_DAYS``."""
        root = self.folder.parent
        try:
            runs = [
                entry
                for entry in os.scandir(root)
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")
            ]
            if len(runs) > KEEP_RUNS:
                runs.sort(key=lambda e: e.stat().st_mtime, reverse=True)
                for old in runs[KEEP_RUNS:]:
                    if old.path != str(self.folder):
                        shutil.rmtree(old.path, ignore_errors=True)
            marker = self.folder / _PRUNE_MARKER
            now = time.time()
            if marker.is_file() and now - marker.stat().st_mtime < 86400:
                return
            marker.touch()
            limit = now - MAX_AGE_DAYS * 86400
            for entry in os.scandir(self.folder):
                if entry.name != _PRUNE_MARKER and entry.stat().st_mtime < limit:
                    os.unlink(entry.path)
        except OSError:
            pass
