"""The resolved project, stored, so that a run after an edit re-resolves what the edit
can change instead of the whole project.

The pre-commit hook checks the file that was just edited: every run sees a project one
file away from the last one. Resolving a thousand-file project costs a fifth of a
second; one file's :class:`~kmigrate.engine.project_index.LocalFacts` cost a few
milliseconds. So the last resolution is kept (one signed value in the index store):
per file its content digest, its shape (:func:`~kmigrate.engine.project_index.entry_shape`),
the modules its imports can reach, its file names and its local facts.

Against it, a run with changed files redoes the local facts of

- the changed files themselves, and
- when a changed file's shape changed (a new import, a new base class, a new
  re-export), every file whose imports reach it: only those can resolve a name
  through it (``ProjectIndex.modules_used``);

and closes the call graph again over all local facts. That is the same as resolving
from scratch as long as resolution never met an import cycle or its depth bound (then
what a name resolves to depends on the order names were asked for): such a project,
a project whose files were added, removed or renamed, a change that reaches a module
patching TF/Keras functions, or another kmigrate build, is resolved in full.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kmigrate.engine.project_index import (
    ENTRY_FORMAT,
    LocalFacts,
    ModuleRecord,
    ProjectFacts,
    ProjectIndex,
    closure,
    entry_shape,
)

if TYPE_CHECKING:
    from kmigrate.commands.cache import ResultCache

RESOLVED = "resolved"  # the store's namespace; one value per project root
STATE_FORMAT = 1


def _build_key() -> str:
    """Stored resolutions are only reused by the kmigrate build that made them."""
    from kmigrate.commands.cache import code_fingerprint

    return f"{STATE_FORMAT}.{ENTRY_FORMAT}.{code_fingerprint()}"


def layout_key(records: Sequence[ModuleRecord]) -> str:
    """The files and the names they are imported by: what resolution reads besides
    the entries. Any change here (a file added, removed, renamed) resolves in full."""
    digest = hashlib.blake2b(digest_size=16)
    for record in sorted(records, key=lambda r: r.key):
        text = f"{record.key}\0{record.names}\0{record.package}\0{record.folder}\0{record.shown}\n"
        digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class StoredResolution:
    """The last resolution of one project, as stored: plain data, each file's row
    decoded when asked for. Rows are only ever written by this kmigrate build (the
    build key) into the signed store; the top level is checked when loading."""

    def __init__(self, value: dict) -> None:
        self.build: str = _text(value["build"])
        self.project: str = _text(value["project"])
        self.reusable = value["reusable"] is True
        self.layout: str = _text(value["layout"])
        self.patched = tuple(_pair(p) for p in _list(value["patched"]))
        self.keys: list[str] = [_text(k) for k in _list(value["keys"])]
        files = _list(value["files"])
        if len(files) != len(self.keys) or not all(
            type(row) is list and len(row) == 9 for row in files
        ):
            raise ValueError("not a file's row")
        self.files: dict[str, list] = dict(zip(self.keys, files, strict=True))
        self._local: dict[str, LocalFacts] = {}

    # A file's row: [digest, shape, has patches, [used module indexes], [file names],
    # path as shown, local facts, [functions reached from model code], [... from data
    # pipelines]]. In the local facts, call graph nodes are "index:name" strings (index
    # into ``keys``): the stored graph is closed without decoding a row.
    def digest(self, key: str) -> str | None:
        row = self.files.get(key)
        return None if row is None else _text(row[0])

    def shape(self, key: str) -> str:
        return _text(self.files[key][1])

    def patches(self, key: str) -> bool:
        return self.files[key][2] is True

    def uses(self, key: str) -> list[str]:
        return [self.keys[_index(i)] for i in _list(self.files[key][3])]

    def paths(self, key: str) -> list[str]:
        return [_text(p) for p in _list(self.files[key][4])]

    def shown(self, key: str) -> str:
        return _text(self.files[key][5])

    def local(self, key: str) -> LocalFacts:
        found = self._local.get(key)
        if found is None:
            found = self._local[key] = _decode_local(self.files[key][6], self.keys)
        return found

    def graph(self, key: str) -> tuple[dict[str, list[str]], list[str], list[str]]:
        """(edges by node name, model seeds, data seeds) of one row, undecoded."""
        local = self.files[key][6]
        return local[4], local[5], local[6]

    def facts(self) -> ProjectFacts:
        """The stored project's facts, as resolved then: a module's facts are read
        from its own row (what its functions are reached from was stored too)."""
        return _StoredFacts(self)


class _StoredFacts(ProjectFacts):
    def __init__(self, stored: StoredResolution) -> None:
        super().__init__(_Rows(stored, {}), _Files(stored, {}), stored.patched)
        self.stored = stored

    def reached_functions(self, key: str) -> tuple[set[str], set[str]]:
        row = self.stored.files[key]
        return {_text(f) for f in _list(row[7])}, {_text(f) for f in _list(row[8])}


class _Rows(Mapping[str, LocalFacts]):
    """Local facts: those made in this run (``made``) over the stored ones."""

    def __init__(self, stored: StoredResolution, made: Mapping[str, LocalFacts]) -> None:
        self.stored = stored
        self.made = made

    def __getitem__(self, key: str) -> LocalFacts:
        found = self.made.get(key)
        return found if found is not None else self.stored.local(key)

    def __iter__(self):
        return iter(self.stored.keys)

    def __len__(self) -> int:
        return len(self.stored.keys)


class _Files(_Rows):
    """(path as shown, file names used) of each module, from the records made again
    (``made``: key -> record) over the stored rows."""

    def __getitem__(self, key: str) -> tuple[str, Sequence[str]]:  # type: ignore[override]
        record = self.made.get(key)
        if record is not None:
            return record.shown or record.key, record.entry["paths"]  # type: ignore[attr-defined]
        return self.stored.shown(key), self.stored.paths(key)


class _ResolvedFacts(ProjectFacts):
    """Facts from this run's local facts (``made``) and, for the other modules, the
    stored rows. The call graph is closed over "index:name" nodes, so stored rows join
    it as they are."""

    def __init__(
        self,
        records: Sequence[ModuleRecord],
        made: dict[str, LocalFacts],
        stored: StoredResolution | None,
        patched: tuple[tuple[str, str], ...],
    ) -> None:
        if stored is None:
            local: Mapping[str, LocalFacts] = made
            files: Mapping = {r.key: (r.shown or r.key, r.entry["paths"]) for r in records}
        else:
            local = _Rows(stored, made)
            files = _Files(stored, {r.key: r for r in records if r.key in made})
        super().__init__(local, files, patched)
        self.records = records
        self.made = made
        self.stored = stored
        self.position = {r.key: i for i, r in enumerate(records)}
        self._nodes: tuple[set[str], set[str]] | None = None

    def node_sets(self) -> tuple[set[str], set[str]]:
        """(model, data): the "index:name" nodes reached from model code and from
        data pipelines."""
        if self._nodes is None:
            edges: dict[str, list[str]] = {}
            model: list[str] = []
            data: list[str] = []
            for index, record in enumerate(self.records):
                made = self.made.get(record.key)
                if made is None:
                    own, model_seeds, data_seeds = self.stored.graph(record.key)  # type: ignore[union-attr]
                else:
                    own, model_seeds, data_seeds = self.encoded(made)[4:]
                for name, out in own.items():
                    edges[f"{index}:{name}"] = out
                model += model_seeds
                data += data_seeds
            self._nodes = (closure(model, edges), closure(data, edges))
        return self._nodes

    def encoded(self, local: LocalFacts) -> list:
        return _encode_local(local, self.position)

    def reached_functions(self, key: str) -> tuple[set[str], set[str]]:
        model, data = self.node_sets()
        prefix = f"{self.position[key]}:"
        functions = self.local[key].functions
        return (
            {f for f in functions if prefix + f in model},
            {f for f in functions if prefix + f in data},
        )


def load_resolution(store: ResultCache, root_key: str) -> StoredResolution | None:
    """The stored resolution of the project at ``root_key``, or None (missing, made by
    another build, unsigned or malformed: a miss)."""
    stored = store.load_value(RESOLVED, root_key, StoredResolution)
    if stored is None or stored.build != _build_key():
        return None
    return stored


def resolve(
    records: Sequence[ModuleRecord],
    digests: Mapping[str, str],
    project_key: str,
    spec: Any,
    store: ResultCache | None,
    root_key: str,
    stored: StoredResolution | None = None,
    load_all: Callable[[], None] | None = None,
) -> ProjectFacts:
    """The facts of every module of ``records`` (``digests``: each record's file digest),
    reusing the stored resolution where the changes allow, and storing this one.
    ``load_all``: reads every record's entry at once, before a full resolution (records
    may read their entries one by one, when resolution first needs them)."""
    records = sorted(records, key=lambda r: r.key)
    changed = _changed(records, digests, stored)
    if changed is not None and stored is not None:
        patching = [
            r
            for r in records
            if (r.entry["patches"] if r.key in changed else stored.patches(r.key))
        ]
        index = ProjectIndex(records, spec, patching)
        redo = _to_redo(index, records, changed, stored)
        if redo is not None:
            by_key = {r.key: r for r in records}
            made = {key: index.local(by_key[key]) for key in sorted(redo)}
            if not index.order_sensitive:
                facts = _ResolvedFacts(records, made, stored, stored.patched)
                if store is not None:
                    _store(store, root_key, digests, project_key, index, facts)
                return facts
    if load_all is not None:
        load_all()
    index = ProjectIndex(records, spec)
    made = {r.key: index.local(r) for r in records}
    facts = _ResolvedFacts(records, made, None, index.patched_symbols())
    if store is not None:
        _store(store, root_key, digests, project_key, index, facts)
    return facts


def _changed(
    records: Sequence[ModuleRecord], digests: Mapping[str, str], stored: StoredResolution | None
) -> set[str] | None:
    """Keys of the files changed since the stored resolution, or None when it cannot
    be built on: none stored, a cycle in it, or files added, removed or renamed."""
    if stored is None or not stored.reusable or stored.layout != layout_key(records):
        return None
    return {r.key for r in records if digests[r.key] != stored.digest(r.key)}


def _to_redo(
    index: ProjectIndex,
    records: Sequence[ModuleRecord],
    changed: set[str],
    stored: StoredResolution,
) -> set[str] | None:
    """Keys of the modules whose local facts must be made again, or None: resolve all."""
    by_key = {r.key: r for r in records}
    reshaped = {key for key in changed if entry_shape(by_key[key].entry) != stored.shape(key)}
    redo = set(changed)
    if not reshaped:
        return redo
    users: dict[str, set[str]] = {}  # module -> the modules whose imports reach it directly
    for record in records:
        key = record.key
        for used in index.modules_used(record) if key in redo else stored.uses(key):
            users.setdefault(used, set()).add(key)
    todo = list(reshaped)
    while todo:
        for user in users.get(todo.pop(), ()):
            if user not in redo:
                redo.add(user)
                todo.append(user)
    # a module replacing TF/Keras functions changes what calls run everywhere
    if any(by_key[key].entry["patches"] or stored.patches(key) for key in redo):
        return None
    return redo


def _store(
    store: ResultCache,
    root_key: str,
    digests: Mapping[str, str],
    project_key: str,
    index: ProjectIndex,
    facts: _ResolvedFacts,
) -> None:
    """Store this resolution; the rows of files not resolved again are kept as stored."""
    records = facts.records
    position = facts.position
    files = []
    for record in records:
        key = record.key
        in_model, in_data = facts.reached_functions(key)
        reach = [sorted(in_model), sorted(in_data)]
        made = facts.made.get(key)
        if made is None:
            # same keys in the same order: the stored indexes hold
            files.append(facts.stored.files[key][:7] + reach)  # type: ignore[union-attr]
            continue
        entry = record.entry
        files.append(
            [
                digests[key],
                entry_shape(entry),
                bool(entry["patches"]),
                sorted(position[u] for u in index.modules_used(record)),
                entry["paths"],
                record.shown or record.key,
                facts.encoded(made),
                *reach,
            ]
        )
    value = {
        "build": _build_key(),
        "project": project_key,
        "reusable": not index.order_sensitive,
        "layout": layout_key(records),
        "patched": [list(p) for p in facts.patched],
        "keys": [r.key for r in records],
        "files": files,
    }
    store.store_value(RESOLVED, root_key, value)


# -- local facts as plain data ---------------------------------------------------------


def _encode_local(local: LocalFacts, position: Mapping[str, int]) -> list:
    def nodes(items) -> list[str]:
        return [f"{position[key]}:{name}" for key, name in items]

    return [
        list(local.model_classes),
        [list(p) for p in local.bindings],
        [list(p) for p in local.notes],
        list(local.functions),
        {name: nodes(out) for name, out in local.edges},
        nodes(local.model_seeds),
        nodes(local.data_seeds),
    ]


def _decode_local(value: Any, keys: list[str]) -> LocalFacts:
    classes, bindings, notes, functions, edges, model_seeds, data_seeds = value

    def nodes(items: Any) -> tuple[tuple[str, str], ...]:
        found = []
        for node in _list(items):
            index, _, name = _text(node).partition(":")
            found.append((keys[_index(int(index))], name))
        return tuple(found)

    if type(edges) is not dict:
        raise ValueError("not a dict")
    return LocalFacts(
        model_classes=tuple(_text(c) for c in _list(classes)),
        bindings=tuple(_pair(p) for p in _list(bindings)),
        notes=tuple(_pair(p) for p in _list(notes)),
        functions=tuple(_text(f) for f in _list(functions)),
        edges=tuple((_text(name), nodes(out)) for name, out in edges.items()),
        model_seeds=nodes(model_seeds),
        data_seeds=nodes(data_seeds),
    )


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("not a string")
    return value


def _list(value: Any) -> list:
    if type(value) is not list:
        raise ValueError("not a list")
    return value


def _index(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError("not an index")
    return value


def _pair(value: Any) -> tuple[str, str]:
    first, second = _list(value)
    return _text(first), _text(second)
