"""Reading the scanned tree's own small files (config, CI, ``.gitignore``) as data.

The tree may be hostile: a ``Dockerfile`` that is a FIFO would block a plain ``open``
forever, a ``keras.json`` linked to ``/dev/zero`` would be read until memory runs out,
and a ``.gitignore`` or ``pyproject.toml`` linked out of the tree would pull a file of
the user's into the run. So such a file is read only when its real path lies inside
the tree, it is a regular file (opened without blocking, checked on the open handle),
and it is small.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from kmigrate.engine.sources import SourceError, read_bytes

CONFIG_LIMIT = 2_000_000  # bytes: far above any real config, CI or ignore file


def real_path(path: Path | str) -> Path | None:
    """The real path, or None for a symlink loop or another error."""
    try:
        return Path(os.path.realpath(path, strict=True))
    except (OSError, RuntimeError, ValueError):
        return None


def is_inside(path: Path, folders: Iterable[Path]) -> bool:
    """Whether the real ``path`` lies in one of the real ``folders``."""
    return any(path == folder or folder in path.parents for folder in folders)


def read_tree_file(
    path: Path | str, inside: Iterable[Path], limit: int = CONFIG_LIMIT
) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes whose
    real path lies in one of the real folders ``inside``; None otherwise."""
    real = real_path(path)
    if real is None or not is_inside(real, inside):
        return None
    try:
        return read_bytes(real, limit)
    except SourceError:
        return None
