"""The stored resolution as a run reads it: one signed file per project root, a header
line then one row per file, each checked when first read; and the facts it gives,
with a full resolution to fall back on when a row does not fit. The format is
:data:`STATE_FORMAT`; project/resolution_cache.py says when it is reused."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kmigrate.engine.fact_provider import Provided, decode_locals
from kmigrate.engine.module_facts import LocalFacts, ModuleFacts, Node
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_entry import ENTRY_FORMAT
from kmigrate.engine.project_facts import ProjectFacts, closure, reached_from
from kmigrate.project.local_facts_rows import GraphRow, OwnRow, decode_local, decode_node
from kmigrate.store.plain_data import checked_list, checked_pair, checked_text

if TYPE_CHECKING:
    from kmigrate.engine.spec import ContextSpec
    from kmigrate.store.cache import ResultCache

RESOLVED = "resolved"  # the store's namespace; one value per project root
STATE_FORMAT = 11
# 11: a row is two JSON values on one line, split by a tab: the module's own facts with
# what the closed call graph reached in it (functions, methods, the data seed of each
# mixed function), then the rest (shape, uses, its part of the graph, layout, import
# paths): a warm re-scan decodes only the first of each row;
# 10: a file's header holds its local values of the rules' fact providers ({name: value},
# engine/fact_provider.py), which took the place of its first SavedModel reload; the local
# facts no longer say whether it saves or reloads SavedModels (a provider's value does);
# 9: a file's header and local facts say whether the module uses Keras (a project with
# one such module is a Keras project: ``ModuleFacts.keras_project``, read from the headers);
# 8: the call graph also reaches registries' values, held helper objects' and mixins'
# methods, and bases from installed packages are read (kmigrate.project.site_modules);
# 7: local facts also keep the names the module's imports bind to swapped Keras
# namespaces and those a star import takes; a file's header, the paths its imports name
# in the project (``ModuleFacts.imported_by``: a `check` decodes no other row for it);
# 6: a file's first SavedModel reload is its line and the reader it calls (was the line);
# 5: local facts also keep the calls resolution could not decide (star imports of one
# module per backend); 4: a header line, then one line per file's row (decoded when
# used, rewritten only when it changed), whose local facts say whether the file saves
# or reloads SavedModels; 2 was one JSON value, checked whole when loaded


@functools.cache
def build_key() -> str:
    """Stored resolutions are only reused by the kmigrate build that made them."""
    from kmigrate.store.cache import code_fingerprint

    return f"{STATE_FORMAT}.{ENTRY_FORMAT}.{code_fingerprint()}"


def layout(record: ModuleRecord) -> str:
    """What resolution reads of a file besides its entry: its names, package, folder
    and the path reports show."""
    return repr((record.names, record.package, record.folder, record.shown))


def layout_digest(text: str) -> str:
    """The short digest of a :func:`layout` the header keeps for every file."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class DamagedRowError(ValueError):
    """A stored row that does not have the shape :func:`store_resolution` writes: the stored
    resolution is a miss, found out when the row is first read."""


class StoredResolution:
    """The last resolution of one project, as stored: a header line (plain JSON, checked
    whole when loaded: anything malformed makes the whole value a miss, as for any cache
    entry), then one line per slot, the file's row.

    The header holds what a run reads of every file: its digest (with the stat it had
    then, so that an unchanged file need not be read), whether it patches TF/Keras
    functions, its layout's digest, its path as shown and its file names. A
    row holds the rest (shape, the modules its imports reach, local facts, the
    functions reached, layout, import paths); it is parsed and checked when first used
    (a row that does not fit raises :class:`DamagedRowError`, which the reader turns into a
    full resolution, :class:`Fallback`). After an edit a run reads the rows of the
    files it resolves again, and the next stored resolution copies the bytes of every
    row that did not change."""

    def __init__(self, body: bytes) -> None:
        head, *lines = body.split(b"\n")
        value = json.loads(head)
        if type(value) is not dict:
            raise ValueError("not a header")
        self.build: str = checked_text(value["build"])
        self.project: str = checked_text(value["project"])
        self.reusable = value["reusable"] is True
        self.patched = tuple(checked_pair(p) for p in checked_list(value["patched"]))
        self.patch_targets = _checked_patches(value["patch_targets"])
        slots = checked_list(value["keys"])  # None: the hole a removed file left
        files = checked_list(value["files"])
        if not len(files) == len(slots) == len(lines):
            raise ValueError("files, keys and rows differ")
        self.slots: list[str | None] = [None if k is None else checked_text(k) for k in slots]
        self.lines = lines  # by slot: the row as stored
        self.position: dict[str, int] = {}
        self.heads: dict[str, list] = {}
        for slot, (key, head_row) in enumerate(zip(self.slots, files, strict=True)):
            if key is not None:
                _check_head(head_row)
                self.heads[key] = head_row
                self.position[key] = slot
        self.files = self.heads  # the keys of the files stored
        self._own: dict[str, list] = {}
        self._rest: dict[str, list] = {}
        self._local: dict[str, LocalFacts] = {}
        providers = _spec().providers()
        # by key: the header's local values of the fact providers, decoded and checked
        self.provided: dict[str, Provided] = {
            key: decode_locals(providers, head[6]) for key, head in self.heads.items()
        }

    # A file's header: [digest, has patches, layout digest, path as shown, [file names],
    # its stat then or None (``project_files.file_stamp``), its local values of the
    # fact providers as {name: value} (a module's facts are made from the others' values:
    # read from the headers, a `check` of it decodes no other row), the paths its imports
    # name in the project (``imported_paths``: the same for ``ModuleFacts.imported_by``),
    # whether the module uses Keras (``LocalFacts.uses_keras``: every module's facts say
    # whether the project does)].
    # Its row, two JSON values split by a tab: [own facts (``OwnRow``), [functions
    # reached from model code], [... from data pipelines], [methods reached from model
    # code], {mixed function: the data seed it is first reached from}], then [shape, [used
    # module slots], its part of the call graph (``GraphRow``), layout, [import paths]].
    # Call graph nodes are "slot:name" strings, decoded only when the graph is closed again.
    def digest(self, key: str) -> str | None:
        head = self.heads.get(key)
        return None if head is None else head[0]

    def stamped_digest(self, key: str, stamp: list[int]) -> str | None:
        """The digest of ``key`` if it was stored with this stat (``stamp``), else None."""
        head = self.heads.get(key)
        return head[0] if head is not None and head[5] == stamp else None

    def patches(self, key: str) -> bool:
        return self.heads[key][1]

    def provided_of(self, key: str) -> Provided:
        """The file's local values of the fact providers, from its header."""
        return self.provided[key]

    def uses_keras(self, key: str) -> bool:
        return self.heads[key][8]

    def layout_digest(self, key: str) -> str:
        return self.heads[key][2]

    def imported_paths(self, key: str) -> list[str]:
        """The paths the file's imports name in the project (``imported_paths``)."""
        return self.heads[key][7]

    def shown(self, key: str) -> str:
        return self.heads[key][3]

    def paths(self, key: str) -> list[str]:
        return self.heads[key][4]

    def own(self, key: str) -> list:
        """The first part of ``key``'s row (its own facts and what the graph reached in
        it: the layout above), checked when first read (:class:`DamagedRowError`)."""
        found = self._own.get(key)
        if found is None:
            found = self._own[key] = self._part(key, 0, _check_own)
        return found

    def rest(self, key: str) -> list:
        """The second part of ``key``'s row (shape, uses, graph, layout, import paths),
        checked when first read."""
        found = self._rest.get(key)
        if found is None:
            found = self._rest[key] = self._part(key, 1, _check_rest)
        return found

    def _part(self, key: str, number: int, check: Callable[[Any, list], None]) -> list:
        line = self.lines[self.position[key]]
        parts = line.split(b"\t")
        try:
            if len(parts) != 2:
                raise ValueError("not a row of two parts")
            found = json.loads(parts[number])
            check(found, self.slots)
        except (ValueError, TypeError, RecursionError) as error:
            raise DamagedRowError(f"a stored row does not fit: {error}") from None
        return found

    def shape(self, key: str) -> str:
        return self.rest(key)[0]

    def uses(self, key: str) -> list[str]:
        found = []
        for slot in self.rest(key)[1]:
            used = self.slots[slot]
            if used is not None:
                found.append(used)
        return found

    def reach(self, key: str) -> tuple[list[str], list[str]]:
        """(model, data): the top-level functions of ``key`` reached, as stored."""
        own = self.own(key)
        return own[1], own[2]

    def methods(self, key: str) -> list[str]:
        """The ``Class.method`` nodes of ``key`` reached from model code, as stored."""
        return self.own(key)[3]

    def data_seed(self, node: Node) -> Node:
        """The data function a mixed function of this module is first reached from."""
        key, name = node
        seed = self.own(key)[4].get(name)
        if seed is None:
            raise DamagedRowError("a stored row does not fit: no data seed")
        return decode_node(seed, self.slots)

    def layout(self, key: str) -> str:
        return self.rest(key)[3]

    def import_paths(self, key: str) -> list[str]:
        return self.rest(key)[4]

    def names(self, key: str) -> tuple[str, ...]:
        """The module names in the stored layout (for files since renamed or gone)."""
        import ast

        try:
            names = ast.literal_eval(self.layout(key))[0]
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, IndexError):
            raise DamagedRowError("not a layout") from None
        if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
            raise DamagedRowError("not module names")
        return names

    def local(self, key: str) -> LocalFacts:
        found = self._local.get(key)
        if found is None:
            own = self.own(key)[0]
            found = self._local[key] = decode_local(own, self.provided[key])
        return found

    def graph(self, key: str) -> list:
        """[edges by node name, model seeds, data seeds] of one row, undecoded."""
        return self.rest(key)[2]

    def facts(self, fallback: Callable[[], ProjectFacts]) -> ProjectFacts:
        """The stored project's facts, as resolved then: a module's facts are read
        from its own row (what its functions are reached from was stored too).
        ``fallback``: the facts of a full resolution, for when a row does not fit."""
        return _StoredFacts(self, fallback)


def _checked_patches(value: Any) -> dict[str, tuple[str, tuple]] | None:
    """The stored ``ProjectIndex.patched`` (symbol -> (module, target)), or None."""
    if value is None:
        return None
    found = {}
    for item in checked_list(value):
        if type(item) is not list or len(item) != 3:
            raise ValueError("not a patch")
        symbol, where, target = item
        checked_text(symbol)
        checked_text(where)
        found[symbol] = (where, tuple(checked_text(t) for t in checked_list(target)))
    return found


def _check_head(head: Any) -> None:
    if type(head) is not list or len(head) != 9:
        raise ValueError("not a file's header")
    digest, patches, layout_of, shown, paths, stamp, _provided, imported, keras = head
    _texts(imported)  # (the provided values are decoded, so checked, by the caller)
    if not (type(digest) is type(layout_of) is type(shown) is str):
        raise ValueError("not a file's header")
    if type(patches) is not bool or type(keras) is not bool:
        raise ValueError("not a flag")
    _texts(paths)
    if stamp is not None and not (
        type(stamp) is list and len(stamp) == 5 and all(type(n) is int for n in stamp)
    ):
        raise ValueError("not a stat")


def _check_own(row: Any, slots: list[str | None]) -> None:
    """Raise ValueError unless ``row`` has the shape of a row's first part."""
    if type(row) is not list or len(row) != 5:
        raise ValueError("not a file's own facts")
    local, model, data, methods, seeds = row
    for texts in (model, data, methods):
        _texts(texts)
    if type(local) is not list or len(local) != len(OwnRow._fields):
        raise ValueError("not local facts")
    own = OwnRow(*local)
    if type(own.keras) is not bool:
        raise ValueError("not a flag")
    _texts(own.classes)
    _texts(own.functions)
    _texts(own.namespace_imports)
    _texts(own.star_exports)
    for pair in (*checked_list(own.bindings), *checked_list(own.notes)):
        checked_pair(pair)
    for pair in checked_list(own.undecided):
        checked_pair(pair)
    if type(seeds) is not dict:
        raise ValueError("not a dict")
    _nodes(seeds.values(), slots)


def _check_rest(row: Any, slots: list[str | None]) -> None:
    """Raise ValueError unless ``row`` has the shape of a row's second part."""
    if type(row) is not list or len(row) != 5:
        raise ValueError("not a file's row")
    shape, uses, graph, layout_of, imports = row
    if not (type(shape) is type(layout_of) is str):
        raise ValueError("not a file's row")
    for slot in checked_list(uses):
        if type(slot) is not int or not 0 <= slot < len(slots):
            raise ValueError("not a slot")
    _texts(imports)
    if type(graph) is not list or len(graph) != len(GraphRow._fields):
        raise ValueError("not a call graph")
    edges, model_seeds, data_seeds = graph
    if type(edges) is not dict:
        raise ValueError("not a dict")
    for out in (*edges.values(), model_seeds, data_seeds):
        _nodes(checked_list(out), slots)


def _nodes(nodes: Any, slots: list[str | None]) -> None:
    for node in nodes:
        slot, colon, _ = checked_text(node).partition(":")
        if not (colon and slot.isdigit() and int(slot) < len(slots) and slots[int(slot)]):
            raise ValueError("not a node")


def _texts(value: Any) -> None:
    for item in checked_list(value):
        if type(item) is not str:
            raise ValueError("not a string")


class Rows(Mapping[str, LocalFacts]):
    """The local facts of ``keys``: those made in this run (``made``) over the stored."""

    def __init__(
        self, stored: StoredResolution, made: Mapping[str, LocalFacts], keys: list[str]
    ) -> None:
        self.stored = stored
        self.made = made
        self._order = keys

    def __getitem__(self, key: str) -> LocalFacts:
        found = self.made.get(key)
        return found if found is not None else self.stored.local(key)

    def __iter__(self):
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


class Fallback(ProjectFacts):
    """Facts read from a stored resolution, which may hold a row that does not fit
    (:class:`DamagedRowError`, found when the row is first read): then every answer comes
    from ``fallback``, a full resolution, made once."""

    def __init__(
        self, *args: Any, fallback: Callable[[], ProjectFacts] | None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._fallback = fallback  # None: nothing is read from stored rows
        self._full: ProjectFacts | None = None

    stored: StoredResolution | None = None

    def reach_is_stored(self) -> bool:
        """Whether the stored closure holds, so what the graph reached in each module is
        read from the first part of its row rather than the graph closed here."""
        return False

    def reached_functions(self, key: str) -> tuple[set[str], set[str]]:
        if self.reach_is_stored():
            model, data = self.stored.reach(key)  # type: ignore[union-attr]
            return set(model), set(data)
        return super().reached_functions(key)

    def methods_reached(self, key: str) -> Iterable[str]:
        if self.reach_is_stored():
            return self.stored.methods(key)  # type: ignore[union-attr]
        return super().methods_reached(key)

    def data_seed(self, node: Node) -> Node:
        if self.reach_is_stored():
            return self.stored.data_seed(node)  # type: ignore[union-attr]
        return super().data_seed(node)

    def graph_of(self, key: str) -> list:
        """Module ``key``'s part of the call graph, undecoded ("slot:name" nodes)."""
        raise NotImplementedError

    def graph_slots(self) -> list[str | None]:
        """The module key of each slot the graph's nodes name."""
        raise NotImplementedError

    def reached(self) -> tuple[set[Node], dict[Node, Node]]:
        """The closure over every module's stored or encoded part of the graph (the
        facts of a stored row leave the graph in the row): asked only when the stored
        closure cannot answer (a call into the project changed)."""
        if self._reach is None:
            edges: dict[Node, tuple[Node, ...]] = {}
            model_seeds: set[Node] = set()
            data_seeds: set[Node] = set()
            for key in self.local:
                own_edges, model, data = self.graph_nodes(key)
                for name, out in own_edges:
                    edges[(key, name)] = out
                model_seeds.update(model)
                data_seeds.update(data)
            self._reach = (closure(model_seeds, edges), reached_from(data_seeds, edges))
        return self._reach

    def graph_nodes(self, key: str) -> tuple[Iterable, Iterable[Node], Iterable[Node]]:
        """Module ``key``'s part of the call graph as nodes: (edges as (name, out)
        pairs, model seeds, data seeds), decoded from its row."""
        slots = self.graph_slots()
        own_edges, model, data = self.graph_of(key)
        return (
            ((name, tuple(decode_node(n, slots) for n in out)) for name, out in own_edges.items()),
            (decode_node(n, slots) for n in model),
            (decode_node(n, slots) for n in data),
        )

    def __getitem__(self, key: str) -> ModuleFacts:
        if self._full is None:
            try:
                return super().__getitem__(key)
            except DamagedRowError:
                if self._fallback is None:
                    raise
                self._full = self._fallback()
                self._full.add_file_users(self._outside_source)
        return self._full[key]


class _StoredFacts(Fallback):
    def __init__(self, stored: StoredResolution, fallback: Callable[[], ProjectFacts]) -> None:
        keys = list(stored.files)
        local = Rows(stored, {}, keys)
        files = {key: (stored.shown(key), stored.paths(key)) for key in keys}

        super().__init__(
            local, files, stored.patched, stored, providers=_spec().providers(), fallback=fallback
        )
        self.stored = stored

    def graph_of(self, key: str) -> list:
        return self.stored.graph(key)

    def graph_slots(self) -> list[str | None]:
        return self.stored.slots

    def reach_is_stored(self) -> bool:
        return True  # nothing changed since it was stored

    def provided_of(self, key: str) -> Provided:
        return self.stored.provided_of(key)

    def uses_keras(self, key: str) -> bool:
        return self.stored.uses_keras(key)


def _spec() -> ContextSpec:
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    return CONTEXT_SPEC


def load_resolution(store: ResultCache, root_key: str) -> StoredResolution | None:
    """The stored resolution of the project at ``root_key``, or None (missing, made by
    another build, unsigned or malformed: a miss)."""
    body = store.load_bytes(RESOLVED, root_key)
    if body is None:
        return None
    try:
        stored = StoredResolution(body)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError):
        return None
    return stored if stored.build == build_key() else None
