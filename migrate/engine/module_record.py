"""One indexed file as resolution reads it (:class:`ModuleRecord`: its entry, its
dotted names, the package of its relative imports), the absolute paths its imports
name, and what a name resolves to (:data:`Target`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kmigrate.engine.module_facts import Node


@dataclass
class ModuleRecord:
    """One indexed file: its entry, its dotted names and the package of its
    relative imports."""

    key: str  # the file's path as the caller knows it
    entry: dict
    package: str
    folder: str  # for sibling imports of top-level scripts
    names: tuple[str, ...] = ()
    shown: str = ""  # the path as reports show it
    _bound: dict[str, list[tuple]] | None = field(default=None, repr=False)

    def bound(self) -> dict[str, list[tuple]]:
        """Module-level name -> how it is bound, in source order: ("class",), ("function",),
        ("import", module, name|None, level), ("assign", dotted)."""
        if self._bound is None:
            bound: dict[str, list[tuple]] = {}
            for local, module, name, level in self.entry["imports"]:
                if local != "*":
                    bound.setdefault(local, []).append(("import", module, name, level))
            for local, source in self.entry["assigns"]:
                bound.setdefault(local, []).append(("assign", source))
            for name in self.entry["functions"]:
                bound.setdefault(name, []).insert(0, ("function",))
            for name in self.entry["registries"]:
                bound.setdefault(name, []).insert(0, ("registry",))
            for name in self.entry["classes"]:
                bound.setdefault(name, []).insert(0, ("class",))
            self._bound = bound
        return self._bound

    def stars(self) -> list[tuple[str, int]]:
        return [(m, level) for local, m, _, level in self.entry["imports"] if local == "*"]

    def exports(self, name: str) -> bool:
        """Whether ``from this import *`` binds ``name``."""
        exported = self.entry["all"]
        if exported is not None:
            return name in exported
        return not name.startswith("_") and (name in self.bound() or bool(self.stars()))


def absolute_module(record: ModuleRecord, module: str, level: int) -> str:
    """The absolute name of ``module`` imported at ``level`` (dots) from ``record``."""
    if not level:
        return module
    parts = record.package.split(".") if record.package else []
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    base = ".".join(parts)
    return f"{base}.{module}" if base and module else base or module


def _import_paths(record: ModuleRecord) -> Iterator[tuple[str, str, bool]]:
    """(local name, absolute path, whether a star import) of each import of ``record``."""
    for local, module, name, level in record.entry["imports"]:
        base = absolute_module(record, module, level)
        if name == "*":
            yield local, base, True
        else:
            yield local, f"{base}.{name}" if name and base else name or base, False


def import_paths(record: ModuleRecord) -> list[str]:
    """The absolute dotted paths ``record``'s imports name (as ``ProjectIndex._way``
    builds them): resolving any name of ``record`` only looks up project modules whose
    name is a prefix of one of them or lies below one (:func:`path_reaches`)."""
    return sorted({path for _, path, _ in _import_paths(record)})


def imported_paths(record: ModuleRecord) -> list[str]:
    """What ``ModuleFacts.imported_by`` is made from: the paths ``record``'s imports
    name (``m.K``), those of the attributes it reads from what they bind (``import m
    as b`` then ``b.K``: ``m.K``), ``m!`` where the object is used as it is (passed or
    stored: anything may be read from it), and ``m.*`` for a module named only in
    ``from m import *`` (which takes the names ``m`` exports)."""
    reads = record.entry["reads"]
    stars, others = set(), set()
    for local, path, star in _import_paths(record):
        if star:
            stars.add(path)
            continue
        others.add(path)
        read = reads.get(local, ("!",))  # not followed (``tensorflow``): anything
        others.update(path + ("!" if r == "!" else f".{r}") for r in read)
    return sorted(others | {f"{star}.*" for star in stars - others})


# A resolved target: ("external", qualified) | ("class", record, name) |
# ("function", record, name) | ("module", record) | ("unknown",) |
# ("ambiguous", text) or ("ambiguous", text, (node, ...)): the project functions it may be
Target = tuple


def alternatives(targets: Iterable[Target]) -> tuple[Node, ...]:
    """The project functions (as call-graph nodes) any of ``targets`` may be."""
    found: set[Node] = set()
    for target in targets:
        if target[0] == "function":
            found.add((target[1].key, target[2]))
        elif target[0] == "ambiguous" and len(target) > 2:
            found.update(target[2])
    return tuple(sorted(found))
