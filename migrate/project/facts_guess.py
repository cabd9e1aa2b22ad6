"""A first guess of the project facts of files analysed before the project is resolved.

A cold scan analyses most files before their project is resolved (see
pending_project.PendingProject), with the facts each file gives about itself; a file whose
project facts turn out different is analysed again. Many differences come from the
few modules the others import names from: a backend module re-exporting ``K`` and
``keras``, a module of base layers. So before the first analyses, those modules are
indexed (their bytes are read already: those the most bytes of other files need first,
within a budget), and each file is analysed with the facts it gets from a small index
of itself and the modules its imports reach among them. It is only a guess: the runner
still compares it with the resolved project and analyses again where it differs, so
the output never depends on it, only the number of analyses does. (Functions that are
model code because another module's layer calls them cannot be guessed this way: the
callers are not indexed yet.)
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.engine.module_facts import LocalFactsFrom, ModuleFacts
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_entry import build_entry
from kmigrate.engine.project_facts import ProjectFacts, closure, imported_from
from kmigrate.engine.project_index import ProjectIndex

if TYPE_CHECKING:
    from kmigrate.engine.spec import ContextSpec
    from kmigrate.engine.tree_index import TreeIndex

# Read from bytes, so these also see strings and comments, and miss the odd spelling
# (``import a, b``, a backslash continuation): a wrong guess costs a parse or an
# analysis, never a wrong answer.
_FROM_IMPORT = re.compile(rb"from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\r\n]*)")
_CLASS_BASES = re.compile(rb"class[ \t]+\w+[ \t]*\(([^)]*)\)")
_NAME = re.compile(rb"[A-Za-z_]\w*")

# The files indexed before the first analyses are parsed twice: their bytes stay below
# this share of the bytes of the files analysed first.
BUDGET_SHARE = 0.25


class FactsGuess:
    """The project modules known before the first analyses, and each file's facts
    from the part of them its imports reach (workers forked while the runner holds it
    inherit it; others analyse files with their own facts alone)."""

    def __init__(
        self,
        records: Iterable[ModuleRecord],
        layout: Callable[[Path, str], dict[str, Any]],
        layouts: dict[str, dict[str, Any]],
        spec: ContextSpec,
        importers: dict[str, list[str]] | None = None,
        keras_project: bool = False,
    ) -> None:
        """``layout``: a file's record fields but its entry, from its path and package
        (``index_entries.record_layout``, for this project's root); ``layouts``: those
        of the files to analyse, by key, worked out already; ``importers``: import
        path -> the files (as shown) whose imports are known or guessed to name it
        (``ModuleFacts.imported_by``); ``keras_project``: whether the project is
        guessed to use Keras (``ModuleFacts.keras_project``; from the files' bytes)."""
        self.layout = layout
        self.keras_project = keras_project
        self.layouts = layouts
        self.spec = spec
        self.importers = importers or {}
        self.by_name: dict[str, list[ModuleRecord]] = {}
        for record in records:
            for name in record.names:
                self.by_name.setdefault(name, []).append(record)
        self.roots = {name.partition(".")[0] for name in self.by_name}
        self._paths = ProjectIndex([], spec)  # for import_paths, which reads only the record
        self._reach: dict[str, dict[str, ModuleRecord]] = {}
        self._known_keys = {record.key for records in self.by_name.values() for record in records}
        self._named_of: dict[str, tuple[ModuleRecord, list[ModuleRecord]]] = {}

    def facts(
        self, tree: ast.Module, path: str, package: str, index: TreeIndex | None = None
    ) -> tuple[ModuleFacts, dict, LocalFactsFrom | None]:
        """The facts of the module at ``path`` (parsed: ``tree``, whose :class:`TreeIndex`
        is ``index`` when the caller has it) as an index of itself and the known modules
        its imports reach gives them, its index entry, and the local facts that index
        made, for the project's resolution to take where they are its own (None when
        the index met the depth bound: see ``ProjectIndex.order_sensitive``)."""
        entry = build_entry(tree, self.spec, index)
        record = ModuleRecord(entry=entry, **self.layout(Path(path), package))
        index = ProjectIndex([record, *self.reached(record)], self.spec)
        files = {record.key: (record.shown or record.key, entry["paths"])}
        local, made = index.local_with_reads(record)
        facts = ProjectFacts(
            {record.key: local}, files, index.patched_symbols(), providers=self.spec.providers()
        )[record.key]
        if self.keras_project and not facts.keras_project:
            facts = replace(facts, keras_project=True)
        if local.namespace_imports:
            shown = record.shown or record.key
            imported_by = imported_from(self.importers, record.names, shown, local)
            facts = replace(facts, imported_by=imported_by)
        return facts, entry, made

    def reached(self, record: ModuleRecord) -> list[ModuleRecord]:
        """The known modules ``record``'s imports name, and theirs, and so on: those
        resolving its names reads (packages above a module included; modules below an
        imported package are not, which only makes the guess poorer)."""
        found: dict[str, ModuleRecord] = {}
        for other in self._named(record):
            found.update(self._closure(other))
        found.pop(record.key, None)
        return [found[key] for key in sorted(found)]

    def _named(self, record: ModuleRecord) -> list[ModuleRecord]:
        """The known modules ``record``'s imports name directly (worked out once per
        known module: every closure through it asks again)."""
        known = self._named_of.get(record.key)
        if known is not None and known[0] is record:
            return known[1]
        named_list = self._named_now(record)
        if record.key in self._known_keys:
            self._named_of[record.key] = (record, named_list)
        return named_list

    def _named_now(self, record: ModuleRecord) -> list[ModuleRecord]:
        named: dict[int, ModuleRecord] = {}
        by_name = self.by_name
        for path in self._paths.import_paths(record):
            parts = path.split(".")
            if parts[0] not in self.roots:
                continue
            for cut in range(1, len(parts) + 1):
                for other in by_name.get(".".join(parts[:cut]), ()):
                    named[id(other)] = other
        return list(named.values())

    def _closure(self, start: ModuleRecord) -> dict[str, ModuleRecord]:
        """``start`` and the known modules it reaches, worked out once per module (a
        module reached whose own closure is known brings it whole: at 10k files a file
        reached 85 modules on average, and closures were walked again module by module)."""
        found = self._reach.get(start.key)
        if found is None:
            found = {}
            todo = [start]
            while todo:
                current = todo.pop()
                if current.key in found:
                    continue
                known = self._reach.get(current.key) if current is not start else None
                if known is not None:
                    found.update(known)
                    continue
                found[current.key] = current
                todo.extend(self._named(current))
            self._reach[start.key] = found
        return found


def useful_imports(
    data: bytes, package: str, roots: set[str], is_module: Callable[[str], bool]
) -> set[str]:
    """Absolute dotted paths (as ``ProjectIndex.import_paths`` gives them) of the
    from-imports of project modules (their first part in ``roots``) in one file's
    bytes that may change its facts: a star import, a name used as a class base
    (``class L(Base)``, ``class L(mod.Base)``), or a name that is not a project module
    (``is_module``) used as a namespace (``K.mean``: maybe a re-exported backend).
    Relative imports are made absolute from ``package``. A name only called
    (``gelu(x)``), or a project module whose functions are called, decides nothing
    about the file's own facts."""
    paths: set[str] = set()
    bases: set[bytes] | None = None
    for match in _statements(data, b"from", _FROM_IMPORT):
        module = _absolute(match.group(1).decode("ascii", "replace"), package)
        if module.partition(".")[0] not in roots:
            continue
        if bases is None:
            bases = _class_bases(data)
        for item in match.group(2).strip(b"()").split(b","):
            words = item.split()
            if not words:
                continue
            if words[0] == b"*":
                paths.add(module)
                continue
            local = words[-1] if len(words) == 3 and words[1] == b"as" else words[0]
            if not _NAME.fullmatch(local):
                continue
            path = f"{module}.{words[0].decode('ascii', 'replace')}"
            if local in bases or (not is_module(path) and local + b"." in data):
                paths.add(path)
    return paths


def _statements(data: bytes, keyword: bytes, pattern: re.Pattern[bytes]) -> Iterator[re.Match]:
    """Matches of ``pattern`` at each ``keyword`` that starts a line of ``data`` (found
    with ``bytes.find``: a multi-line regex tries every position, five times slower)."""
    at = data.find(keyword)
    while at != -1:
        if not data[data.rfind(b"\n", 0, at) + 1 : at].strip(b" \t"):
            match = pattern.match(data, at)
            if match is not None:
                yield match
        at = data.find(keyword, at + len(keyword))


def _class_bases(data: bytes) -> set[bytes]:
    """The first names of the class bases in one file's bytes (``mod`` of ``mod.Base``)."""
    bases = set()
    for match in _statements(data, b"class", _CLASS_BASES):
        for base in match.group(1).split(b","):
            if b"=" not in base and (name := _NAME.search(base)) is not None:
                bases.add(name.group())
    return bases


def _absolute(module: str, package: str) -> str:
    dots = len(module) - len(module.lstrip("."))
    if not dots:
        return module
    parts = package.split(".") if package else []
    if dots > 1:
        parts = parts[: len(parts) - (dots - 1)]
    rest = module[dots:]
    return ".".join([*parts, rest] if rest else parts)


def choose_providers(needs: dict[str, set[str]], sizes: dict[str, int], budget: int) -> list[str]:
    """Keys of the files to index before the first analyses. ``needs``: for each file
    (to be analysed, or indexed already), the files its facts may depend on; ``sizes``:
    the bytes of those to be analysed (the others are indexed already).

    A file is worth indexing first when it is smaller than the files needing it
    together (an analysis saved costs about three parses): the most needed first, each
    with what it needs in turn (else it helps no one), while their bytes fit ``budget``."""
    value: dict[str, int] = {}
    for key, needed in needs.items():
        for target in needed:
            if key in sizes and target in sizes:
                value[target] = value.get(target, 0) + sizes[key]
    chosen: set[str] = set()
    spent = 0
    for key in sorted(value, key=lambda k: (-value[k], k)):
        if key in chosen or sizes[key] > value[key]:
            continue
        group = {k for k in closure([key], needs) if k in sizes and k not in chosen}
        cost = sum(sizes[k] for k in group)
        if spent + cost <= budget:
            chosen |= group
            spent += cost
    return sorted(chosen)


def module_keys(names: Iterable[str], by_name: dict[str, list[str]]) -> set[str]:
    """Keys of the files an import of each dotted name in ``names`` may read: the
    module and the packages above it."""
    keys: set[str] = set()
    for name in names:
        parts = name.split(".")
        for cut in range(1, len(parts) + 1):
            keys.update(by_name.get(".".join(parts[:cut]), ()))
    return keys
