"""Which kmigrate the tests exercise: always this checkout, never another install.

Many tests run ``python -m kmigrate`` in a subprocess from a temporary folder. What that
imports depends on the interpreter's installs, not on the folder the tests live in, so a
stale or foreign kmigrate would be tested silently. These helpers say where the package
comes from and fail when it is not this checkout (the mutation check relies on it too).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_WHERE = "import kmigrate, kmigrate.rules; print(kmigrate.__file__); print(kmigrate.rules.__file__)"


def imported_files(env: Mapping[str, str] | None = None) -> list[Path]:
    """kmigrate's and kmigrate.rules' files as a fresh interpreter run elsewhere sees them."""
    done = subprocess.run(
        [sys.executable, "-c", _WHERE],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env=dict(os.environ if env is None else env),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [Path(line).resolve() for line in done.stdout.split()]


def outside_checkout(files: list[Path]) -> list[Path]:
    """The files among ``files`` that do not lie in this checkout."""
    return [f for f in files if not f.is_relative_to(ROOT)]
