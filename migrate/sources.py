"""Reading and writing source files without losing anything.

A file is decoded the way Python would (BOM, PEP 263 cookie, UTF-8 default) and
its text is kept with its original line endings, so that writing the same text
back gives the same bytes. Writes are atomic: a temporary file in the same
folder, the original's mode copied, then ``os.replace``.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path


class SourceError(Exception):
    """A file that cannot be read as Python source; the message says why."""


@dataclass(frozen=True)
class SourceText:
    """The decoded text of a file and what is needed to write it back identically."""

    text: str
    encoding: str  # as Python names it; "utf-8-sig" when the file has a BOM
    data: bytes  # the original bytes

    def encode(self, text: str) -> bytes:
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


def read_source(path: Path) -> SourceText:
    """Read and decode a file; raise SourceError with a readable reason."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    return decode_source(data)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits.

    Refuses read-only files instead of replacing them behind the owner's back.
    """
    if not os.access(path, os.W_OK):
        raise PermissionError(f"{path} is read-only; left unchanged")
    mode = stat.S_IMODE(path.stat().st_mode)
    target = path.resolve()  # write through symlinks, keep the link
    handle, temp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".kmigrate", dir=target.parent
    )
    try:
        with os.fdopen(handle, "wb") as temp:
            temp.write(data)
            temp.flush()
            os.fsync(temp.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except BaseException:
        try:
            os.unlink(temp_name)
        except FileNotFoundError:
            pass
        raise
