"""Resolution into installed packages, read as data: is a project class's base from a
third-party package (``from keras_nlp.layers import Layer``, a package's own ``keras``
re-export) a Keras class?

A type checker answers that by reading the package's files; so does this: the modules
an import path names are found on the resolution path, parsed into entries (never
imported) and resolved like the project's own, lazily and within a budget of files.
Only a base that is neither the project's, nor TensorFlow/Keras, nor the standard
library is looked up, so a scan of a project without one reads nothing outside it.
"""

from __future__ import annotations

from collections.abc import Callable

from kmigrate.engine.module_record import ModuleRecord, Target
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.engine.spec import ContextSpec

# module name -> its record read from an installed package, or None when not found
OutsideModules = Callable[[str], "ModuleRecord | None"]


class OutsideIndex(ProjectIndex):
    """A :class:`ProjectIndex` whose records are the installed modules resolution asks
    for, loaded when first named."""

    def __init__(self, spec: ContextSpec, find: OutsideModules) -> None:
        super().__init__([], spec)
        self.find = find
        self._tried: set[str] = set()
        self._start = ModuleRecord("<outside>", _EMPTY_ENTRY, "", "", ())

    def _load(self, name: str) -> None:
        if name in self._tried:
            return
        self._tried.add(name)
        if not self._foreign(("external", name)):
            return  # TensorFlow/Keras and the standard library: known by their names
        record = self.find(name)
        if record is not None:
            self.records.append(record)
            self.by_name.setdefault(name, []).append(record)
            self._roots.add(name.partition(".")[0])

    def _qualified(
        self, record: ModuleRecord, qualified: str, depth: int, module_parts: int = 0
    ) -> Target:
        parts = qualified.split(".")
        for cut in range(1, len(parts) + 1):
            self._load(".".join(parts[:cut]))
        return super()._qualified(record, qualified, depth, module_parts)

    def __call__(self, qualified: str) -> bool:
        """Whether the installed class ``qualified`` derives from a Keras base."""
        return self._is_model(self._qualified(self._start, qualified, 0))


_EMPTY_ENTRY: dict = {
    "imports": [],
    "assigns": [],
    "patches": [],
    "classes": {},
    "functions": {},
    "registries": {},
    "all": None,
}
