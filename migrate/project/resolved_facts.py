"""The facts of a run that resolved some files again: their local facts made in this
run, the others' read from the stored rows, the call graph closed over both (or the
stored closure kept, when no call into the project changed)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from kmigrate.engine.fact_provider import Provided
from kmigrate.engine.module_facts import LocalFacts, Node
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_facts import ProjectFacts, RecordImports
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.project.local_facts_rows import encode_graph
from kmigrate.project.stored_resolution import Fallback, Rows, StoredResolution


class _Imports(RecordImports):
    """The import paths of the files resolved in this run, the stored ones of the others."""

    def __init__(
        self,
        records: Mapping[str, ModuleRecord],
        made: Mapping[str, LocalFacts],
        stored: StoredResolution | None,
    ) -> None:
        super().__init__(records)
        self.made = made
        self.stored = stored

    def imported_paths(self, key: str) -> Sequence[str]:
        if self.stored is None or key in self.made:
            return super().imported_paths(key)
        return self.stored.imported_paths(key)


class ResolvedFacts(Fallback):
    """Facts from this run's local facts (``made``) and, for the other modules, the
    stored rows. When no file came or went and the graph of every file resolved again
    is the one stored (``graph_kept``: a body edit that changed no call into the
    project), the closure is the stored one: what it reached in each module (functions,
    methods, the data seed of a mixed function) is read from the first part of its row,
    the graph is never decoded, and the other rows are copied as they are. Else the graph
    is closed again over every module's part ("slot:name" nodes, stored or made here)."""

    def __init__(
        self,
        records: Sequence[ModuleRecord],
        made: dict[str, LocalFacts],
        stored: StoredResolution | None,
        patched: tuple[tuple[str, str], ...],
        index: ProjectIndex,
        fallback: Callable[[], ProjectFacts] | None = None,
    ) -> None:
        keys = [r.key for r in records]
        if stored is None:
            local: Mapping[str, LocalFacts] = made
            files = {r.key: (r.shown or r.key, r.entry["paths"]) for r in records}
            self.slots: list[str | None] = list(keys)
        else:
            local = Rows(stored, made, keys)
            files = {
                r.key: (r.shown or r.key, r.entry["paths"])
                if r.key in made
                else (stored.shown(r.key), stored.paths(r.key))
                for r in records
            }
            # a file keeps its slot while it exists; a new one takes a new slot
            current = set(keys)
            self.slots = [k if k in current else None for k in stored.slots]
            placed = set(stored.slots)
            self.slots += [k for k in keys if k not in placed]
        imports = _Imports({r.key: r for r in records}, made, stored)
        providers = index.spec.providers()
        super().__init__(local, files, patched, imports, providers=providers, fallback=fallback)
        self.records = records
        self.made = made
        self.stored = stored
        self.index = index  # the index the local facts of ``made`` came from
        self.position = {key: i for i, key in enumerate(self.slots) if key is not None}
        self.graph_kept = stored is not None and self._same_graph()

    def _same_graph(self) -> bool:
        """Whether the call graph is the stored one: the same slots, and every file
        resolved again with the edges and seeds its row holds."""
        stored = self.stored
        if stored is None or self.slots != stored.slots:
            return False
        return all(self.graph_of(key) == stored.graph(key) for key in self.made)

    def graph_of(self, key: str) -> list:
        """The module's part of the call graph as a row holds it: made in this run (not
        kept: a cold run encodes every module's once, to store it), else as stored."""
        if key not in self.made:
            return self.stored.graph(key)  # type: ignore[union-attr]
        return encode_graph(self.made[key], self.position)

    def graph_nodes(self, key: str) -> tuple[Iterable, Iterable[Node], Iterable[Node]]:
        made = self.made.get(key)
        if made is None:
            return super().graph_nodes(key)
        return made.edges, made.model_seeds, made.data_seeds

    def graph_slots(self) -> list[str | None]:
        return self.slots

    def provided_of(self, key: str) -> Provided:
        if key in self.made or self.stored is None:
            return super().provided_of(key)
        return self.stored.provided_of(key)

    def uses_keras(self, key: str) -> bool:
        if key in self.made or self.stored is None:
            return super().uses_keras(key)
        return self.stored.uses_keras(key)

    def reach_is_stored(self) -> bool:
        return self.graph_kept
