"""Finding installed modules by name on the resolution path, as data: the project
index reads a third-party package's files (never imports them) to tell whether a
base class from it is a Keras class (:mod:`kmigrate.engine.outside_index`).

The resolution path is the running interpreter's ``sys.path`` without the current
folder and the standard library: kmigrate installed in the project's environment sees
its packages. Reading is bounded (files and bytes), and entries are cached by content
like the project's own.
"""

from __future__ import annotations

import ast
import os
import sys
import sysconfig
import warnings
from pathlib import Path

from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.outside_index import OutsideIndex
from kmigrate.engine.project_entry import build_entry
from kmigrate.engine.sources import SourceError, decode_source, read_bytes
from kmigrate.engine.spec import ContextSpec

MAX_MODULES = 64  # installed modules read per resolution, at most
MAX_BYTES = 1_000_000  # an installed module larger than this is not read


def resolution_path() -> tuple[Path, ...]:
    """The folders installed modules are looked up in: ``sys.path`` as it is now,
    without the current folder and the standard library's folders."""
    stdlib = {
        Path(p).resolve() for key in ("stdlib", "platstdlib") if (p := sysconfig.get_path(key))
    }
    found = []
    for entry in sys.path:
        if not entry or entry == os.curdir:
            continue
        path = Path(entry)
        if path.is_dir() and path.resolve() not in stdlib:
            found.append(path)
    return tuple(dict.fromkeys(found))


class SiteModules:
    """A finder of installed modules' records by dotted name (``OutsideModules``)."""

    def __init__(
        self,
        spec: ContextSpec,
        path: tuple[Path, ...] | None = None,
        budget: int = MAX_MODULES,
    ) -> None:
        self.spec = spec
        self.path = path
        self.budget = budget
        self.found: dict[str, ModuleRecord | None] = {}

    def __call__(self, name: str) -> ModuleRecord | None:
        if name not in self.found:
            self.found[name] = self._find(name) if self.budget > 0 else None
        return self.found[name]

    def _find(self, name: str) -> ModuleRecord | None:
        if self.path is None:
            self.path = resolution_path()
        parts = name.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        for folder in self.path:
            package = folder.joinpath(*parts)
            for file, own_package in (
                (package / "__init__.py", name),
                (package.with_name(parts[-1] + ".py"), name.rpartition(".")[0]),
            ):
                if file.is_file():
                    return self._record(name, file, own_package)
        return None

    def _record(self, name: str, file: Path, package: str) -> ModuleRecord | None:
        """The record of module ``name`` read from ``file`` (the first found on the path
        is the one Python imports: a later one is not looked at)."""
        try:
            if file.stat().st_size > MAX_BYTES:
                return None
            data = read_bytes(str(file))
        except (OSError, SourceError):
            return None
        self.budget -= 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                entry = build_entry(ast.parse(decode_source(data).text), self.spec)
        except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return ModuleRecord(str(file), entry, package, str(file.parent), (name,))


def outside_models(spec: ContextSpec) -> OutsideIndex:
    """Whether a class of an installed package is a Keras class, read from the files on
    the resolution path (``ProjectIndex(outside=...)``)."""
    return OutsideIndex(spec, SiteModules(spec))
