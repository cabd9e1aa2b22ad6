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
import builtins
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kmigrate.engine.helper_reach import HelperReach
from kmigrate.engine.project_entry import build_entry
from kmigrate.engine.spec import ContextSpec

if TYPE_CHECKING:
    from kmigrate.engine.tree_index import TreeIndex

MAX_DEPTH = 24  # alias and re-export chains longer than this are left unresolved
_UNKNOWN = ("unknown",)
_CLEAR = sys.maxsize  # a question met no question in flight (see ProjectIndex._settled)
_CLASS = object()  # ends the key of "is this class a model class?" (others end in a name)
_BUILTIN_NAMES = frozenset(dir(builtins))  # `object`, `Exception`: never a foreign base


# ---------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModuleFacts:
    """What the project says about one module, beyond what the module says itself.
    Plain, hashable data: it travels to worker processes and keys cached results."""

    model_classes: tuple[str, ...] = ()  # top-level classes that are Keras layers/models
    model_functions: tuple[str, ...] = ()  # top-level functions reached from model code
    # ``Class.method`` of classes that are not model classes, reached from model code:
    # helper objects a layer holds, mixins, loss objects, registry values
    model_methods: tuple[str, ...] = ()
    data_functions: tuple[str, ...] = ()  # ... reached from a data pipeline
    mixed_functions: tuple[str, ...] = ()  # ... reached from both: reported, not rewritten
    # (mixed function, where data code reaches it from: "" when it is data code itself,
    # else "`preprocess` in data.py"), so the finding can say which caller is data code
    data_callers: tuple[tuple[str, str], ...] = ()
    bindings: tuple[tuple[str, str], ...] = ()  # local name -> TF/Keras qualified name
    notes: tuple[tuple[str, str], ...] = ()  # (class or function, why it is undecided)
    # (symbol, module): TF/Keras functions the project replaces (``K.reshape = reshape``)
    patched: tuple[tuple[str, str], ...] = ()
    # (file name, other modules using it): a save here pairs with a load there
    shared_paths: tuple[tuple[str, str], ...] = ()
    # (module as shown, line of its first reload, the reader it calls): other modules that
    # reload SavedModels (the spec's ``saved_model_loads``), told to modules that save one
    # (at most three)
    saved_model_reloads: tuple[tuple[str, int, str], ...] = ()
    # (callee as written, why): calls whose project function resolution cannot decide
    undecided_calls: tuple[tuple[str, str], ...] = ()
    # (name, other modules as shown): of the names this module's own imports bind to a
    # namespace an import swap rebinds, those other modules import from it (by name, by
    # a star import, or through the module object): a swap here rebinds them there too
    imported_by: tuple[tuple[str, str], ...] = ()

    @property
    def reaches_framework(self) -> bool:
        """Whether a file without a TensorFlow/Keras marker still needs analysis: it
        reads a re-exported backend, or defines layers through a base class elsewhere
        (``self.add_weight(...)`` there is Keras code). Helpers without TF/Keras names
        have nothing to report."""
        return bool(self.bindings or self.model_classes)


Node = tuple[str, str]  # (module key, function name or ``Class.method``)
# A module's first SavedModel reload: (its line, the reader called, as a canonical symbol
# of the spec's ``saved_model_loads``); ``NO_RELOAD`` when it has none
Reload = tuple[int, str]
NO_RELOAD: Reload = (0, "")
# A file outside the modules that uses saved files: (path as shown, the saved-file names
# it names, its first SavedModel reload)
FileUse = tuple[str, tuple[str, ...], Reload]


@dataclass(frozen=True)
class LocalFacts:
    """What one module's own entry decides once its names are resolved against the
    project: its model classes, bindings and notes, and its part of the call graph.

    It depends on the module's entry and on the *shape* of the other modules (what they
    define, import and bind: ``project_entry.entry_shape``), never on their calls: so when a
    file's function bodies change, only its own local facts are made again, and the
    call graph is closed over the stored ones (:class:`ProjectFacts`)."""

    model_classes: tuple[str, ...] = ()
    bindings: tuple[tuple[str, str], ...] = ()
    notes: tuple[tuple[str, str], ...] = ()
    functions: tuple[str, ...] = ()  # top-level functions, in entry order
    # function / method nodes of the module -> the project functions they call (if any)
    edges: tuple[tuple[str, tuple[Node, ...]], ...] = ()
    model_seeds: tuple[Node, ...] = ()  # nodes that are model code whoever calls them
    data_seeds: tuple[Node, ...] = ()  # ... data-pipeline code
    saves_saved_model: bool = False  # calls one of the spec's ``saved_model_saves``
    saved_model_reload: Reload = NO_RELOAD  # its first call of a ``saved_model_loads``
    # (callee as written, why): calls of a name resolution cannot decide between project
    # functions (star imports of one backend module per backend): all are followed
    undecided_calls: tuple[tuple[str, str], ...] = ()
    # module-level names bound only by its own imports of a namespace an import swap
    # rebinds (``K``, ``keras``: the spec's ``swapped_namespaces``; ``ModuleFacts.imported_by``)
    namespace_imports: tuple[str, ...] = ()
    star_exports: tuple[str, ...] = ()  # ... of those, the names `from m import *` takes


@dataclass(frozen=True)
class LocalFactsFrom:
    """A module's local facts made by a smaller index than the project's (a worker's
    first guess, project/facts_guess.py), with what they were made from beyond the
    entries: each module name that index looked up and the keys of the modules it
    found, the first parts of dotted names it took as external without looking (no
    module of its started so), and the TF/Keras functions its modules replace. An
    index that gives the same answers to all of these (:meth:`ProjectIndex.agrees`)
    makes the same local facts, the entries being the same (those of the same bytes):
    resolution reads nothing else. Only made when that index did not meet the depth
    bound, where the answers would depend on the order names were asked for."""

    local: LocalFacts
    modules: tuple[tuple[str, tuple[str, ...]], ...]
    outside: frozenset[str]
    patched: tuple[tuple[str, str, tuple], ...]


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


def _root(dotted: str) -> str:
    return dotted.partition(".")[0]


def alternatives(targets: Iterable[Target]) -> tuple[Node, ...]:
    """The project functions (as call-graph nodes) any of ``targets`` may be."""
    found: set[Node] = set()
    for target in targets:
        if target[0] == "function":
            found.add((target[1].key, target[2]))
        elif target[0] == "ambiguous" and len(target) > 2:
            found.update(target[2])
    return tuple(sorted(found))


class ProjectIndex:
    """Resolution over the entries of one project."""

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
        self.spec = spec
        self.outside = outside
        self._outside_model: dict[str, bool] = {}
        self.canonical = spec.canonical  # memoised: resolution asks for the same names
        self.records = list(records)
        self.patching = self.records if patching is None else list(patching)
        self.by_name: dict[str, list[ModuleRecord]] = {}
        for record in self.records:
            for name in record.names:
                self.by_name.setdefault(name, []).append(record)
        self._roots = {name.partition(".")[0] for name in self.by_name}
        # What a name resolves to, and whether a class is a model class with its first
        # base from a package outside the project that is neither TensorFlow/Keras nor
        # the standard library (``params_flow.Layer``): see _settled for which answers
        # are kept, and why an answer met inside a cycle is kept only as asked first.
        self._memo: dict[Hashable, Any] = {}
        self._first: dict[Hashable, Any] = {}
        self._in_flight: dict[Hashable, int] = {}
        self._lowest = _CLEAR
        self._framework_roots = frozenset(
            symbol.partition(".")[0]
            for symbol in (
                *(short for _, short in spec.canonical_prefixes),
                *spec.model_base_prefixes,
            )
        )
        self._notes: dict[int, dict[str, str]] = {}
        self._patched: dict[str, tuple[str, Target]] | None = None
        self._facts: ProjectFacts | None = None
        self._below: dict[str, list[ModuleRecord]] | None = None
        # while local_with_reads works: the module names looked up, the roots missed
        self._looked_up: set[str] | None = None
        self._outside: set[str] | None = None
        # A chain longer than MAX_DEPTH makes what a name resolves to depend on where
        # the walk entered it; then this is set, and local facts made by another index
        # are not mixed with this one's (see project/resolution_cache.py). Cycles do
        # not: see _settled.
        self.order_sensitive = False
        # Whether a base from an installed package was met without an ``outside`` finder:
        # local facts made so are not taken by an index that has one (``agrees``).
        self.read_outside = False

    # -- modules -------------------------------------------------------------
    def _modules(self, name: str, importer: ModuleRecord) -> list[ModuleRecord]:
        if self._looked_up is not None:
            self._looked_up.add(name)
        found = self.by_name.get(name, [])
        if len(found) > 1:  # a script's sibling wins, as sys.path[0] does
            siblings = [r for r in found if r.folder == importer.folder]
            if siblings:
                return siblings[:1]
        return found

    def _absolute(self, record: ModuleRecord, module: str, level: int) -> str:
        return absolute_module(record, module, level)

    def _qualified(self, record: ModuleRecord, qualified: str, depth: int) -> Target:
        """Resolve an absolute dotted path: the longest prefix that is a project module,
        then the rest inside it; no prefix in the project: an external name."""
        parts = qualified.split(".")
        if parts[0] not in self._roots:  # tensorflow, keras, numpy...: no prefix is ours
            if self._outside is not None:
                self._outside.add(parts[0])
            return ("external", qualified)
        for cut in range(len(parts), 0, -1):
            found = self._modules(".".join(parts[:cut]), record)
            if not found:
                continue
            if len(found) > 1:
                shown = ", ".join(sorted(r.shown or r.key for r in found)[:3])
                return ("ambiguous", f"`{'.'.join(parts[:cut])}` is defined twice ({shown})")
            target = found[0]
            if cut == len(parts):
                return ("module", target)
            return self._in_module(target, ".".join(parts[cut:]), depth + 1)
        return ("external", qualified)

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

    # -- names ---------------------------------------------------------------
    def resolve(self, record: ModuleRecord, dotted: str) -> Target:
        """What ``dotted``, read at module level of ``record``, refers to."""
        return self._in_module(record, dotted, 0)

    def _in_module(self, record: ModuleRecord, dotted: str, depth: int) -> Target:
        key = (id(record), dotted)
        found = self._known(key, depth)
        if found is not None:
            return found
        if depth > MAX_DEPTH:
            self.order_sensitive = True
            self._lowest = -1
            return _UNKNOWN
        return self._settled(key, depth, lambda: self._lookup(record, dotted, depth))

    def _known(self, key: Hashable, depth: int) -> Any:
        """The kept answer to ``key``; for one in flight (a cycle back to it), the
        answer a cycle gets (nothing); else None."""
        found = self._memo.get(key)
        if found is not None:
            return found
        where = self._in_flight.get(key)
        if where is not None:
            self._lowest = min(self._lowest, where)
            return _UNKNOWN if key[-1] != _CLASS else (False, "")
        if not self._in_flight:
            return self._first.get((key, depth))
        return None

    def _settled(self, key: Hashable, depth: int, work: Callable[[], Any]) -> Any:
        """``work``'s answer to ``key``, kept so that it is the same whichever question
        came first. A cycle back to a question in flight answers nothing; an answer that
        met one depends on where the walk entered the cycle, so it is kept only when the
        walk entered there (no question was in flight: this is the answer to ``key``
        asked first) and is worked out again when asked inside another question. An
        answer that met no question in flight at or below its own is the same from
        anywhere, and is kept for every asker. So every module's local facts are the
        same in any order, by any index: an edit re-resolves the modules it reaches,
        even in a project with import cycles (tf-agents' ``__init__``)."""
        in_flight = self._in_flight
        place = len(in_flight)
        in_flight[key] = place
        outer, self._lowest = self._lowest, _CLEAR
        try:
            found = work()
        finally:
            del in_flight[key]
            lowest = self._lowest
            self._lowest = min(outer, lowest)
        if lowest > place:
            self._memo[key] = found
        elif not place:
            self._first[(key, depth)] = found
        return found

    def _lookup(self, record: ModuleRecord, dotted: str, depth: int) -> Target:
        root, _, rest = dotted.partition(".")
        ways = record.bound().get(root)
        where = record.shown or record.key
        if ways is None:
            found = self._through_stars(record, root, dotted, depth)
            if len(found) < 2:
                return found[0][1] if found else _UNKNOWN
            shown = ", ".join(sorted(m.shown or m.key for m, _ in found)[:3])
            return self._agreed(
                [t for _, t in found],
                f"`{root}` comes from the star imports of {len(found)} modules in {where} "
                f"({shown}); which one binds it is decided when that module runs",
            )
        return self._bound_to(record, root, ways, rest, depth)

    def _bound_to(
        self, record: ModuleRecord, root: str, ways: list[tuple], rest: str, depth: int
    ) -> Target:
        """What ``root.rest`` resolves to, ``root`` bound in ``record`` by ``ways``."""
        kind = ways[0][0]
        if kind in ("class", "function"):
            return (kind, record, root) if not rest else _UNKNOWN
        if kind == "registry":  # ``ACTIVATIONS[name]``, ``.get(name)``: one of its values
            return (kind, record, root)
        results = [self._way(record, root, ways, way, rest, depth) for way in ways]
        known = [r for r in results if r[0] != "unknown"]
        if not known:
            return _UNKNOWN
        # try/except and if/else alternatives: fine when they agree in kind
        where = record.shown or record.key
        return self._agreed(known, f"`{root}` is bound to different things in {where}")

    def _through_stars(
        self, record: ModuleRecord, root: str, dotted: str, depth: int
    ) -> list[tuple[ModuleRecord, Target]]:
        """What ``dotted`` resolves to through each star import of ``record`` whose module
        binds ``root`` (those that resolve it to something). Star imports in ``if`` or
        ``try`` blocks are alternatives (Keras 2's backend modules: one per backend); the
        entry does not say which are, so several that bind it are all kept."""
        found: list[tuple[ModuleRecord, Target]] = []
        for module, level in record.stars():
            target = self._qualified(record, self._absolute(record, module, level), depth)
            if target[0] == "external":
                break  # maybe from an external star import: unknowable from here on
            if target[0] == "module" and target[1].exports(root):
                resolved = self._in_module(target[1], dotted, depth + 1)
                if resolved[0] != "unknown":
                    found.append((target[1], resolved))
        return found

    def _agreed(self, known: list[Target], why: str) -> Target:
        """The first of ``known`` when all agree in kind, else an ambiguous target with
        ``why`` and the project functions it may be (each is followed as called)."""
        first = known[0]
        if all(self._same_kind(first, other) for other in known[1:]):
            return first
        return ("ambiguous", why, alternatives(known))

    def _way(
        self, record: ModuleRecord, root: str, ways: list[tuple], way: tuple, rest: str, depth: int
    ) -> Target:
        if way[0] == "assign":
            head, _, tail = way[1].partition(".")
            if head != root:
                return self._in_module(record, way[1] + ("." + rest if rest else ""), depth + 1)
            # ``tf = tf.compat.v2``: the right side reads the name's other bindings (read
            # through this one again, it would grow without end, to the depth bound)
            others = [w for w in ways if not (w[0] == "assign" and _root(w[1]) == root)]
            if not others:
                return _UNKNOWN
            inner = ".".join(part for part in (tail, rest) if part)
            return self._bound_to(record, root, others, inner, depth + 1)
        _, module, name, level = way
        base = self._absolute(record, module, level)
        path = f"{base}.{name}" if name and base else name or base
        return self._qualified(record, path + ("." + rest if rest else ""), depth + 1)

    def _same_kind(self, a: Target, b: Target) -> bool:
        if a[0] == "external" and b[0] == "external":
            return self._external_kind(a[1]) == self._external_kind(b[1])
        if a[0] in ("class", "function", "module", "registry") and a[0] == b[0]:
            return a[1:] == b[1:] or (a[0] == "class" and self._is_model(a) == self._is_model(b))
        return False

    def _external_kind(self, qualified: str) -> str:
        symbol = self.canonical(qualified)
        if self._is_model_base(qualified):
            return "model-base"
        if symbol in self.spec.namespace_symbols:
            return "namespace:" + symbol
        return symbol

    # -- classes -------------------------------------------------------------
    def _is_model_base(self, qualified: str) -> bool:
        """Whether the external class ``qualified`` is a Keras base: Keras's own, or one
        the project's config names (``model-bases``)."""
        spec = self.spec
        return self.canonical(qualified).startswith(spec.model_base_prefixes) or (
            qualified in spec.model_base_names
        )

    def _is_model(self, target: Target) -> bool:
        if target[0] == "external":
            return self._is_model_base(target[1]) or self._is_outside_model(target[1])
        if target[0] == "class":
            return self.is_model_class(target[1], target[2])
        return False

    def _is_outside_model(self, qualified: str) -> bool:
        """Whether ``qualified``, a class of an installed package that is neither
        TensorFlow/Keras nor the standard library, derives from a Keras base: read
        from the package's files when an ``outside`` finder was given."""
        if self.outside is None or not self._foreign(("external", qualified)):
            return False
        known = self._outside_model.get(qualified)
        if known is None:
            known = self._outside_model[qualified] = self.outside(qualified)
        return known

    def is_model_class(self, record: ModuleRecord, name: str) -> bool:
        """Whether class ``name`` of ``record`` derives from a Keras Layer/Model/Loss/...
        through any number of project modules and aliases."""
        return self._class_kind(record, name)[0]

    def _class_kind(self, record: ModuleRecord, name: str) -> tuple[bool, str]:
        """(whether class ``name`` is a model class, the first base it derives from, at
        any depth, from a package outside the project that is neither TensorFlow/Keras
        nor the standard library when it is not). A cyclic hierarchy is no model class."""
        key = (id(record), name, _CLASS)
        found = self._known(key, 0)
        if found is not None:
            return found
        return self._settled(key, 0, lambda: self._bases_kind(record, name))

    def _bases_kind(self, record: ModuleRecord, name: str) -> tuple[bool, str]:
        foreign = ""
        notes: dict[str, str] = {}
        info = record.entry["classes"].get(name, {})
        for base in info.get("bases", ()):
            if not base:
                continue
            target = self.resolve(record, base)
            if target[0] == "ambiguous":
                notes[name] = f"base class `{base}` is ambiguous: {target[1]}; context not decided"
                continue
            if self._is_model(target):
                self._note(record, notes)
                return True, ""
            foreign = foreign or self._foreign(target)
        if foreign:
            # decided without reading installed packages: not for an index that does
            self.read_outside |= self.outside is None
            if "call" in info.get("methods", {}) and name not in notes:
                notes[name] = (
                    f"`{name}` defines `call` like a Keras layer, but its base `{foreign}` "
                    "is from a package outside this project that kmigrate cannot see into: "
                    "it is treated as plain code; context not decided (if it is a Keras "
                    "class, name it in `model-bases` under [tool.kmigrate])"
                )
        self._note(record, notes)
        return False, foreign

    def _note(self, record: ModuleRecord, notes: dict[str, str]) -> None:
        if notes:
            self._notes.setdefault(id(record), {}).update(notes)

    def _foreign(self, target: Target) -> str:
        """The base from outside the project that ``target`` is or derives from, when
        it is not TensorFlow/Keras (kmigrate knows those) nor the standard library."""
        if target[0] == "class":
            return self._class_kind(target[1], target[2])[1]
        if target[0] != "external":
            return ""
        qualified = target[1]
        root = qualified.partition(".")[0]
        if root in sys.stdlib_module_names or root in _BUILTIN_NAMES:
            return ""
        if self.canonical(qualified).partition(".")[0] in self._framework_roots:
            return ""
        return qualified

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
                    follow(callee, self._callee(record, callee), out)
                if out:
                    edges[node] = tuple(sorted(out))
        for ref in entry["model_refs"]:
            model_seeds.update(reach.ref_nodes(record, ref))
        for ref in entry["data_refs"]:
            target = self.resolve(record, ref)
            if target[0] == "function":
                data_seeds.add((target[1].key, target[2]))
        saves, reload = self._saved_model_calls(record)
        return LocalFacts(
            model_classes=tuple(model_classes),
            bindings=self._bindings(record),
            notes=tuple(sorted(self._notes.get(id(record), {}).items())),
            functions=tuple(entry["functions"]),
            edges=tuple(edges.items()),
            model_seeds=tuple(sorted(model_seeds)),
            data_seeds=tuple(sorted(data_seeds)),
            saves_saved_model=saves,
            saved_model_reload=reload,
            undecided_calls=tuple(sorted(undecided.items())),
            namespace_imports=(bound := self._namespace_imports(record)),
            star_exports=tuple(name for name in bound if record.exports(name)),
        )

    def _saved_model_calls(self, record: ModuleRecord) -> tuple[bool, Reload]:
        """(whether ``record`` writes a SavedModel, its first reload), from the calls its
        entry keeps for this, resolved as any other name (a function's own import of the
        root gives the path to resolve instead)."""
        saves, reload = False, NO_RELOAD
        spec = self.spec
        for callee, line, path, folder in record.entry["saved_model_calls"]:
            target = self._qualified(record, path, 0) if path else self.resolve(record, callee)
            if target[0] != "external":
                continue
            symbol = self.canonical(target[1])
            if symbol in spec.saved_model_saves:
                saves = True
            elif spec.reloads_saved_model(symbol, folder) and not 0 < reload[0] <= line:
                reload = (line, symbol)
        return saves, reload

    def local_with_reads(self, record: ModuleRecord) -> tuple[LocalFacts, LocalFactsFrom | None]:
        """:meth:`local`, and the same with what it was made from, for another index of
        the same entries to take (None when this index met the depth bound)."""
        self._looked_up, self._outside = set(), set()
        try:
            local = self.local(record)
            patched = self._patched_data()
            looked_up, outside = self._looked_up, self._outside
        finally:
            self._looked_up = self._outside = None
        if self.order_sensitive or self.read_outside:
            return local, None
        by_name = self.by_name
        modules = tuple(
            (name, tuple(r.key for r in by_name.get(name, ()))) for name in sorted(looked_up)
        )
        return local, LocalFactsFrom(local, modules, frozenset(outside), patched)

    def agrees(self, made: LocalFactsFrom) -> bool:
        """Whether this index answers what ``made``'s index asked as it did (see
        :class:`LocalFactsFrom`): then ``made.local`` are this index's local facts of
        that module, as long as this index does not meet the depth bound either."""
        by_name = self.by_name
        for name, keys in made.modules:
            found = by_name.get(name, ())
            if len(found) != len(keys) or any(r.key != k for r, k in zip(found, keys)):
                return False
        return made.outside.isdisjoint(self._roots) and made.patched == self._patched_data()

    def _patched_data(self) -> tuple[tuple[str, str, tuple], ...]:
        """:meth:`patched` as plain data: records by their keys."""

        def plain(target: Target) -> tuple:
            if target[0] in ("class", "function", "module"):
                return (target[0], target[1].key, *target[2:])
            return target

        return tuple(sorted((s, where, plain(by)) for s, (where, by) in self.patched().items()))

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
            patch = self.patched().get(self.canonical(target[1]))
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
    ) -> None:
        self.local = local
        self.files = files  # key -> (path as shown, literal saved-file names it uses)
        self.patched = patched
        self.imports = imports  # None when the other modules are not known (facts alone)
        self._importers: dict[str, list[str]] | None = None
        self._made: dict[str, ModuleFacts] = {}
        self._reach: tuple[set[Node], set[Node]] | None = None
        self._methods: dict[str, set[str]] | None = None
        self._users: dict[str, list[str]] | None = None
        self._reloads: list[tuple[str, str, Reload]] | None = None
        self._outside_source: Callable[[], Mapping[str, FileUse]] | None = None
        self._outside: Mapping[str, FileUse] | None = None

    def add_file_users(self, source: Callable[[], Mapping[str, FileUse]] | None) -> None:
        """Files outside the modules that use saved-file names or reload SavedModels
        (notebooks: nothing imports them, but a save renamed in a module breaks the
        notebook that loads the old file): key -> :data:`FileUse`. ``source`` is asked
        once, when a module with file names or SavedModel saves first needs them."""
        self._outside_source = source
        self._outside = None
        self._users = self._reloads = None
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
        if self._methods is None:
            by_key: dict[str, set[str]] = {}
            for where, name in self.reached()[0]:
                if "." in name:
                    by_key.setdefault(where, set()).add(name)
            self._methods = by_key
        own = set(self.local[key].model_classes)
        return tuple(
            sorted(n for n in self._methods.get(key, ()) if n.partition(".")[0] not in own)
        )

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
            saved_model_reloads=self.saved_model_reloads(key) if local.saves_saved_model else (),
            undecided_calls=local.undecided_calls,
            imported_by=self.imported_by(key) if local.namespace_imports else (),
        )

    def _data_caller(self, node: Node) -> str:
        seed = self.reached()[1][node]
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

    def saved_model_reloads(self, own: str) -> tuple[tuple[str, int, str], ...]:
        """The modules but ``own`` (a key) that reload SavedModels: (path as shown, line
        of the first reload, the reader it calls), at most three, by path."""
        if self._reloads is None:
            found = [(self.files[key][0], key, self.reload_of(key)) for key in self.local]
            found += [
                (shown, key, reload) for key, (shown, _, reload) in self.outside_users().items()
            ]
            self._reloads = sorted(r for r in found if r[2][0])
        return tuple(
            (shown, line, reader) for shown, key, (line, reader) in self._reloads if key != own
        )[:3]

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

    def reload_of(self, key: str) -> Reload:
        """Module ``key``'s first SavedModel reload. A stored resolution answers it
        without decoding the module's local facts."""
        return self.local[key].saved_model_reload


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


def module_facts_for_text(
    tree: ast.Module, spec: ContextSpec, package: str = "", index: TreeIndex | None = None
) -> tuple[ModuleFacts, dict]:
    """The facts a module gives about itself (in-file aliases, try/except fallbacks,
    helpers shared by a layer and a ``.map``), for a file analysed without its project;
    and its index entry, which the runner gathers to resolve the project afterwards."""
    entry = build_entry(tree, spec, index)
    record = ModuleRecord("<module>", entry, package, "", ())
    return ProjectIndex([record], spec).facts(record), entry


# ---------------------------------------------------------------------------
# Module names
# ---------------------------------------------------------------------------


def module_names(path: Path, root: Path, package: str) -> tuple[str, ...]:
    """Dotted names (``root`` absolute) a file can be imported by: from its ``__init__.py`` chain
    (``package``), from the project root (namespace packages, top-level scripts)
    and from below a ``src/`` folder."""
    return names_below(path.stem, package, folder_below(path.parent, root))


def folder_below(folder: Path, root: Path) -> tuple[str, ...] | None:
    """The parts of ``folder`` below ``root`` (``root`` absolute), None when it is not
    below it: what :func:`names_below` and :func:`package_below` take, the same for
    every file of a folder."""
    try:
        return folder.absolute().relative_to(root).parts
    except ValueError:
        return None


def names_below(stem: str, package: str, below: tuple[str, ...] | None) -> tuple[str, ...]:
    """:func:`module_names` of the file named ``stem`` (without its suffix) in the
    folder :func:`folder_below` gave ``below`` for."""
    names: list[str] = []
    own = package if stem == "__init__" else f"{package}.{stem}" if package else stem
    names.append(own)
    parts = [] if below is None else [*below, stem]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if parts:
        names.append(".".join(parts))
        if parts[0] in ("src", "lib", "python") and len(parts) > 1:
            names.append(".".join(parts[1:]))
    return tuple(dict.fromkeys(n for n in names if n))


def relative_package(path: Path, root: Path, package: str) -> str:
    """The package relative imports start from: the ``__init__.py`` chain, or for a
    namespace package (no ``__init__.py``) the folders below the root."""
    return package or package_below("", folder_below(path.parent, root))


def package_below(package: str, below: tuple[str, ...] | None) -> str:
    """:func:`relative_package` of a file in the folder :func:`folder_below` gave
    ``below`` for."""
    if package or below is None:
        return package
    parts = list(below)
    if parts and parts[0] in ("src", "lib", "python"):
        parts = parts[1:]
    return ".".join(parts)
