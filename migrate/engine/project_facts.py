"""Every module's :class:`~kmigrate.engine.module_facts.ModuleFacts` from the modules'
local facts: the call graph closed once over the project, and what modules tell each
other (files they share, names their imports rebind, and what each fact provider the
rules declare makes of the modules' local values: engine/fact_provider.py)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from kmigrate.engine.fact_provider import FactProvider, Provided
from kmigrate.engine.module_facts import FileUse, LocalFacts, ModuleFacts, Node
from kmigrate.engine.module_record import ModuleRecord, imported_paths


class ModuleImports(Protocol):
    """Each module's dotted names and the paths its imports name (:func:`imported_paths`;
    those of other modules may be left out), by key."""

    def names(self, key: str) -> Sequence[str]: ...

    def imported_paths(self, key: str) -> Sequence[str]: ...


class RecordImports:
    """:class:`ModuleImports` of indexed records (holding no index: no reference cycle)."""

    def __init__(self, records: Mapping[str, ModuleRecord]) -> None:
        self.records = records

    def names(self, key: str) -> Sequence[str]:
        return self.records[key].names

    def imported_paths(self, key: str) -> Sequence[str]:
        return imported_paths(self.records[key])


class ProjectFacts(Mapping[str, ModuleFacts]):
    """Every module's :class:`ModuleFacts`, by module key, from the modules' local facts:
    the call graph is closed once, each module's facts are made when asked for (the
    pre-commit hook asks for one)."""

    def __init__(
        self,
        local: Mapping[str, LocalFacts],
        files: Mapping[str, tuple[str, Sequence[str]]],
        patched: tuple[tuple[str, str], ...],
        imports: ModuleImports | None = None,
        *,
        providers: Sequence[type[FactProvider]],
    ) -> None:
        self.local = local
        self.providers = providers  # the rules' fact providers (``ContextSpec.providers``)
        self.files = files  # key -> (path as shown, literal saved-file names it uses)
        self.patched = patched
        self.imports = imports  # None when the other modules are not known (facts alone)
        self._importers: dict[str, list[str]] | None = None
        self._made: dict[str, ModuleFacts] = {}
        self._reach: tuple[set[Node], set[Node]] | None = None
        self._methods: dict[str, set[str]] | None = None
        self._users: dict[str, list[str]] | None = None
        # provider name -> (path as shown, key, local value) of every module and outside file
        self._everyone: dict[str, list[tuple[str, str, Any]]] = {}
        self._outside_source: Callable[[], Mapping[str, FileUse]] | None = None
        self._outside: Mapping[str, FileUse] | None = None
        self._keras: bool | None = None

    def add_file_users(self, source: Callable[[], Mapping[str, FileUse]] | None) -> None:
        """Files outside the modules that use saved-file names or give fact providers
        values (notebooks: nothing imports them, but a save renamed in a module breaks
        the notebook that loads the old file): key -> :data:`FileUse`. ``source`` is
        asked once, when a module with file names or a provider first needs them."""
        self._outside_source = source
        self._outside = None
        self._users = None
        self._everyone.clear()
        self._made.clear()

    def outside_users(self) -> Mapping[str, FileUse]:
        if self._outside is None:
            source = self._outside_source
            self._outside = dict(source()) if source is not None else {}
        return self._outside

    def __getitem__(self, key: str) -> ModuleFacts:
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._make(key)
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self.local)

    def __len__(self) -> int:
        return len(self.local)

    def reached(self) -> tuple[set[Node], dict[Node, Node]]:
        """(model, data): the nodes reached from model code, and those reached from data
        pipelines with the data function (a seed) each is first reached from, over the
        whole project's call graph."""
        if self._reach is None:
            edges: dict[Node, tuple[Node, ...]] = {}
            model_seeds: set[Node] = set()
            data_seeds: set[Node] = set()
            for key, local in self.local.items():
                for name, out in local.edges:
                    edges[(key, name)] = out
                model_seeds.update(local.model_seeds)
                data_seeds.update(local.data_seeds)
            self._reach = (closure(model_seeds, edges), reached_from(data_seeds, edges))
        return self._reach

    def reached_methods(self, key: str) -> tuple[str, ...]:
        """The ``Class.method`` nodes of module ``key`` reached from model code, but
        those of its model classes (model code whoever calls them)."""
        own = set(self.local[key].model_classes)
        return tuple(sorted(n for n in self.methods_reached(key) if n.partition(".")[0] not in own))

    def methods_reached(self, key: str) -> Iterable[str]:
        """Every ``Class.method`` node of module ``key`` reached from model code (a stored
        resolution keeps them per file: a warm re-scan need not close the graph)."""
        if self._methods is None:
            by_key: dict[str, set[str]] = {}
            for where, name in self.reached()[0]:
                if "." in name:
                    by_key.setdefault(where, set()).add(name)
            self._methods = by_key
        return self._methods.get(key, ())

    def data_seed(self, node: Node) -> Node:
        """The data-pipeline function that ``node``, reached from data pipelines, is
        first reached from (itself when it is one)."""
        return self.reached()[1][node]

    def reached_functions(self, key: str) -> tuple[set[str], set[str]]:
        """(model, data): the top-level functions of module ``key`` reached from model
        code and from data pipelines."""
        model, data = self.reached()
        functions = self.local[key].functions
        in_model = {f for f in functions if (key, f) in model}
        return in_model, {f for f in functions if (key, f) in data}

    def _make(self, key: str) -> ModuleFacts:
        local = self.local[key]
        in_model, in_data = self.reached_functions(key)
        mixed = sorted(in_model & in_data)
        return ModuleFacts(
            model_classes=local.model_classes,
            model_functions=tuple(sorted(in_model)),
            model_methods=self.reached_methods(key),
            data_functions=tuple(sorted(in_data - in_model)),
            mixed_functions=tuple(mixed),
            data_callers=tuple((name, self._data_caller((key, name))) for name in mixed),
            bindings=local.bindings,
            notes=local.notes,
            patched=self.patched,
            shared_paths=self._shared_paths(key),
            undecided_calls=local.undecided_calls,
            imported_by=self.imported_by(key) if local.namespace_imports else (),
            keras_project=self.keras_project(),
            provided=self.provided_values(key, local.provided),
        )

    def keras_project(self) -> bool:
        """Whether some module of the project uses Keras (:attr:`LocalFacts.uses_keras`):
        asked of every module, answered once."""
        if self._keras is None:
            self._keras = any(self.uses_keras(key) for key in self.local)
        return self._keras

    def uses_keras(self, key: str) -> bool:
        """Module ``key``'s :attr:`LocalFacts.uses_keras`. A stored resolution answers it
        from the files' headers, without decoding the module's local facts."""
        return self.local[key].uses_keras

    def _data_caller(self, node: Node) -> str:
        seed = self.data_seed(node)
        if seed == node:
            return ""
        return f"`{seed[1]}` in {self.files[seed[0]][0]}"

    def _shared_paths(self, key: str) -> tuple[tuple[str, str], ...]:
        return self.shared_paths(*self.files[key])

    def shared_paths(self, own: str, paths: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """Of the file names ``paths`` the file shown as ``own`` uses, those other
        modules use too, with them (KM4 pairs across files)."""
        if not paths:
            return ()
        if self._users is None:
            outside = [(shown, names) for shown, names, _ in self.outside_users().values()]
            self._users = file_users([*self.files.values(), *outside])
        return shared_with(self._users, own, paths)

    def provided_values(self, own: str, values: Provided) -> Provided:
        """What each fact provider tells the module or notebook ``own`` (a key) whose
        local values are ``values``: made from the others' local values, read only if
        the provider asks for them."""
        by_name = dict(values)
        return tuple(
            (p.name, p.project(by_name[p.name], lambda p=p: self._others(p.name, own)))
            for p in self.providers
        )

    def _others(self, name: str, own: str) -> list[tuple[str, Any]]:
        """(path as shown, local value of provider ``name``) of every module and outside
        file but ``own``, by path."""
        everyone = self._everyone.get(name)
        if everyone is None:
            found = [(self.files[k][0], k, dict(self.provided_of(k))[name]) for k in self.local]
            found += [
                (shown, k, dict(values)[name])
                for k, (shown, _, values) in self.outside_users().items()
            ]
            everyone = self._everyone[name] = sorted(found, key=lambda f: (f[0], f[1]))
        return [(shown, value) for shown, key, value in everyone if key != own]

    def imported_by(self, key: str) -> tuple[tuple[str, str], ...]:
        """``ModuleFacts.imported_by`` of module ``key``: only asked of a module whose
        imports bind a namespace, it reads every module's import paths, once."""
        if self.imports is None:
            return ()
        if self._importers is None:
            self._importers = {}
            for other in self.local:
                shown = self.files[other][0]
                for path in self.imports.imported_paths(other):
                    self._importers.setdefault(path, []).append(shown)
        return imported_from(
            self._importers, self.imports.names(key), self.files[key][0], self.local[key]
        )

    def provided_of(self, key: str) -> Provided:
        """Module ``key``'s local values of the fact providers. A stored resolution
        answers it from the files' headers, without decoding the module's local facts."""
        return self.local[key].provided


def imported_from(
    importers: Mapping[str, Iterable[str]], names: Iterable[str], own: str, local: LocalFacts
) -> tuple[tuple[str, str], ...]:
    """``ModuleFacts.imported_by`` of the module with dotted ``names``, shown as ``own``,
    with the local facts ``local``. ``importers``: import path -> the modules (as shown)
    whose imports name it (:func:`imported_paths`): ``from m import K`` and ``import m
    as b`` then ``b.K`` name ``m.K``; ``m!``, ``m`` used as an object, reaches any of its
    names; ``from m import *`` takes what ``m`` exports (``__all__``)."""
    names = tuple(names)
    found = []
    for bound in local.namespace_imports:
        ways = (f".{bound}", "!", ".*") if bound in local.star_exports else (f".{bound}", "!")
        users = {
            user
            for name in names
            for way in ways
            for user in importers.get(name + way, ())
            if user != own
        }
        if users:
            shown = sorted(users)
            more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
            found.append((bound, ", ".join(shown[:3]) + more))
    return tuple(found)


def file_users(files: Iterable[tuple[str, Iterable[str]]]) -> dict[str, list[str]]:
    """File name -> the modules (as shown) that use it, from (shown, file names) pairs."""
    users: dict[str, list[str]] = {}
    for shown, used in files:
        for path in used:
            users.setdefault(path, []).append(shown)
    return users


def shared_with(
    users: Mapping[str, list[str]], own: str, paths: Iterable[str]
) -> tuple[tuple[str, str], ...]:
    """``ModuleFacts.shared_paths`` of the module shown as ``own`` that uses ``paths``."""
    shared = []
    for path in paths:
        others = [u for u in users.get(path, ()) if u != own]
        if others:
            shared.append((path, ", ".join(sorted(others)[:3])))
    return tuple(shared)


def path_reaches(path: str, name: str) -> bool:
    """Whether resolving through import path ``path`` can look up the module ``name``:
    it is ``path``, a package above it or a module below it."""
    return path == name or path.startswith(name + ".") or name.startswith(path + ".")


def closure(seeds: Iterable[Hashable], edges: Mapping[Any, Iterable[Hashable]]) -> set:
    """Everything reached from ``seeds`` along ``edges`` (seeds included)."""
    seen: set = set()
    todo = list(seeds)
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        todo.extend(edges.get(node, ()))
    return seen


def reached_from(seeds: Iterable[Node], edges: Mapping[Node, Iterable[Node]]) -> dict[Node, Node]:
    """Everything reached from ``seeds`` along ``edges``, each with the seed it is first
    reached from (seeds in sorted order, so the answer does not depend on the input's)."""
    found: dict[Node, Node] = {}
    for seed in sorted(set(seeds)):
        todo = [seed]
        while todo:
            node = todo.pop()
            if node in found:
                continue
            found[node] = seed
            todo.extend(edges.get(node, ()))
    return found
