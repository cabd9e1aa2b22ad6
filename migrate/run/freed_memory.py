"""Give the memory a run has let go of back to the system, between a scan's phases.

CPython frees large objects (a file's bytes, a report's findings) with ``free``, and
glibc keeps the freed pages in its heaps: they are reused by later allocations of the
same thread only, and the results of the workers arrive in another thread. Without
this, a 10k-file scan kept the 100 MB of bytes read for planning, and the first
phase's index entries, in its resident memory to the end.
"""

from __future__ import annotations

import ctypes
import sys


def give_back_freed_memory() -> None:
    """``malloc_trim(0)``: free pages of every heap back to the system (Linux/glibc
    only; elsewhere, or without it, nothing happens)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return
    trim(0)
