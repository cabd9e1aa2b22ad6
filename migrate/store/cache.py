"""The result cache: a file's scan result, keyed by what decides it, stored as plain
data that this machine signed.

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
    .kmigrate_cache/<run key>/<namespace>.<key>   one entry: a signed JSON value

The folder sits in the scanned tree, so the tree controls what is in it: a
repository can commit a ``.kmigrate_cache/`` whose entries sit exactly where a scan
looks (every key is computable from public inputs). Two things keep that harmless
(docs/security.md):

- **An entry is data.** It is JSON, read with :func:`json.loads` and checked field by
  field (types, allowed values, sizes) before any object is built from it; a value
  that does not fit is a miss. Nothing in an entry can name a class or run code (the
  format it replaced, pickle, could do both). A scan result's findings are decoded,
  and checked, when first read (:class:`StoredFindings`).
- **An entry is bound to this machine.** Its first line carries a keyed BLAKE2b MAC
  over the entry's run key, namespace, key and body, with a random 32-byte secret
  kept outside the tree, in the user's cache folder (:func:`secret_path`). An entry
  the repository planted, or copied from another file's key, fails the MAC and is a
  miss, so it can neither run code nor hide or invent findings. Without a usable
  secret (no home folder) the cache turns itself off.

Besides scan results, the store holds any plain-data value per *(namespace, key)*
(:meth:`ResultCache.store_value` / :meth:`ResultCache.load_value`, keys from
:func:`content_key`), under the same run key, MAC and limits, and bytes laid out by
their owner, who checks their shape when reading them (:meth:`ResultCache.store_bytes`
/ :meth:`ResultCache.load_bytes`: the stored resolution, read row by row).

An entry serves reports, not ``apply``: a finding keeps whether it is fixable but
not its edit plan, nor the node text its fingerprint was made from
(:func:`trim_for_reports`; a scan's report uses neither, and ``apply`` analyses a
file with fixes again). The runner trims every scan result alike, so a result
never depends on whether it came from the cache.

Writes are atomic (temporary file + rename, which replaces a planted symlink rather
than writing through it), so parallel workers and concurrent runs never see half an
entry. Entries are opened without following links or blocking (a planted FIFO is a
miss, not a hang). Only the most recent ``KEEP_RUNS`` run keys are kept, and entries
not rewritten for ``MAX_AGE_DAYS`` are dropped, so the folder does not grow without
bound. A cache that cannot be written (read-only tree) silently turns itself off; a
cache folder that is a symlink is not used at all.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import hmac
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from kmigrate import __version__

# 3: signed JSON (1 and 2 were pickles, never read again); 4: scan results without
# apply's fields (``fixed``, ``error``): entries of 3 are misses; 5: a scan result may
# be followed by its findings as the JSON report writes them; 6: a scan result's
# findings on a line of their own (decoded only when read), and whether the file names
# a backend variable
FORMAT = 6
_MAGIC = b"KMC%d " % FORMAT
_MAC_BYTES = 32
_HEADER_BYTES = len(_MAGIC) + 2 * _MAC_BYTES + 1  # magic, hex MAC, newline
CACHE_DIR_NAME = ".kmigrate_cache"
ENV_DIR = "KMIGRATE_CACHE_DIR"
SECRET_NAME = "cache-secret"
KEEP_RUNS = 8
MAX_AGE_DAYS = 30
MAX_ENTRY_BYTES = 32 << 20  # no scan result of a 10 MB file comes near it
MAX_TEXT = 1 << 20  # one string in a result (a message, a path)
MAX_COUNT = 1 << 20  # findings (or unused suppressions) in one result
_MAX_LINE = 1 << 31
RESULTS = "result"  # the namespace of scan results
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")
_KEY = re.compile(r"[A-Za-z0-9_-]{1,128}\Z")
_PRUNE_MARKER = ".last-prune"
_CODE_SUFFIXES = (".py", ".tsv", ".toml", ".json", ".txt", ".yaml", ".html")

T = TypeVar("T")


class InvalidEntryError(ValueError):
    """A stored value that does not have the expected shape: the entry is a miss."""


# -- keys ------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of kmigrate's own files (name, size, mtime): edits to a rule or to
    the engine invalidate every cached result, even without a version bump.

    Worked out once per process: the rule table, the result cache and the stored
    resolution all key on it (a process runs the code it loaded, even if the files
    change under it)."""
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
            stat_result = entry.stat()
            digest.update(
                f"{entry.path}\0{stat_result.st_size}\0{stat_result.st_mtime_ns}\n".encode()
            )


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


def content_key(data: bytes, *parts: str) -> str:
    """A store key for a value computed from ``data`` (a file's bytes) and ``parts``
    (anything else the value depends on): 32 hex digits."""
    digest = hashlib.blake2b(data, digest_size=16)
    for part in parts:
        digest.update(b"\0" + part.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


# -- where things live -------------------------------------------------------------


def cache_root(project_root: Path) -> Path:
    """Where the cache lives: ``$KMIGRATE_CACHE_DIR`` or ``<project root>/.kmigrate_cache``."""
    override = os.environ.get(ENV_DIR)
    return Path(override).resolve() if override else Path(project_root) / CACHE_DIR_NAME


def user_cache_dir() -> Path:
    """The platform's per-user cache folder: ``$XDG_CACHE_HOME`` or ``~/.cache`` on
    Linux and other Unixes, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base) if base else Path.home() / "AppData" / "Local"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    base = os.environ.get("XDG_CACHE_HOME")
    return Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"


def secret_path() -> Path:
    """The file holding this user's cache secret (never inside a scanned tree)."""
    return user_cache_dir() / "kmigrate" / SECRET_NAME


def machine_secret() -> bytes | None:
    """This user's 32-byte cache secret, created on first use; None when it can be
    neither read nor created (the cache is then off)."""
    path = secret_path()
    secret = _read_secret(path)
    if secret is not None:
        return secret
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)  # mode 0600
        with os.fdopen(handle, "w", encoding="ascii") as out:
            out.write(os.urandom(_MAC_BYTES).hex() + "\n")
        try:
            os.link(temp, path)  # never replaces a secret another process just made
        except FileExistsError:
            pass
        except OSError:  # no hard links (some file systems): last writer wins
            os.replace(temp, path)
        finally:
            if os.path.lexists(temp):
                os.unlink(temp)
    except OSError:
        return None
    return _read_secret(path)


def _read_secret(path: Path) -> bytes | None:
    text = _read_regular(path, 4 * _MAC_BYTES)
    if text is None:
        return None
    try:
        secret = bytes.fromhex(text.decode("ascii").strip())
    except ValueError:
        return None
    return secret if len(secret) == _MAC_BYTES else None


def _read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a link, FIFO or device) of
    at most ``limit`` bytes; None otherwise. Never blocks."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_BINARY", 0)
    try:
        handle = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = os.read(handle, info.st_size + 1)
        # More than fstat said: it is being written (entries never are: they are renamed
        # into place). A short read leaves a truncated entry, which its MAC rejects.
        return data if len(data) <= info.st_size else None
    except OSError:
        return None
    finally:
        os.close(handle)


def is_real_dir(path: Path) -> bool:
    """Whether ``path`` is a folder itself, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def side_store(project_root: Path, *folders: str) -> ResultCache | None:
    """A signed store in ``folders`` under the project's cache root (the first one a
    dot-folder: out of run-key pruning), for values that outlive one run key; None when
    there is no machine secret or a folder is not a real folder (a link the tree planted
    is never followed) or cannot be made."""
    secret = machine_secret()
    if secret is None:
        return None
    root_folder = cache_root(project_root)
    chain = [root_folder, *(root_folder.joinpath(*folders[:n]) for n in range(1, len(folders) + 1))]
    if not make_real_dirs(chain):
        return None
    return ResultCache(chain[-1], secret=secret)


def make_real_dirs(chain: list[Path]) -> bool:
    """Make each folder of ``chain`` (each one the parent of the next) unless it is
    there, checking every link of the chain before the next ``mkdir``: a symlink
    planted anywhere in it (``.kmigrate_cache/.index -> /elsewhere``) stops the walk
    before anything is created in its target. False when a folder is a link, not a
    folder, or cannot be made."""
    for number, folder in enumerate(chain):
        if not os.path.lexists(folder):
            try:  # only the first (the cache root, maybe $KMIGRATE_CACHE_DIR) gets parents
                folder.mkdir(parents=number == 0, exist_ok=True)
            except OSError:
                return False
        if not is_real_dir(folder):
            return False
    return True


def _write_atomic(folder: Path, name: str, data: bytes | Sequence[bytes]) -> bool:
    """Write ``folder/name`` through a temporary file and a rename: a symlink planted
    at that name is replaced, never written through. ``data``: the bytes, or pieces
    written one after the other (never joined: a large entry is not held twice)."""
    try:
        handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            if isinstance(data, bytes):
                out.write(data)
            else:
                out.writelines(data)
        os.replace(temp, folder / name)
        return True
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
        return False


# -- the store -----------------------------------------------------------------------


@dataclasses.dataclass
class ResultCache:
    """The entries of one run key. Picklable, so worker processes can write entries.

    ``secret`` is the machine secret (:func:`machine_secret`); without it nothing is
    read or written.
    """

    folder: Path
    writable: bool = True
    secret: bytes | None = dataclasses.field(default=None, repr=False)
    _safe: bool | None = dataclasses.field(default=None, repr=False, compare=False)

    @classmethod
    def open(cls, project_root: Path, rule_ids: tuple[str, ...], config_key: str) -> ResultCache:
        secret = machine_secret()
        root = cache_root(project_root)
        return cls(root / run_key(rule_ids, config_key), writable=secret is not None, secret=secret)

    @staticmethod
    def entry_key(job: Any, data: bytes) -> str:
        """Key of one file version: its bytes and the job's fields that shape the
        result (everything but the filesystem path and the fix flag)."""
        parts = []
        if dataclasses.is_dataclass(job):
            for item in dataclasses.fields(job):
                if item.name not in ("path", "fix"):
                    parts.append(f"{item.name}={getattr(job, item.name)!r}")
        return content_key(data, *parts)

    # -- any plain-data value --------------------------------------------------------
    def load_value(self, namespace: str, key: str, decode: Callable[[Any], T]) -> T | None:
        """The value stored under ``(namespace, key)``, as ``decode`` builds it from the
        JSON value (``decode`` raises :class:`InvalidEntryError`, ``ValueError``, ``TypeError``,
        ``KeyError`` or ``IndexError`` when the value does not fit); None on a miss:
        absent, unsigned or signed by another machine, damaged, or rejected by ``decode``.
        """
        body = self.load_body(namespace, key)
        if body is None:
            return None
        try:
            return decode(json.loads(body))
        except (ValueError, TypeError, KeyError, IndexError, RecursionError):
            return None  # InvalidEntryError and json's errors are ValueErrors

    def load_bytes(self, namespace: str, key: str) -> bytes | None:
        """The bytes stored under ``(namespace, key)`` (:meth:`store_bytes`) when their
        MAC holds, else None. They are this machine's, not yet checked for shape."""
        return self.load_body(namespace, key)

    def load_body(self, namespace: str, key: str) -> bytes | None:
        """The body of the entry ``(namespace, key)`` when its MAC holds, else None."""
        name = self._entry_name(namespace, key)
        if name is None or self.secret is None or not self._folder_is_safe():
            return None
        blob = _read_regular(self.folder / name, MAX_ENTRY_BYTES)
        if blob is None or len(blob) < _HEADER_BYTES or not blob.startswith(_MAGIC):
            return None
        if blob[_HEADER_BYTES - 1] != 0x0A:  # the newline after the MAC
            return None
        body = blob[_HEADER_BYTES:]
        if not hmac.compare_digest(blob[len(_MAGIC) : _HEADER_BYTES - 1], self._mac(name, body)):
            return None
        return body

    def store_value(self, namespace: str, key: str, value: Any, text: str | None = None) -> bool:
        """Store a JSON-able ``value`` (dicts with string keys, lists, strings, numbers,
        booleans, None) under ``(namespace, key)``; False when it was not stored (the
        cache is off, the value is not plain data or too large, the disk is full).

        ``text``: a long text kept after the JSON, on its own (see :meth:`load`), rather
        than as a JSON string, whose escapes make it slow to read back."""
        name = self._entry_name(namespace, key)
        if name is None or not self.writable or self.secret is None:
            return False
        try:
            body = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            pieces = [body.encode("utf-8")]
            del body  # a large value (the index's pack) is not held as text and bytes
            if text is not None:  # compact JSON has no raw newline: the first one ends it
                pieces += [b"\n", text.encode("utf-8")]
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
            return False
        return self.store_bytes(namespace, key, pieces)

    def store_bytes(self, namespace: str, key: str, data: bytes | Sequence[bytes]) -> bool:
        """Store ``data`` as it is under ``(namespace, key)``, signed like any entry, for
        a value laid out by its owner (its reader checks its shape); False when it was
        not stored. ``data``: the bytes, or pieces whose join they are (signed and
        written piece by piece, never joined: a 10k-file project's resolution or index
        pack, 25 MB each, was held two or three times while it was written)."""
        name = self._entry_name(namespace, key)
        if name is None or not self.writable or self.secret is None:
            return False
        pieces = (data,) if isinstance(data, bytes) else data
        size = sum(len(piece) for piece in pieces)
        if size + _HEADER_BYTES > MAX_ENTRY_BYTES or not self._folder_is_safe():
            return False
        header = _MAGIC + self._mac(name, *pieces) + b"\n"
        return _write_atomic(self.folder, name, [header, *pieces])

    @staticmethod
    def _entry_name(namespace: str, key: str) -> str | None:
        if not (_NAME.match(namespace) and _KEY.match(key)):
            return None
        return f"{namespace}.{key}"

    def _mac(self, name: str, *body: bytes) -> bytes:
        """Hex MAC over the run key, the entry's name and its body (given in pieces, or
        whole): an entry moved to another key or another run key fails it, as does one
        made without the secret."""
        digest = hashlib.blake2b(key=self.secret or b"", digest_size=_MAC_BYTES)
        digest.update(f"kmigrate-cache/{FORMAT}\0{self.folder.name}\0{name}\0".encode())
        for piece in body:
            digest.update(piece)
        return digest.hexdigest().encode("ascii")

    def _folder_is_safe(self) -> bool:
        """The cache folder and the root above it are real folders, not symlinks a
        repository planted to send reads or writes elsewhere."""
        if self._safe is None:
            self._safe = is_real_dir(self.folder) and is_real_dir(self.folder.parent)
        return self._safe

    # -- folders and housekeeping -------------------------------------------------------
    def prepare(self) -> bool:
        """Create the folders (with ``.gitignore`` and ``CACHEDIR.TAG``), mark this run
        key as recently used and prune old ones. False when the cache cannot be written."""
        if not self.writable or self.secret is None:
            self.writable = False
            return False
        root = self.folder.parent
        if not make_real_dirs([root, self.folder]):
            self.writable = False  # a link (planted by the tree?): not followed
            return False
        self._safe = None
        if not self._folder_is_safe():
            self.writable = False
            return False
        if not _is_regular(root / ".gitignore"):
            _write_atomic(root, ".gitignore", b"# created by kmigrate\n*\n")
            _write_atomic(
                root,
                "CACHEDIR.TAG",
                b"Signature: 8a477f597d28d172789f06886806bc55\n"
                b"# This file is a cache directory tag created by kmigrate.\n",
            )
        try:
            os.utime(self.folder)
        except OSError:
            self.writable = False
            return False
        self._prune()
        return True

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
                runs.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
                for old in runs[KEEP_RUNS:]:
                    if old.path != str(self.folder):
                        shutil.rmtree(old.path, ignore_errors=True)
            marker = self.folder / _PRUNE_MARKER
            now = time.time()
            if _is_regular(marker) and now - os.lstat(marker).st_mtime < 86400:
                return
            _write_atomic(self.folder, _PRUNE_MARKER, b"")
            limit = now - MAX_AGE_DAYS * 86400
            for entry in os.scandir(self.folder):
                if (
                    entry.name != _PRUNE_MARKER
                    and entry.stat(follow_symlinks=False).st_mtime < limit
                ):
                    os.unlink(entry.path)
        except OSError:
            pass


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
