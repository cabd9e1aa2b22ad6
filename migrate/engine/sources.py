"""Reading and writing source files without losing anything.

A file is decoded the way Python would (BOM, PEP 263 cookie, UTF-8 default) and
its text is kept with its original line endings, so that writing the same text
back gives the same bytes. Writes are atomic: a temporary file in the same
folder, the original's mode (and owner, when allowed) copied, ``fsync``, then
``os.replace``; SIGINT/SIGTERM arriving meanwhile are held back until the file is
either fully replaced or untouched and the temporary file is gone.
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import io
import os
import stat
import tempfile
import threading
import tokenize
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

TEMP_SUFFIX = ".kmigrate"  # temporary files are ".<name>.<random>.kmigrate"


class SourceError(Exception):
    """A file that cannot be read as Python source; the message says why."""


class WriteRefusedError(PermissionError):
    """A write kmigrate will not make (read-only file, hard links); the file is untouched."""


@dataclass(frozen=True)
class SourceText:
    """The decoded text of a file and what is needed to write it back identically."""

    text: str
    encoding: str  # as Python names it; "utf-8-sig" when the file has a BOM
    data: bytes  # the original bytes

    def encode(self, text: str) -> bytes:
        """``text`` in the file's encoding (BOM included); UnicodeEncodeError if impossible."""
        return text.encode(self.encoding)


def decode_source(data: bytes) -> SourceText:
    """Decode bytes as the Python tokenizer would; raise SourceError when impossible."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"bad encoding declaration: {error}") from None
    try:
        codecs.lookup(encoding)
        text = data.decode(encoding)
    except (LookupError, UnicodeDecodeError) as error:
        raise SourceError(f"cannot decode as {encoding}: {error}") from None
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        text = text[1:]
    return SourceText(text=text, encoding=encoding, data=data)


# Size limits: above them a file is most likely generated, and LibCST needs about
# 1.5 GB of memory and tens of seconds per MB of dense code. Environment overrides.
MAX_FILE_MB = 10.0  # scan: larger files are reported (KM901), not analysed
MAX_REWRITE_MB = 1.0  # apply: larger files are scanned but not rewritten


def size_limit(variable: str, default_mb: float) -> int:
    """A byte limit from environment variable ``variable`` (in MB), else the default."""
    try:
        value = float(os.environ.get(variable, default_mb))
    except ValueError:
        value = default_mb
    return int(value * 1_000_000) if value > 0 else 2**63


def megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


class FileTooLargeError(SourceError):
    """A file above the size limit; it was not read (``size`` in bytes)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{megabytes(size)} is above the {megabytes(limit)} limit")
        self.size = size
        self.limit = limit


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def open_for_reading(path: Path | str) -> int:
    """A read handle that never blocks (the one place every source read opens a file)."""
    return os.open(path, _READ_FLAGS)


def read_bytes(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of a regular file; SourceError (with the reason) for FIFOs,
    devices, folders and files that cannot be read.

    The file is opened without blocking (a FIFO put in its place after a ``stat``
    would otherwise hang the run) and checked with ``fstat`` on that handle, and no
    more than the size limit is ever read: by default ``KMIGRATE_MAX_FILE_MB``, since
    every caller would otherwise hold, and most parse, a file the scan refuses (a
    12 MB generated module cost the project index 2.5 GB). FileTooLargeError says so
    without reading it.
    """
    if limit is None:
        limit = size_limit("KMIGRATE_MAX_FILE_MB", MAX_FILE_MB)
    try:
        handle = open_for_reading(path)
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError("a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file")
        if info.st_size > limit:
            raise FileTooLargeError(info.st_size, limit)
        return _read_at_most(handle, info.st_size, limit)
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None
    finally:
        os.close(handle)


def _read_at_most(handle: int, expected: int, limit: int) -> bytes:
    """All of ``handle`` (``expected`` bytes by its fstat), or FileTooLargeError once it
    holds more than ``limit``: a file still being written can grow past its fstat."""
    chunks = []
    total = 0
    want = expected + 1  # one more than fstat said: 0 bytes then means the end
    while True:
        chunk = os.read(handle, max(1, min(want, limit + 1 - total, 1 << 24)))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise FileTooLargeError(total, limit)
        want = 1 << 20


def read_source(path: Path) -> SourceText:
    """Read and decode a file; raise SourceError with a readable reason."""
    return decode_source(read_bytes(path))


def write_refusal(path: Path) -> str | None:
    """Why kmigrate must not rewrite ``path`` in place, or None.

    Read-only means no write permission bit at all (so ``chmod a-w`` is honoured
    even by root, for whom ``os.access`` always says yes) or no access for us. A
    file with several hard links is refused too: an atomic replace would silently
    split it from its other names.
    """
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a device or a pipe cannot be replaced by a rewrite)"
    if not stat.S_IMODE(info.st_mode) & 0o222 or not os.access(path, os.W_OK):
        return "the file is read-only"
    if info.st_nlink > 1:
        return f"the file has {info.st_nlink} hard links (an atomic rewrite would split them)"
    return None


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the duration of the block, then deliver them.

    Only in the main thread (signal handlers live there); elsewhere a no-op.
    """
    import signal  # only writes need it: a scan that reads files starts without it

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    wanted = [s for s in (signal.SIGINT, signal.SIGTERM) if s is not None]
    previous = {}
    for signum in wanted:
        try:
            previous[signum] = signal.signal(signum, lambda n, _frame: received.append(n))
        except (ValueError, OSError):  # pragma: no cover - embedded interpreters
            pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)  # now handled as it would have been


# What a writer below puts in its file: the bytes, or a function that writes them to
# the (binary) temporary file piece by piece (a report streamed as it is laid out; an
# error it raises leaves no file behind, and the old file as it was).
Content = bytes | Callable[[BinaryIO], object]


def _fill(temp: BinaryIO, data: Content) -> None:
    if callable(data):
        data(temp)
    else:
        temp.write(data)


def write_atomic(path: Path, data: Content) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits and owner.

    The file is either untouched or fully replaced, also when the process is
    interrupted (SIGINT/SIGTERM wait until the replace is done) or ``data`` (a
    function, see :data:`Content`) fails; the temporary file never outlives the
    call. Symlinks are written through (the link stays a link). Read-only and
    hard-linked files are refused with :class:`WriteRefusedError`.
    """
    path = Path(path)
    refusal = write_refusal(path)
    if refusal:
        raise WriteRefusedError(f"{refusal}; left unchanged")
    target = path.resolve()  # write through symlinks, keep the link
    info = target.stat()
    with deferred_signals():
        handle, temp_name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent
        )
        try:
            with os.fdopen(handle, "wb") as temp:
                _fill(temp, data)
                temp.flush()
                os.fsync(temp.fileno())
            os.chmod(temp_name, stat.S_IMODE(info.st_mode))
            if hasattr(os, "chown") and (info.st_uid, info.st_gid) != _owner(temp_name):
                with contextlib.suppress(OSError):  # only root may give files away
                    os.chown(temp_name, info.st_uid, info.st_gid)
            os.replace(temp_name, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name)
            raise
        _fsync_folder(target.parent)


def write_new(path: Path, data: Content) -> None:
    """Create ``path`` with ``data`` (mode 0o644 less the umask), atomically: the file
    appears whole or not at all; an existing file is never replaced (FileExistsError:
    someone else created it since the run looked)."""
    path = Path(path)
    with deferred_signals():
        handle, temp_name = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent
        )
        try:
            with os.fdopen(handle, "wb") as temp:
                _fill(temp, data)
                temp.flush()
                os.fsync(temp.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temp_name, 0o644 & ~umask)
            os.link(temp_name, path)  # fails if the file exists
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name)
        _fsync_folder(path.parent)


def write_whole(path: Path, data: Content) -> None:
    """Write a file kmigrate owns (a report, a baseline) so that it is either the old
    file or the whole new one: :func:`write_atomic` when it exists, :func:`write_new`
    otherwise. On a full disk the old file is intact and no empty file is left; the
    OSError is the caller's to report. A device or a pipe (``-o /dev/null``,
    ``/dev/stdout``) is written into as it is: replacing it would put a regular file
    where the device was (as root, ``/dev/null`` itself)."""
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        with open(path, "wb") as stream:
            _fill(stream, data)
        return
    if os.path.lexists(path):
        write_atomic(path, data)
    else:
        write_new(path, data)


def _owner(name: str) -> tuple[int, int]:
    info = os.stat(name)
    return info.st_uid, info.st_gid


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (best effort; not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def parse_or_none(text: str) -> ast.Module | None:
    """``ast.parse`` of source text, or None when it is not Python this interpreter reads.
    Legacy code's invalid escape sequences only warn; the warnings are kept quiet."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
