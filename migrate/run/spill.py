"""A cold scan's gathered reports kept on disk, not in the parent's memory, until the
report reads them (:func:`spill_report`).

A two-phase scan (:func:`kmigrate.run.runner._run_in_two_phases`) gathers every file's
report in the parent while the project is resolved and the rest analysed: at 10k files,
each report's packed findings and their JSON text (``FileReport.digest``) were 80 MB held
through the project's resolution, the run's peak. What the report needs of them is read
back one file at a time: the JSON report joins each file's text as it writes it, and
findings are decoded from the bytes they were packed in when something reads them.

The spill is an unnamed temporary file (``tempfile.TemporaryFile``: on POSIX unlinked as
soon as it is made), so nothing is left on disk however the run ends, an error or an
interrupt included: its space goes back when its last reader lets go of it or the
process ends. A spill that cannot be made or written (no room) leaves the report in
memory, as it was: spilling never changes what a report says.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from typing import Any

from kmigrate.engine.run_data import LazyFindings


class Spill:
    """Bytes appended to an unnamed temporary file, read back by offset and length."""

    def __init__(self, folder: str | None = None) -> None:
        self.file = tempfile.TemporaryFile(prefix="kmigrate-spill-", dir=folder)
        self.size = 0
        self.broken = False  # a write failed: nothing more is put here

    def put(self, data: bytes) -> int | None:
        """Where ``data`` now lies, or None when it could not be written."""
        if self.broken or self.file.closed:
            return None
        fd, at, view = self.file.fileno(), self.size, memoryview(data)
        try:
            while view:
                view = view[os.pwrite(fd, view, at + len(data) - len(view)) :]
        except OSError:
            self.broken = True
            return None
        self.size += len(data)
        return at

    def get(self, offset: int, length: int) -> bytes:
        data = os.pread(self.file.fileno(), length, offset)
        while len(data) < length:  # a short read: the rest of it
            more = os.pread(self.file.fileno(), length - len(data), offset + len(data))
            if not more:
                raise OSError(f"the spill file ends before byte {offset + length}")
            data += more
        return data

    def close(self) -> None:
        self.file.close()


class SpilledFindings(LazyFindings):
    """A report's undecoded findings (a worker's ``PackedFindings`` or the cache's
    ``StoredFindings``, ``kind``), their bytes in a :class:`Spill`: read back and decoded
    as ``kind`` decodes them when the report's findings are first read."""

    __slots__ = ("spill", "offset", "length", "kind")

    def __init__(self, spill: Spill, offset: int, length: int, kind: type, count: int) -> None:
        super().__init__(b"", count)
        self.spill, self.offset, self.length, self.kind = spill, offset, length, kind

    def unspilled(self) -> LazyFindings:
        return self.kind(self.spill.get(self.offset, self.length), self.count)

    def decode(self) -> list:
        return self.unspilled().decode()

    def __reduce__(self) -> Any:  # pickled (a report sent elsewhere): as it was
        unspilled = self.unspilled()
        return (self.kind, (unspilled.data, unspilled.count))


class SpilledText:
    """A report's findings as the JSON report writes them (``FindingsDigest.text``), in a
    :class:`Spill`: ``str()`` reads it back (:func:`written_text`)."""

    __slots__ = ("spill", "offset", "length")

    def __init__(self, spill: Spill, offset: int, length: int) -> None:
        self.spill, self.offset, self.length = spill, offset, length

    def __str__(self) -> str:
        return self.spill.get(self.offset, self.length).decode("utf-8", "surrogatepass")

    def __reduce__(self) -> Any:
        return (str, (str(self),))


def written_text(text: Any) -> str | None:
    """A digest's text, read back if it was spilled (None stays None)."""
    return text if text is None or type(text) is str else str(text)


def spill_report(report: Any, spill: Spill) -> None:
    """Move, in place, the undecoded findings of a scan ``report`` and its digest's text
    (when the digest stands for them) into ``spill``. A report whose findings are
    decoded (made in this process), or none, is left as it is; so is every report once
    the spill cannot be written."""
    known = vars(report)
    stored = known.get("_stored")
    if not isinstance(stored, LazyFindings) or isinstance(stored, SpilledFindings):
        return
    digest = known.get("digest")
    fits = digest is not None and digest.fits(report)
    text = digest.text if fits and type(digest.text) is str else None
    written = text.encode("utf-8", "surrogatepass") if text else b""
    offset = spill.put(stored.data + written if written else stored.data)
    if offset is None:
        return
    size = len(stored.data)
    spilled = SpilledFindings(spill, offset, size, type(stored), stored.count)
    report._stored = spilled
    if fits:
        moved = SpilledText(spill, offset + size, len(written)) if written else digest.text
        report.digest = replace(digest, of=spilled, text=moved)


def open_spill() -> Spill | None:
    """A new spill in the temporary folder, or None when none can be made there."""
    try:
        return Spill()
    except OSError:
        return None
