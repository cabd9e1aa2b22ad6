"""The resolved project, stored, so that a run after an edit re-resolves what the edit
can change instead of the whole project.

The pre-commit hook checks the file that was just edited: every run sees a project one
file away from the last one. Resolving a thousand-file project costs a fifth of a
second; one file's :class:`~kmigrate.engine.module_facts.LocalFacts` cost a few
milliseconds. So the last resolution is kept (one signed file in the index store):
per file its content digest, its shape (:func:`~kmigrate.engine.project_entry.entry_shape`),
the names it is imported by, the import paths it resolves names through, the modules
those reach, its file names and its local facts.

Against it, a run redoes the local facts of

- the files whose content changed;
- when a file's shape changed (a new import, base class or re-export), every file
  whose imports reach it: only those can resolve a name through it
  (``ProjectIndex.modules_used``);
- when files were added, removed or renamed (or a new ``__init__.py`` renamed the
  modules below it), the files whose import paths can name them
  (:func:`~kmigrate.engine.project_facts.path_reaches`), and every file whose imports
  reach those;

and closes the call graph again over all local facts, unless no file came or went
and every file redone has the graph its row holds: then the stored closure holds, and
only the rows of the files redone are read (see :class:`StoredResolution`). That is
the same as resolving from scratch: what a name resolves to does not depend on the
order names are asked for, import cycles included (``ProjectIndex._settled``), unless
resolution met its depth bound. Such a project, a change that reaches a module patching
TF/Keras functions, or another kmigrate build, is resolved in full.

Call graph nodes are stored as "slot:name" strings, a slot being a file's index in the
stored key list. Slots stay put while files come and go (a new file takes a new slot,
a removed one leaves a hole) so that the rows of files not resolved again stay valid;
a full resolution lays them out afresh.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from kmigrate.engine.module_facts import LocalFacts, LocalFactsFrom, ModuleFacts, Reload
from kmigrate.engine.module_record import ModuleRecord, imported_paths
from kmigrate.engine.project_entry import ENTRY_FORMAT, entry_shape
from kmigrate.engine.project_facts import ProjectFacts, RecordImports, closure, path_reaches
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.project.site_modules import outside_models
from kmigrate.store.plain_data import checked_line, checked_list, checked_pair, checked_text

if TYPE_CHECKING:
    from kmigrate.store.cache import ResultCache

RESOLVED = "resolved"  # the store's namespace; one value per project root
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
STATE_FORMAT = 8
# Where a row's local facts hold the call graph: edges, model seeds, data seeds.
_GRAPH = slice(4, 7)


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
    """A stored row that does not have the shape :func:`_store` writes: the stored
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
    full resolution, :class:`_Fallback`). After an edit a run reads the rows of the
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
        self._rows: dict[str, list] = {}
        self._local: dict[str, LocalFacts] = {}

    # A file's header: [digest, has patches, layout digest, path as shown, [file names],
    # its stat then or None (``index_pass.file_stamp``), its first SavedModel reload
    # as [line or 0, reader] (a saving module's facts name the reloading modules: read
    # from the headers, a `check` of it decodes no other row), the paths its imports
    # name in the project (``imported_paths``: the same for ``ModuleFacts.imported_by``)].
    # Its row: [shape, [used module slots], local facts, [functions reached from model
    # code], [... from data pipelines], layout, [import paths]]. In the local facts, call
    # graph nodes are "slot:name" strings: the stored graph is closed without decoding.
    def digest(self, key: str) -> str | None:
        head = self.heads.get(key)
        return None if head is None else head[0]

    def stamped_digest(self, key: str, stamp: list[int]) -> str | None:
        """The digest of ``key`` if it was stored with this stat (``stamp``), else None."""
        head = self.heads.get(key)
        return head[0] if head is not None and head[5] == stamp else None

    def patches(self, key: str) -> bool:
        return self.heads[key][1]

    def reload_of(self, key: str) -> Reload:
        line, reader = self.heads[key][6]
        return line, reader

    def layout_digest(self, key: str) -> str:
        return self.heads[key][2]

    def imported_paths(self, key: str) -> list[str]:
        """The paths the file's imports name in the project (``imported_paths``)."""
        return self.heads[key][7]

    def shown(self, key: str) -> str:
        return self.heads[key][3]

    def paths(self, key: str) -> list[str]:
        return self.heads[key][4]

    def row(self, key: str) -> list:
        """The row of ``key``, checked when first read (:class:`DamagedRowError`)."""
        found = self._rows.get(key)
        if found is None:
            try:
                found = json.loads(self.lines[self.position[key]])
                _check_row(found, self.slots)
            except (ValueError, TypeError, RecursionError) as error:
                raise DamagedRowError(f"a stored row does not fit: {error}") from None
            self._rows[key] = found
        return found

    def shape(self, key: str) -> str:
        return self.row(key)[0]

    def uses(self, key: str) -> list[str]:
        found = []
        for slot in self.row(key)[1]:
            used = self.slots[slot]
            if used is not None:
                found.append(used)
        return found

    def reach(self, key: str) -> tuple[list[str], list[str]]:
        """(model, data): the top-level functions of ``key`` reached, as stored."""
        row = self.row(key)
        return row[3], row[4]

    def layout(self, key: str) -> str:
        return self.row(key)[5]

    def import_paths(self, key: str) -> list[str]:
        return self.row(key)[6]

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
            found = self._local[key] = _decode_local(self.row(key)[2], self.slots)
        return found

    def graph(self, key: str) -> tuple[dict[str, list[str]], list[str], list[str]]:
        """(edges by node name, model seeds, data seeds) of one row, undecoded."""
        edges, model_seeds, data_seeds = self.row(key)[2][_GRAPH]
        return edges, model_seeds, data_seeds

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


def _checked_reload(value: Any) -> Reload:
    line, reader = checked_list(value)
    return checked_line(line), checked_text(reader)


def _check_head(head: Any) -> None:
    if type(head) is not list or len(head) != 8:
        raise ValueError("not a file's header")
    digest, patches, layout_of, shown, paths, stamp, reload, imported = head
    _checked_reload(reload)
    _texts(imported)
    if not (type(digest) is type(layout_of) is type(shown) is str):
        raise ValueError("not a file's header")
    if patches is not True and patches is not False:
        raise ValueError("not a flag")
    _texts(paths)
    if stamp is not None and not (
        type(stamp) is list and len(stamp) == 5 and all(type(n) is int for n in stamp)
    ):
        raise ValueError("not a stat")


def _check_row(row: Any, slots: list[str | None]) -> None:
    """Raise ValueError unless ``row`` has the shape :func:`_store` writes."""
    if type(row) is not list or len(row) != 7:
        raise ValueError("not a file's row")
    shape, uses, local, model, data, layout_of, imports = row
    if not (type(shape) is type(layout_of) is str):
        raise ValueError("not a file's row")
    for slot in checked_list(uses):
        if type(slot) is not int or not 0 <= slot < len(slots):
            raise ValueError("not a slot")
    for texts in (model, data, imports):
        _texts(texts)
    if type(local) is not list or len(local) != len(_LocalRow._fields):
        raise ValueError("not local facts")
    row = _LocalRow(*local)
    if row.saves is not True and row.saves is not False:
        raise ValueError("not a flag")
    _checked_reload(row.reload)
    _texts(row.classes)
    _texts(row.functions)
    _texts(row.namespace_imports)
    _texts(row.star_exports)
    for pair in (*checked_list(row.bindings), *checked_list(row.notes)):
        checked_pair(pair)
    for pair in checked_list(row.undecided):
        checked_pair(pair)
    if type(row.edges) is not dict:
        raise ValueError("not a dict")
    for out in (*row.edges.values(), row.model_seeds, row.data_seeds):
        for node in checked_list(out):
            slot, colon, _ = checked_text(node).partition(":")
            if not (colon and slot.isdigit() and int(slot) < len(slots) and slots[int(slot)]):
                raise ValueError("not a node")


def _texts(value: Any) -> None:
    for item in checked_list(value):
        if type(item) is not str:
            raise ValueError("not a string")


class _Fallback(ProjectFacts):
    """Facts read from a stored resolution, which may hold a row that does not fit
    (:class:`DamagedRowError`, found when the row is first read): then every answer comes
    from ``fallback``, a full resolution, made once."""

    def __init__(
        self, *args: Any, fallback: Callable[[], ProjectFacts] | None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._fallback = fallback  # None: nothing is read from stored rows
        self._full: ProjectFacts | None = None

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


class _StoredFacts(_Fallback):
    def __init__(self, stored: StoredResolution, fallback: Callable[[], ProjectFacts]) -> None:
        keys = list(stored.files)
        local = _Rows(stored, {}, keys)
        files = {key: (stored.shown(key), stored.paths(key)) for key in keys}

        super().__init__(local, files, stored.patched, stored, fallback=fallback)
        self.stored = stored

    def reached_functions(self, key: str) -> tuple[set[str], set[str]]:
        model, data = self.stored.reach(key)
        return set(model), set(data)

    def reload_of(self, key: str) -> Reload:
        return self.stored.reload_of(key)


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


class _Rows(Mapping[str, LocalFacts]):
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


class _ResolvedFacts(_Fallback):
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
            local = _Rows(stored, made, keys)
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
        super().__init__(local, files, patched, imports, fallback=fallback)
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
        return all(self.encoded(key)[_GRAPH] == list(stored.graph(key)) for key in self.made)

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
                    own, model_seeds, data_seeds = self.encoded(record.key)[_GRAPH]
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
            found = self._encoded[key] = _encode_local(self.made[key], self.position)
        return found

    def reload_of(self, key: str) -> Reload:
        made = self.made.get(key)
        if made is not None or self.stored is None:
            return super().reload_of(key)
        return self.stored.reload_of(key)

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


def resolve(
    records: Sequence[ModuleRecord],
    digests: Mapping[str, str],
    project_key: str,
    spec: Any,
    store: ResultCache | None,
    root_key: str,
    stored: StoredResolution | None = None,
    load_all: Callable[[], None] | None = None,
    made: Mapping[str, LocalFactsFrom] | None = None,
    stamps: Mapping[str, list[int] | None] | None = None,
) -> ProjectFacts:
    """The facts of every module of ``records`` (``digests``: each record's file digest),
    reusing the stored resolution where the changes allow, and storing this one.
    ``load_all``: reads every record's entry at once, before a full resolution (records
    may read their entries one by one, when resolution first needs them). ``made``:
    local facts made by smaller indexes (a cold scan's first analyses), which a full
    resolution takes where they are its own (``LocalFactsFrom``). ``stamps``: each
    file's stat, kept with its digest (``index_pass.ProjectFiles``). A stored row that
    does not fit, met now or when a module's facts are asked for, means a full
    resolution."""
    stamps = stamps or {}
    records = sorted(records, key=lambda r: r.key)

    def full() -> ProjectFacts:
        if load_all is not None:
            load_all()
        index, local = _local_facts(records, spec, made or {})
        facts = _ResolvedFacts(records, local, None, index.patched_symbols(), index)
        if store is not None:
            _store(store, root_key, digests, stamps, project_key, facts)
        return facts

    if stored is not None and stored.reusable:
        try:
            facts = _resolve_again(records, digests, spec, stored, full)
            if facts is not None:
                if store is not None:
                    _store(store, root_key, digests, stamps, project_key, facts)
                return facts
        except DamagedRowError:
            pass
    return full()


def _local_facts(
    records: Sequence[ModuleRecord], spec: Any, made: Mapping[str, LocalFactsFrom]
) -> tuple[ProjectIndex, dict[str, LocalFacts]]:
    """The index of ``records`` and every module's local facts in it: those ``made``
    elsewhere where this index agrees with the one they came from, the others made
    here. If this index meets the depth bound, what a name resolves to depends on the
    order names are asked for: then all are made here, in order, as a resolution
    without ``made`` would."""
    index = ProjectIndex(records, spec, outside=outside_models(spec))
    local = {}
    for record in records:
        found = made.get(record.key)
        if found is not None and index.agrees(found):
            local[record.key] = found.local
        else:
            local[record.key] = index.local(record)
    if made and index.order_sensitive:
        return _local_facts(records, spec, {})
    return index, local


def _resolve_again(
    records: Sequence[ModuleRecord],
    digests: Mapping[str, str],
    spec: Any,
    stored: StoredResolution,
    fallback: Callable[[], ProjectFacts],
) -> _ResolvedFacts | None:
    """The facts, with only what the changes since ``stored`` reach resolved again;
    None when that cannot be exact (the depth bound met, a patching module reached)."""
    known = stored.files
    new = {
        r.key
        for r in records
        if r.key not in known or layout_digest(layout(r)) != stored.layout_digest(r.key)
    }
    changed = {
        r.key for r in records if r.key not in new and digests[r.key] != stored.digest(r.key)
    }
    current = {r.key for r in records}
    gone = [key for key in known if key not in current or key in new]
    # a module that may patch TF/Keras functions: read its entry only if it changed
    patching = [
        r
        for r in records
        if (r.entry["patches"] if r.key in new or r.key in changed else stored.patches(r.key))
    ]
    index = ProjectIndex(records, spec, patching, outside=outside_models(spec))
    by_key = {r.key: r for r in records}
    if stored.patch_targets is not None:  # unless a patching module is redone (below)
        patches = _patches_of(stored.patch_targets, by_key)
        if patches is not None:
            index.reuse_patches(patches)
    redo = new | changed
    # whose resolution may change: files whose import paths can name a module that
    # came, went or moved, and those whose imports reach a reshaped or moved module
    names = {n for key in new for n in by_key[key].names}
    names.update(n for key in gone for n in stored.names(key))
    seeds = set(new) | set(gone)
    seeds.update(key for key in changed if entry_shape(by_key[key].entry) != stored.shape(key))
    if names:
        for record in records:
            key = record.key
            paths = index.import_paths(record) if key in redo else stored.import_paths(key)
            if any(path_reaches(p, n) for p in paths for n in names):
                seeds.add(key)
    if seeds:
        users: dict[str, set[str]] = {}  # module -> the modules whose imports reach it
        for record in records:
            key = record.key
            for used in index.modules_used(record) if key in redo else stored.uses(key):
                users.setdefault(used, set()).add(key)
        todo = list(seeds)
        reached = set(seeds)
        while todo:
            for user in users.get(todo.pop(), ()):
                if user not in reached:
                    reached.add(user)
                    todo.append(user)
        redo |= reached & current
    # a module replacing TF/Keras functions changes what calls run everywhere
    if any(by_key[key].entry["patches"] for key in redo) or any(
        stored.patches(key) for key in redo | set(gone) if key in known
    ):
        return None
    made = {key: index.local(by_key[key]) for key in sorted(redo)}
    if index.order_sensitive:
        return None  # the depth bound: what was reused may differ from a fresh resolution
    return _ResolvedFacts(records, made, stored, stored.patched, index, fallback)


def _store(
    store: ResultCache,
    root_key: str,
    digests: Mapping[str, str],
    stamps: Mapping[str, list[int] | None],
    project_key: str,
    facts: _ResolvedFacts,
) -> None:
    """Store this resolution, laid out as :class:`StoredResolution` reads it. The row
    of a file not resolved again whose reach did not change is copied as stored (its
    slots hold): after an edit, most of the file is bytes copied, not data encoded."""
    try:
        data = _stored_bytes(project_key, digests, stamps, facts)
    except DamagedRowError:
        raise  # a stored row read for its reach: resolve in full
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        return  # not plain data (a path that is no text): not stored
    store.store_bytes(RESOLVED, root_key, data)


def _patches_to_store(facts: _ResolvedFacts) -> list | None:
    """``ProjectIndex.patched`` as worked out in this run, else as stored (still right:
    a run that resolves a patching module again resolves the whole project)."""
    patches = facts.index.known_patches()
    if patches is None:
        patches = facts.stored.patch_targets if facts.stored is not None else None
    if patches is None:
        return None
    return [[symbol, where, _stored_target(t)] for symbol, (where, t) in sorted(patches.items())]


_RECORD_TARGETS = ("class", "function", "module")  # targets that hold a ModuleRecord


def _stored_target(target: tuple) -> list[str]:
    """A resolved target as text: a module record by its key."""
    if target[0] in _RECORD_TARGETS:
        return [target[0], target[1].key, *target[2:]]
    return list(target)


def _patches_of(
    stored: dict[str, tuple[str, tuple]], by_key: Mapping[str, ModuleRecord]
) -> dict[str, tuple[str, tuple]] | None:
    """The stored patches with each key back to its record; None if one is gone."""
    found = {}
    for symbol, (where, target) in stored.items():
        if target and target[0] in _RECORD_TARGETS:
            record = by_key.get(target[1]) if len(target) > 1 else None
            if record is None:
                return None
            target = (target[0], record, *target[2:])
        found[symbol] = (where, target)
    return found


def _stored_bytes(
    project_key: str,
    digests: Mapping[str, str],
    stamps: Mapping[str, list[int] | None],
    facts: _ResolvedFacts,
) -> bytes:
    index = facts.index
    position = facts.position
    stored = facts.stored
    heads: list[list | None] = []
    lines: list[bytes] = []
    by_key = {record.key: record for record in facts.records}
    roots = {name.partition(".")[0] for record in facts.records for name in record.names}
    for key in facts.slots:
        record = by_key.get(key) if key is not None else None
        if record is None:
            heads.append(None)
            lines.append(b"")
            continue
        if key in facts.made or stored is None:
            entry = record.entry
            row_layout = layout(record)
            heads.append(
                [
                    digests[key],
                    bool(entry["patches"]),
                    layout_digest(row_layout),
                    record.shown or key,
                    entry["paths"],
                    stamps.get(key),
                    list(facts.made[key].saved_model_reload),
                    [p for p in imported_paths(record) if p.partition(".")[0] in roots],
                ]
            )
            in_model, in_data = facts.reached_functions(key)
            row = [
                entry_shape(entry),
                sorted(position[u] for u in index.modules_used(record)),
                facts.encoded(key),
                sorted(in_model),
                sorted(in_data),
                row_layout,
                index.import_paths(record),
            ]
            lines.append(_encode(row))
            continue
        heads.append(
            [digests[key], *stored.heads[key][1:5], stamps.get(key), *stored.heads[key][6:]]
        )
        if facts.graph_kept:
            lines.append(stored.lines[stored.position[key]])
            continue
        in_model, in_data = facts.reached_functions(key)
        reach = [sorted(in_model), sorted(in_data)]
        row = stored.row(key)
        if reach == row[3:5]:
            lines.append(stored.lines[stored.position[key]])
        else:
            lines.append(_encode([*row[:3], *reach, *row[5:]]))
    head = {
        "build": build_key(),
        "project": project_key,
        "reusable": not index.order_sensitive,
        "patched": [list(p) for p in facts.patched],
        "patch_targets": _patches_to_store(facts),
        "keys": facts.slots,
        "files": heads,
    }
    return b"\n".join([_encode(head), *lines])


def _encode(value: Any) -> bytes:
    """Compact JSON: it never holds a raw newline, which ends a line of the stored file."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")


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
        local.saves_saved_model,
        list(local.saved_model_reload),
        [list(p) for p in local.undecided_calls],
        list(local.namespace_imports),
        list(local.star_exports),
    ]


def _decode_local(value: list, slots: list[str | None]) -> LocalFacts:
    """A row's local facts as objects. The row was checked whole when the resolution was
    loaded (:func:`_check_row`: texts, pairs, nodes naming a file that is still there),
    so nothing is checked again here: a warm re-scan decodes every file's row."""
    row = _LocalRow(*value)

    def nodes(items: list[str]) -> tuple[tuple[str, str], ...]:
        found = []
        for node in items:
            slot, _, name = node.partition(":")
            found.append((slots[int(slot)], name))
        return tuple(found)

    return LocalFacts(
        model_classes=tuple(row.classes),
        bindings=_pairs(row.bindings),
        notes=_pairs(row.notes),
        functions=tuple(row.functions),
        edges=tuple((name, nodes(out)) for name, out in row.edges.items()),
        model_seeds=nodes(row.model_seeds),
        data_seeds=nodes(row.data_seeds),
        saves_saved_model=row.saves,
        saved_model_reload=(row.reload[0], row.reload[1]),
        undecided_calls=_pairs(row.undecided),
        namespace_imports=tuple(row.namespace_imports),
        star_exports=tuple(row.star_exports),
    )


def _pairs(items: list[list[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((first, second) for first, second in items)


class _LocalRow(NamedTuple):
    """A row's local facts as stored (:func:`_encode_local`), field by field."""

    classes: list
    bindings: list
    notes: list
    functions: list
    edges: dict
    model_seeds: list
    data_seeds: list
    saves: bool
    reload: list  # [line or 0, reader]
    undecided: list
    namespace_imports: list
    star_exports: list
