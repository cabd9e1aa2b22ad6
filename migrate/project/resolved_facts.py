"""The facts of a run that resolved some files again: their local facts made in this
run, the others' read from the stored rows, the call graph closed over both (or the
stored closure kept, when no call into the project changed)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kmigrate.engine.fact_provider import Provided
from kmigrate.engine.module_facts import LocalFacts
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_facts import ProjectFacts, RecordImports, closure
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.project.local_facts_rows import encode_local
from kmigrate.project.stored_resolution import GRAPH, Fallback, Rows, StoredResolution


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
    stored rows. The call graph is closed over "slot:name" nodes, so stored rows join
    it as they are. When no file came or went and the graph of every file resolved
    again is the one stored (``graph_kept``: a body edit that changed no call into the
    project), the closure is the stored one: what each module's functions are reached
    from is read from its row, and the other rows are neither read nor rewritten."""

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
        self._nodes: tuple[dict[int, set[str]], dict[int, set[str]]] | None = None
        self._encoded: dict[str, list] = {}
        self.graph_kept = stored is not None and self._same_graph()

    def _same_graph(self) -> bool:
        """Whether the call graph is the stored one: the same slots, and every file
        resolved again with the edges and seeds its row holds."""
        stored = self.stored
        if stored is None or self.slots != stored.slots:
            return False
        return all(self.encoded(key)[GRAPH] == list(stored.graph(key)) for key in self.made)

    def node_sets(self) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
        """(model, data): by slot, the top-level functions reached from model code and
        from data pipelines (method nodes, ``Class.method``, left out)."""
        if self._nodes is None:
            edges: dict[str, list[str]] = {}
            model: list[str] = []
            data: list[str] = []
            for record in self.records:
                made = self.made.get(record.key)
                if made is None:
                    own, model_seeds, data_seeds = self.stored.graph(record.key)  # type: ignore[union-attr]
                else:
                    own, model_seeds, data_seeds = self.encoded(record.key)[GRAPH]
                slot = self.position[record.key]
                for name, out in own.items():
                    edges[f"{slot}:{name}"] = out
                model += model_seeds
                data += data_seeds
            self._nodes = (_by_slot(closure(model, edges)), _by_slot(closure(data, edges)))
        return self._nodes

    def encoded(self, key: str) -> list:
        """The local facts made for ``key`` in this run, as stored."""
        found = self._encoded.get(key)
        if found is None:
            found = self._encoded[key] = encode_local(self.made[key], self.position)
        return found

    def provided_of(self, key: str) -> Provided:
        if key in self.made or self.stored is None:
            return super().provided_of(key)
        return self.stored.provided_of(key)

    def uses_keras(self, key: str) -> bool:
        if key in self.made or self.stored is None:
            return super().uses_keras(key)
        return self.stored.uses_keras(key)

    def reached_functions(self, key: str) -> tuple[set[str], set[str]]:
        if self.graph_kept:
            model_names, data_names = self.stored.reach(key)  # type: ignore[union-attr]
            return set(model_names), set(data_names)
        # every reached node without a dot is a top-level function of its module: call
        # graph edges and seeds only ever lead to those
        model, data = self.node_sets()
        slot = self.position[key]
        return model.get(slot, set()), data.get(slot, set())


def _by_slot(nodes: set[str]) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for node in nodes:
        slot, _, name = node.partition(":")
        if "." not in name:
            found.setdefault(int(slot), set()).add(name)
    return found
