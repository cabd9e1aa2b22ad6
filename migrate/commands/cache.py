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
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kmigrate import __version__
from kmigrate.commands.jobs import LazyFindings
from kmigrate.engine.model import Context, EditPlan, Finding, Severity, Span

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
# The fix of a trimmed fixable finding: it says "fixable", and nothing about how.
FIX_NOT_KEPT = EditPlan(edits=(), description="(not kept in scan results)")

T = TypeVar("T")


class InvalidEntryError(ValueError):
    """A stored value that does not have the expected shape: the entry is a miss."""


def trim_for_reports(report: Any) -> None:
    """Drop, in place, what only ``apply`` uses from a scan report's findings: edit
    plans (replaced by :data:`FIX_NOT_KEPT`, so ``fixable`` holds). (``source_text``,
    the fingerprint's input, is dropped by ``fingerprint_findings`` already.)

    Edit plans are many small objects (edits, arguments, spans): a scan result without
    them crosses from a worker process in half the time.
    """
    for finding in getattr(report, "findings", ()):
        if finding.fix is not None:
            finding.fix = FIX_NOT_KEPT


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
    folder = root_folder.joinpath(*folders)
    if os.path.lexists(root_folder) and not is_real_dir(root_folder):
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    chain = [root_folder, *(root_folder.joinpath(*folders[:n]) for n in range(1, len(folders) + 1))]
    if not all(is_real_dir(f) for f in chain):
        return None
    return ResultCache(folder, secret=secret)


def _write_atomic(folder: Path, name: str, data: bytes) -> bool:
    """Write ``folder/name`` through a temporary file and a rename: a symlink planted
    at that name is replaced, never written through."""
    try:
        handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
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
        body = self._load_body(namespace, key)
        if body is None:
            return None
        try:
            return decode(json.loads(body))
        except (ValueError, TypeError, KeyError, IndexError, RecursionError):
            return None  # InvalidEntryError and json's errors are ValueErrors

    def load_bytes(self, namespace: str, key: str) -> bytes | None:
        """The bytes stored under ``(namespace, key)`` (:meth:`store_bytes`) when their
        MAC holds, else None. They are this machine's, not yet checked for shape."""
        return self._load_body(namespace, key)

    def _load_body(self, namespace: str, key: str) -> bytes | None:
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
            data = body.encode("utf-8")
            if text is not None:  # compact JSON has no raw newline: the first one ends it
                data += b"\n" + text.encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
            return False
        return self.store_bytes(namespace, key, data)

    def store_bytes(self, namespace: str, key: str, data: bytes) -> bool:
        """Store ``data`` as it is under ``(namespace, key)``, signed like any entry, for
        a value laid out by its owner (its reader checks its shape); False when it was
        not stored."""
        name = self._entry_name(namespace, key)
        if name is None or not self.writable or self.secret is None:
            return False
        if len(data) + _HEADER_BYTES > MAX_ENTRY_BYTES or not self._folder_is_safe():
            return False
        header = _MAGIC + self._mac(name, data) + b"\n"
        return _write_atomic(self.folder, name, b"".join((header, data)))

    @staticmethod
    def _entry_name(namespace: str, key: str) -> str | None:
        if not (_NAME.match(namespace) and _KEY.match(key)):
            return None
        return f"{namespace}.{key}"

    def _mac(self, name: str, body: bytes) -> bytes:
        """Hex MAC over the run key, the entry's name and its body: an entry moved to
        another key or another run key fails it, as does one made without the secret."""
        digest = hashlib.blake2b(key=self.secret or b"", digest_size=_MAC_BYTES)
        digest.update(f"kmigrate-cache/{FORMAT}\0{self.folder.name}\0{name}\0".encode())
        digest.update(body)
        return digest.hexdigest().encode("ascii")

    def _folder_is_safe(self) -> bool:
        """The cache folder and the root above it are real folders, not symlinks a
        repository planted to send reads or writes elsewhere."""
        if self._safe is None:
            self._safe = is_real_dir(self.folder) and is_real_dir(self.folder.parent)
        return self._safe

    # -- scan results ----------------------------------------------------------------
    def load(self, key: str) -> Any | None:
        """The stored scan result (a ``FileReport``) for ``key``, or None.

        The entry is the result's JSON (with how many findings it has); after a newline,
        its findings (:func:`encode_report`'s ``strings`` and ``findings``) as compact
        JSON; after another, its findings as the JSON report writes them
        (``FileReport.digest``) when it was stored with them. The findings are decoded
        when first read (:class:`StoredFindings`): the JSON report of a warm re-scan
        reads only the counts and that text."""
        body = self._load_body(RESULTS, key)
        if body is None:
            return None
        head, _, tail = body.partition(b"\n")
        findings, newline, written = tail.partition(b"\n")
        try:
            rendered = written.decode("utf-8") if newline else None
            return decode_report(json.loads(head), findings, rendered)
        except (ValueError, TypeError, KeyError, IndexError, RecursionError):
            return None  # InvalidEntryError, json's and UTF-8's errors are ValueErrors

    def store_result(self, key: str, value: dict, text: str | None = None) -> bool:
        """Store what :func:`encode_report` made of a result, laid out as :meth:`load`
        reads it (``text``: its findings as the JSON report writes them); False when it
        was not stored."""
        head = dict(value)
        findings = [head.pop("strings"), head.pop("findings")]
        head["findings"] = len(findings[1]) if type(findings[1]) is list else None
        try:
            rows = json.dumps(findings, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return False
        # compact JSON has no raw newline: the first two end the result and its findings
        return self.store_value(RESULTS, key, head, rows if text is None else f"{rows}\n{text}")

    def store(self, key: str, value: Any) -> None:
        """Store one scan result; failures only mean the entry is not cached.

        ``value`` (a file's report) is trimmed first, in place (:func:`trim_for_reports`):
        the caller goes on with what a later cache hit returns.
        """
        trim_for_reports(value)
        if self.writable and self.secret is not None:
            digest_findings(value)
            encoded = encode_report(value)
            if encoded is not None:
                self.store_result(key, encoded, value.digest.text)

    # -- folders and housekeeping -------------------------------------------------------
    def prepare(self) -> bool:
        """Create the folders (with ``.gitignore`` and ``CACHEDIR.TAG``), mark this run
        key as recently used and prune old ones. False when the cache cannot be written."""
        if not self.writable or self.secret is None:
            self.writable = False
            return False
        root = self.folder.parent
        if os.path.lexists(root) and not is_real_dir(root):
            self.writable = False  # a link (planted by the tree?): not followed
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            self.writable = False
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


# -- scan results as plain data ------------------------------------------------------
#
# A result is a JSON object; each finding a JSON array: rule, severity, message, path,
# line, column, end_line, end_column, context, symbol, fixable, fingerprint, scope, extra.
# Arrays rather than objects, and every text that repeats (rule, message, path, symbol,
# scope) as an index into the result's own string table: a warm re-scan decodes tens of
# thousands of findings, and this halves what JSON parses and allocates (pickle's memo
# did the same). Severity and context are indexes into the enums. Only scan results are
# stored: an ``apply`` result (with rewritten text) is never cached.

_SEVERITIES = tuple(Severity)
_CONTEXTS = tuple(Context)
_SEVERITY_CODE = {member: index for index, member in enumerate(_SEVERITIES)}
_CONTEXT_CODE = {member: index for index, member in enumerate(_CONTEXTS)}
_EXTRA_VALUE = (str, int, bool, type(None))


def digest_findings(report: Any) -> None:
    """Attach to a scan ``FileReport`` what the reports need of its findings
    (``report.digest``: their counts, and their text as the JSON report writes them, in
    report order), for the cache entry and for the report of this run. No text when a
    finding names another file: then the file's findings are not one run of the
    report's sorted list."""
    from kmigrate.commands.jobs import FileReport, FindingsDigest
    from kmigrate.report.json_report import findings_items
    from kmigrate.report.summary import count_findings

    if not isinstance(report, FileReport):
        return
    if report.digest is not None and report.digest.fits(report):
        return  # made by the worker already
    findings = report.findings
    text = None
    if all(finding.path == report.path for finding in findings):
        text = findings_items(sorted(findings, key=Finding.sort_key))
    counts = count_findings(findings)
    report.digest = FindingsDigest(counts, text, findings, len(findings), report.path)


def encode_report(report: Any) -> dict | None:
    """A scan ``FileReport`` as plain data; None for what is not a scan result."""
    from kmigrate.commands.jobs import FileReport

    if not isinstance(report, FileReport):
        return None
    strings: dict[str, int] = {}
    ref = strings.setdefault
    rows = []
    for finding in report.findings:
        span = finding.span
        rows.append(
            [
                ref(finding.rule, len(strings)),
                _SEVERITY_CODE[finding.severity],
                ref(finding.message, len(strings)),
                ref(finding.path, len(strings)),
                span.line,
                span.column,
                span.end_line,
                span.end_column,
                _CONTEXT_CODE[finding.context],
                ref(finding.symbol, len(strings)),
                finding.fixable,  # a fix of its own, or one apply makes in a later round
                finding.fingerprint,
                ref(finding.scope_name, len(strings)),
                finding.extra,
            ]
        )
    return {
        "path": report.path,
        "strings": list(strings),
        "findings": rows,
        "uses_tensorflow": report.uses_tensorflow,
        "parsed": report.parsed,
        "unused_suppressions": [list(item) for item in report.unused_suppressions],
        "tf_statements": report.tf_statements,
        "tf_leftovers": report.tf_leftovers,
        "counts": _encode_counts(report),
        "mentions_backend": report.mentions_backend,
    }


def _encode_counts(report: Any) -> list | None:
    """The digest's counts: [blocked now, blocked after apply, [rule, context, severity,
    fixable, how many]...], kinds by enum index like the findings."""
    digest = report.digest
    if digest is None or not digest.fits(report):
        return None
    counts = digest.counts
    kinds = [
        [rule, _CONTEXT_CODE[context], _SEVERITY_CODE[severity], fixable, count]
        for rule, context, severity, fixable, count in counts.kinds
    ]
    return [counts.blocked_now, counts.blocked_after_apply, kinds]


def _text(value: Any) -> str:
    if type(value) is not str or len(value) > MAX_TEXT:
        raise InvalidEntryError("not a string")
    return value


def _count(value: Any) -> int:
    if type(value) is not int or not 0 <= value < _MAX_LINE:
        raise InvalidEntryError("not a count")
    return value


def _flag(value: Any) -> bool:
    if value is not True and value is not False:
        raise InvalidEntryError("not a boolean")
    return value


def _rows(value: Any) -> list:
    if type(value) is not list or len(value) > MAX_COUNT:
        raise InvalidEntryError("not a list")
    return value


def _decode_finding(row: Any, strings: list[str]) -> Finding:
    """One finding from its row. The checks are written out rather than calls per
    field: a warm re-scan decodes tens of thousands of rows. A text index that is not
    an int inside ``strings`` raises IndexError or TypeError, a miss like any other
    (every string is bounded by ``MAX_ENTRY_BYTES``, so none is measured)."""
    if type(row) is not list:
        raise InvalidEntryError("a finding is not a list")
    # one unpacking: a row of another length raises ValueError
    (
        rule,
        severity,
        message,
        path,
        line,
        column,
        end_line,
        end_column,
        context,
        symbol,
        fixable,
        fingerprint,
        scope_name,
        extra,
    ) = row
    if not (
        type(line) is type(column) is type(end_line) is type(end_column) is int
        and 0 <= line < _MAX_LINE
        and 0 <= column < _MAX_LINE
        and 0 <= end_line < _MAX_LINE
        and 0 <= end_column < _MAX_LINE
        and type(severity) is type(context) is int
        and severity >= 0
        and context >= 0
        and (fixable is True or fixable is False)
        and type(fingerprint) is str
        and type(extra) is dict
    ):
        raise InvalidEntryError("a finding has a field of the wrong type")
    if extra:
        _check_extra(extra)
    return Finding(
        strings[rule],
        _SEVERITIES[severity],
        strings[message],
        strings[path],
        Span(line, column, end_line, end_column),
        _CONTEXTS[context],
        strings[symbol],
        FIX_NOT_KEPT if fixable else None,
        fingerprint,
        strings[scope_name],
        "",
        extra,
    )


def _check_extra(extra: dict) -> None:
    """A finding's extra fields (a notebook cell): a few names with plain values."""
    if len(extra) > 16:
        raise InvalidEntryError("too many extra fields")
    for name, item in extra.items():
        _text(name)
        if not isinstance(item, _EXTRA_VALUE):
            raise InvalidEntryError("extra holds more than plain values")


class StoredFindings(LazyFindings):
    """A cached result's findings as stored (:func:`encode_report`'s ``strings`` and
    ``findings``, as compact JSON), decoded into ``Finding`` objects when a report first
    reads them (``FileReport.findings``). A warm re-scan whose report needs only each
    file's counts and written findings (the JSON report) decodes none of them.

    The entry's MAC covers these bytes, so they are what this build of kmigrate wrote on
    this machine; they are still checked row by row when decoded, and rows that do not
    fit raise :class:`InvalidEntryError` then (a kmigrate bug: the entry was read already,
    too late to be a miss)."""

    __slots__ = ()

    def decode(self) -> list[Finding]:
        try:
            strings, rows = json.loads(self.data)  # another shape: ValueError or TypeError
            for text_item in _rows(strings):
                _text(text_item)
            findings = [_decode_finding(row, strings) for row in _rows(rows)]
        except (ValueError, TypeError, KeyError, IndexError, RecursionError) as error:
            raise InvalidEntryError(f"a cached result's findings do not fit: {error}") from None
        if len(findings) != self.count:
            raise InvalidEntryError("a cached result does not hold the findings it counts")
        return findings


def decode_report(value: Any, findings: bytes = b"", text: str | None = None) -> Any:
    """A ``FileReport`` from what :func:`encode_report` stored, laid out as
    :meth:`ResultCache.store_result` writes it: ``value`` without its findings (their
    number in their place), the ``findings`` themselves (JSON, decoded when first read:
    :class:`StoredFindings`) and their ``text`` as the JSON report writes them; raises
    :class:`InvalidEntryError` (or ``KeyError``, ``IndexError``, ``TypeError``) when
    ``value`` does not fit."""
    from kmigrate.commands.jobs import FileReport, FindingsDigest

    if type(value) is not dict:
        raise InvalidEntryError("not an object")
    tf_statements = value["tf_statements"]
    left = value["tf_leftovers"]  # an entry written before it was stored: a miss
    mentions_backend = value["mentions_backend"]
    unused = []
    for item in _rows(value["unused_suppressions"]):
        if type(item) is not list or len(item) != 2:
            raise InvalidEntryError("an unused suppression has the wrong shape")
        unused.append((_count(item[0]), _text(item[1])))
    count = _count(value["findings"])
    if count and not findings:
        raise InvalidEntryError("the findings are missing")
    fields = {
        "path": _text(value["path"]),
        "uses_tensorflow": _flag(value["uses_tensorflow"]),
        "parsed": _flag(value["parsed"]),
        "unused_suppressions": unused,
        "tf_statements": None if tf_statements is None else _count(tf_statements),
        "tf_leftovers": None if left is None else [_text(name) for name in _rows(left)],
        "mentions_backend": None if mentions_backend is None else _flag(mentions_backend),
    }
    if count:
        of = StoredFindings(findings, count)
        report = FileReport.with_stored_findings(of, **fields)
    else:
        report = FileReport(**fields)
        of = report.findings
    stored = value.get("counts")
    if stored is not None:
        counts = _decode_counts(stored, count)
        report.digest = FindingsDigest(counts, text, of, count, report.path)
    return report


def _decode_counts(value: Any, findings: int) -> Any:
    """The digest's counts (see :func:`_encode_counts`), which must add up to the
    result's ``findings``. The checks are written out, as in :func:`_decode_finding`:
    a warm re-scan decodes every cached result's counts."""
    from kmigrate.commands.jobs import FindingCounts

    blocked_now, blocked_after_apply, rows = value  # another length: ValueError
    kinds = []
    total = 0
    for row in _rows(rows):
        rule, context, severity, fixable, count = row  # another length: ValueError
        if not (
            type(rule) is str
            and len(rule) <= MAX_TEXT
            and type(context) is type(severity) is type(count) is int
            and context >= 0
            and severity >= 0
            and 0 < count < _MAX_LINE
            and (fixable is True or fixable is False)
        ):
            raise InvalidEntryError("a count has a field of the wrong type")
        kinds.append((rule, _CONTEXTS[context], _SEVERITIES[severity], fixable, count))
        total += count
    if total != findings:
        raise InvalidEntryError("the counts are not those of the findings")
    return FindingCounts(tuple(kinds), _count(blocked_now), _count(blocked_after_apply))
