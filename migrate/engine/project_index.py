"""The project index: what each module of a repository defines, imports and calls,
as plain data, and the resolution over it that no single file can do alone.

Real projects keep their base layers, helper functions and backend shims in modules
of their own: ``class Attention(BaseLayer)`` with ``BaseLayer`` in ``layers/base.py``,
``K.mean`` with ``K`` re-exported by ``mypkg/backend.py``, a ``call()`` that hands its
tensors to ``utils.gelu``. Each file is first summarised
(:func:`kmigrate.engine.project_entry.build_entry`) into a JSON-able dict that is cached
by file content. :class:`ProjectIndex` then resolves names across those entries,
bounded and cycle-safe, and hands each module its :class:`ModuleFacts`: which of its
classes are Keras layers/models, which of its functions are model code or data code
because of callers elsewhere, which of its names are Keras/TensorFlow namespaces, and
what could not be decided (two definitions of one module name).

No TensorFlow knowledge lives here: what counts as a Keras base, a namespace or a data
API comes from the rules' :class:`~kmigrate.engine.contexts.ContextSpec`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kmigrate.engine.fact_provider import local_values
from kmigrate.engine.helper_reach import HelperReach
from kmigrate.engine.module_facts import (
    LocalFacts,
    LocalFactsFrom,
    ModuleFacts,
    Node,
)
from kmigrate.engine.module_record import ModuleRecord, Target, alternatives, import_paths
from kmigrate.engine.name_resolution import _UNKNOWN, NameResolution
from kmigrate.engine.project_entry import build_entry
from kmigrate.engine.project_facts import ProjectFacts, RecordImports
from kmigrate.engine.spec import ContextSpec

if TYPE_CHECKING:
    from kmigrate.engine.tree_index import TreeIndex


class ProjectIndex(NameResolution):
    """The index of one project: its names resolved (:class:`NameResolution`), what
    each module's own entry decides (:meth:`local`), the TF/Keras functions the project
    replaces, and every module's :class:`ModuleFacts`."""

    def __init__(
        self,
        records: Iterable[ModuleRecord],
        spec: ContextSpec,
        patching: Iterable[ModuleRecord] | None = None,
        outside: Callable[[str], bool] | None = None,
    ) -> None:
        """``patching``: the records that may replace TF/Keras functions, when the caller
        knows them (all records by default: every entry is then read). ``outside``:
        whether a class of an installed third-party package, by qualified name, is a
        Keras class (read from its files: :mod:`~kmigrate.engine.outside_index`)."""
        super().__init__(records, spec, outside)
        self.patching = self.records if patching is None else list(patching)
        self._patched: dict[str, tuple[str, Target]] | None = None
        self._patches_read: dict[str, tuple | None] | None = None  # symbol -> patch read
        self._facts: ProjectFacts | None = None
        self._below: dict[str, list[ModuleRecord]] | None = None

    def import_paths(self, record: ModuleRecord) -> list[str]:
        """:func:`import_paths`."""
        return import_paths(record)

    def modules_used(self, record: ModuleRecord) -> set[str]:
        """Keys of the modules resolving a name in ``record`` may read directly: the
        modules its imports name, their packages and everything below them (``import
        pkg`` reaches ``pkg.sub.f``). Resolution from ``record`` only ever reads modules
        reachable this way, so a module's shape can change what another module
        resolves only if it is reachable from it."""
        if self._below is None:
            below: dict[str, list[ModuleRecord]] = {}
            for other in self.records:
                for name in other.names:
                    parts = name.split(".")
                    for cut in range(1, len(parts)):
                        below.setdefault(".".join(parts[:cut]), []).append(other)
            self._below = below
        used: set[str] = set()
        for path in self.import_paths(record):
            parts = path.split(".")
            for cut in range(1, len(parts) + 1):
                used.update(r.key for r in self.by_name.get(".".join(parts[:cut]), ()))
            used.update(r.key for r in self._below.get(path, ()))
        return used

    # -- what one module decides ----------------------------------------------
    def local(self, record: ModuleRecord) -> LocalFacts:
        """What ``record``'s own entry decides, resolved against the project (see
        :class:`LocalFacts`): the call graph's nodes are ``(module key, name)``."""
        spec = self.spec
        key = record.key
        entry = record.entry
        edges: dict[str, tuple[Node, ...]] = {}
        model_seeds: set[Node] = set()
        data_seeds: set[Node] = set()
        undecided: dict[str, str] = {}  # callee -> why resolution cannot tell what it runs

        reach = HelperReach(self)
        keras = self._imports_keras(record)

        def follow(callee: str, target: Target, out: set[Node]) -> None:
            if target[0] == "function":
                out.add((target[1].key, target[2]))
            elif target[0] == "registry":  # any of its values may be what runs
                out.update(reach.registry_nodes(target[1], target[2]))
            elif callee == "globals" and target[0] == "unknown":
                # ``globals()[name]``: any function of the module may be what runs
                out.update((key, name) for name in entry["functions"])
            elif target[0] == "ambiguous":  # between project functions: follow them all
                candidates = alternatives([target])
                if candidates:
                    out.update(candidates)
                    undecided[callee] = target[1]

        for fname, calls in entry["functions"].items():
            out: set[Node] = set()
            for callee in calls:
                target = self._callee(record, callee)
                follow(callee, target, out)
                if target[0] == "external":
                    symbol = self.canonical(target[1])
                    keras = keras or spec.is_keras_symbol(symbol)
                    if symbol.endswith(spec.functional_input_suffixes):
                        model_seeds.add((key, fname))
                    elif symbol.startswith(spec.data_symbol_prefixes):
                        data_seeds.add((key, fname))
            if out:
                edges[fname] = tuple(sorted(out))
        model_classes = []
        for cname, info in entry["classes"].items():
            model = self.is_model_class(record, cname)
            if model:
                model_classes.append(cname)
                model_seeds.update(reach.mixed_in(record, cname))
            for mname, calls in info["methods"].items():
                node = f"{cname}.{mname}"
                out = set()
                if model:
                    model_seeds.add((key, node))
                for callee in calls:
                    if callee.startswith("self."):
                        out.update(reach.self_call(record, cname, callee))
                        continue
                    target = self._callee(record, callee)
                    follow(callee, target, out)
                    if target[0] == "external" and not keras:
                        keras = spec.is_keras_symbol(self.canonical(target[1]))
                if out:
                    edges[node] = tuple(sorted(out))
        for ref in entry["model_refs"]:
            model_seeds.update(reach.ref_nodes(record, ref))
        for ref in entry["data_refs"]:
            target = self.resolve(record, ref)
            if target[0] == "function":
                data_seeds.add((target[1].key, target[2]))
        provided = self._provided(record)  # (before the bindings: the order names are asked)
        bindings = self._bindings(record)
        keras = keras or bool(model_classes) or self._binds_keras(bindings)
        return LocalFacts(
            model_classes=tuple(model_classes),
            bindings=bindings,
            notes=tuple(sorted(self._notes.get(id(record), {}).items())),
            functions=tuple(entry["functions"]),
            edges=tuple(edges.items()),
            model_seeds=tuple(sorted(model_seeds)),
            data_seeds=tuple(sorted(data_seeds)),
            undecided_calls=tuple(sorted(undecided.items())),
            namespace_imports=(bound := self._namespace_imports(record)),
            star_exports=tuple(name for name in bound if record.exports(name)),
            uses_keras=keras,
            provided=provided,
        )

    def _imports_keras(self, record: ModuleRecord) -> bool:
        """Whether one of ``record``'s own imports of a module outside the project names
        a Keras namespace (``from tensorflow.keras.layers import Dense``, ``import keras``)."""
        for _local, module, name, level in record.entry["imports"]:
            if level or self._in_project(module):
                continue
            if self.spec.is_keras_symbol(self.canonical(f"{module}.{name}" if name else module)):
                return True
        return False

    def _binds_keras(self, bindings: tuple[tuple[str, str], ...]) -> bool:
        """Whether a name the project binds for the module is a Keras namespace (``K``
        re-exported by the project's backend module)."""
        return any(self.spec.is_keras_symbol(self.canonical(target)) for _, target in bindings)

    def _provided(self, record: ModuleRecord) -> tuple[tuple[str, Any], ...]:
        """The rules' fact providers' local values of ``record``: what its entry keeps
        for each, with its callees resolved as any other name (a function's own import
        of the root gives the path to resolve instead) to canonical TF/Keras symbols."""

        def resolve(callee: str, path: str) -> str | None:
            target = self._qualified(record, path, 0) if path else self.resolve(record, callee)
            return self.canonical(target[1]) if target[0] == "external" else None

        return local_values(self.spec.providers(), record.entry["provided"], resolve)

    def local_with_reads(self, record: ModuleRecord) -> tuple[LocalFacts, LocalFactsFrom | None]:
        """:meth:`local`, and the same with what it was made from, for another index of
        the same entries to take (None when this index met the depth bound)."""
        self._looked_up, self._outside, self._patches_read = set(), set(), {}
        try:
            local = self.local(record)
            looked_up, outside = self._looked_up, self._outside
            patches_read = tuple(sorted(self._patches_read.items(), key=lambda p: p[0]))
        finally:
            self._looked_up = self._outside = self._patches_read = None
        if self.order_sensitive or self.read_outside:
            return local, None
        by_name = self.by_name
        modules = tuple(
            (name, tuple(r.key for r in by_name.get(name, ()))) for name in sorted(looked_up)
        )
        return local, LocalFactsFrom(local, modules, frozenset(outside), patches_read)

    def agrees(self, made: LocalFactsFrom) -> bool:
        """Whether this index answers what ``made``'s index asked as it did (see
        :class:`LocalFactsFrom`): then ``made.local`` are this index's local facts of
        that module, as long as this index does not meet the depth bound either."""
        by_name = self.by_name
        for name, keys in made.modules:
            found = by_name.get(name, ())
            if len(found) != len(keys) or any(r.key != k for r, k in zip(found, keys)):
                return False
        if not made.outside.isdisjoint(self._roots):
            return False
        patches = self.patched()
        return all(_plain_patch(patches.get(s)) == read for s, read in made.patches_read)

    def _bindings(self, record: ModuleRecord) -> tuple[tuple[str, str], ...]:
        bindings = []
        for local, ways in record.bound().items():
            if ways[0][0] in ("class", "function"):
                continue
            if all(w[0] == "import" and not w[3] and not self._in_project(w[1]) for w in ways):
                continue  # a plain external import: the module's own resolver knows it
            target = self.resolve(record, local)
            if target[0] == "external" and self.canonical(target[1]) in self.spec.namespace_symbols:
                bindings.append((local, target[1]))
        return tuple(sorted(bindings))

    def _namespace_imports(self, record: ModuleRecord) -> tuple[str, ...]:
        """:attr:`LocalFacts.namespace_imports`: a name its imports alone bind, each of
        a module outside the project, names what it imports (nothing to resolve)."""
        found = []
        swapped = self.spec.swapped_namespaces
        for local, ways in record.bound().items():
            if all(w[0] == "import" and not w[3] for w in ways) and all(
                self.canonical(f"{w[1]}.{w[2]}" if w[2] else w[1]) in swapped
                and not self._in_project(w[1])
                for w in ways
            ):
                found.append(local)
        return tuple(sorted(found))

    def _callee(self, record: ModuleRecord, callee: str) -> Target:
        """What a call runs: a patched ``K.flatten`` runs the project's ``flatten``."""
        target = self.resolve(record, callee)
        if target[0] == "external":
            symbol = self.canonical(target[1])
            patch = self.patched().get(symbol)
            if self._patches_read is not None:  # what the local facts read (local_with_reads)
                self._patches_read[symbol] = _plain_patch(patch)
            if patch is not None and patch[1][0] == "function":
                return patch[1]
        return target

    # -- facts ---------------------------------------------------------------
    def facts(self, record: ModuleRecord) -> ModuleFacts:
        """What the project decides about ``record``'s classes, functions and names."""
        if self._facts is None:
            self._facts = ProjectFacts(
                {r.key: self.local(r) for r in self.records},
                {r.key: (r.shown or r.key, r.entry["paths"]) for r in self.records},
                self.patched_symbols(),
                RecordImports({r.key: r for r in self.records}),
                providers=self.spec.providers(),
            )
        return self._facts[record.key]

    def patched_symbols(self) -> tuple[tuple[str, str], ...]:
        """(symbol, module) of every TF/Keras function the project replaces."""
        return tuple(sorted((s, where) for s, (where, _) in self.patched().items()))

    def patched(self) -> dict[str, tuple[str, Target]]:
        """TF/Keras functions some module replaces, with the module and what replaces
        them: monkey-patching is process-wide, so a call of ``K.reshape`` anywhere may
        run the project's own function."""
        if self._patched is None:
            found: dict[str, tuple[str, Target]] = {}
            for record in self.patching:
                for root, attr, value in record.entry["patches"]:
                    target = self.resolve(record, root)
                    if target[0] == "external":
                        symbol = self.canonical(f"{target[1]}.{attr}")
                        by = self.resolve(record, value) if value else _UNKNOWN
                        found.setdefault(symbol, (record.shown or record.key, by))
            self._patched = found
        return self._patched

    def known_patches(self) -> dict[str, tuple[str, Target]] | None:
        """:meth:`patched`, if it was worked out already (for storing it)."""
        return self._patched

    def reuse_patches(self, patches: dict[str, tuple[str, Target]]) -> None:
        """Take :meth:`patched` from the last resolution: right while no module that
        patches, nor any module its names resolve through, was resolved again (the
        caller checks), and it spares reading every patching module's entry."""
        self._patched = patches

    def _in_project(self, module: str) -> bool:
        parts = module.split(".")
        for cut in range(len(parts), 0, -1):
            name = ".".join(parts[:cut])
            if self._looked_up is not None:
                self._looked_up.add(name)
            if name in self.by_name:
                return True
        return False


def module_facts_for_text(
    tree: ast.Module, spec: ContextSpec, package: str = "", index: TreeIndex | None = None
) -> tuple[ModuleFacts, dict]:
    """The facts a module gives about itself (in-file aliases, try/except fallbacks,
    helpers shared by a layer and a ``.map``), for a file analysed without its project;
    and its index entry, which the runner gathers to resolve the project afterwards."""
    entry = build_entry(tree, spec, index)
    record = ModuleRecord("<module>", entry, package, "", ())
    return ProjectIndex([record], spec).facts(record), entry


RECORD_TARGETS = ("class", "function", "module")  # targets that hold a ModuleRecord


def plain_target(target: Target) -> tuple:
    """A resolved target as plain data: a module record by its key (what a stored
    resolution keeps, and what two indexes' answers are compared by)."""
    if target[0] in RECORD_TARGETS:
        return (target[0], target[1].key, *target[2:])
    return tuple(target)


def _plain_patch(patch: tuple[str, Target] | None) -> tuple | None:
    """A patch (the module, what replaces the function) as plain data."""
    return None if patch is None else (patch[0], plain_target(patch[1]))
