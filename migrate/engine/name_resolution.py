"""Names resolved across a project's modules, bounded and cycle-safe, the same in any
order: the part of the project index that answers "what does this name refer to"
and "is this class a Keras class".

Each question (a name in a module, a class) is answered once and kept, so that its
answer is the same whichever question came first (:meth:`NameResolution._settled`).
A cycle back to a question in flight answers nothing; an answer that met one depends
on where the walk entered the cycle, so it is kept only when the walk entered there
(no question was in flight: the answer to that question asked first) and is worked
out again when asked inside another question (once per question asked first: an
answer worked out inside it is kept until it ends, or star imports that import each
other make the walk exponential). An answer that met no question in flight at or
below its own is the same from anywhere, and is kept for every asker.
So every module's local facts are the same in any order, by any index: an edit
re-resolves the modules it reaches, even in a project with import cycles (tf-agents'
``__init__``).

No TensorFlow knowledge lives here: what counts as a Keras base, a namespace or a data
API comes from the rules' :class:`~kmigrate.engine.spec.ContextSpec`.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from kmigrate.engine.module_record import ModuleRecord, Target, absolute_module, alternatives
from kmigrate.engine.spec import ContextSpec

MAX_DEPTH = 24  # alias and re-export chains longer than this are left unresolved
_UNKNOWN = ("unknown",)
_CLEAR = sys.maxsize  # a question met no question in flight (see NameResolution._settled)
_CLASS = object()  # ends the key of "is this class a model class?" (others end in a name)
_BUILTIN_NAMES = frozenset(dir(builtins))  # `object`, `Exception`: never a foreign base


def _root(dotted: str) -> str:
    return dotted.partition(".")[0]


def _framework_roots(spec: ContextSpec) -> frozenset[str]:
    prefixes = (*(short for _, short in spec.canonical_prefixes), *spec.model_base_prefixes)
    return frozenset(_root(symbol) for symbol in prefixes)


def _plain_code_note(name: str, foreign: str) -> str:
    return (
        f"`{name}` defines `call` like a Keras layer, but its base `{foreign}` is from a "
        "package outside this project that kmigrate cannot see into: it is treated as "
        "plain code; context not decided (if it is a Keras class, name it in "
        "`model-bases` under [tool.kmigrate])"
    )


class NameResolution:
    """Resolution of names across the entries of one project: what a dotted name read in
    a module refers to, and whether a class is a Keras layer/model, through any number
    of project modules, aliases, re-exports and star imports."""

    def __init__(
        self,
        records: Iterable[ModuleRecord],
        spec: ContextSpec,
        outside: Callable[[str], bool] | None = None,
    ) -> None:
        """``outside``: whether a class of an installed third-party package, by qualified
        name, is a Keras class (read from its files: :mod:`~kmigrate.engine.outside_index`)."""
        self.spec = spec
        self.outside = outside
        self._outside_model: dict[str, bool] = {}
        self.canonical = spec.canonical  # memoised: resolution asks for the same names
        self.records = list(records)
        self.by_name: dict[str, list[ModuleRecord]] = {}
        for record in self.records:
            for name in record.names:
                self.by_name.setdefault(name, []).append(record)
        self._roots = {name.partition(".")[0] for name in self.by_name}
        # answers kept for every asker, and those kept as asked first (see _settled)
        self._memo: dict[Hashable, Any] = {}
        self._first: dict[Hashable, Any] = {}
        self._in_flight: dict[Hashable, int] = {}
        self._walk: dict[Hashable, Any] = {}  # answers met in a cycle, for this walk only
        self._lowest = _CLEAR
        self._framework_roots = _framework_roots(spec)
        self._notes: dict[int, dict[str, str]] = {}
        # while local_with_reads works: the module names looked up, the roots missed
        self._looked_up: set[str] | None = None
        self._outside: set[str] | None = None
        # A chain longer than MAX_DEPTH makes answers depend on where the walk entered
        # it (cycles do not): then local facts made by another index are not mixed in.
        self.order_sensitive = False
        # Whether a base from an installed package was met without an ``outside`` finder:
        # local facts made so are not taken by an index that has one (``agrees``).
        self.read_outside = False

    def _modules(self, name: str, importer: ModuleRecord) -> list[ModuleRecord]:
        if self._looked_up is not None:
            self._looked_up.add(name)
        found = self.by_name.get(name, [])
        if len(found) > 1:  # a script's sibling wins, as sys.path[0] does
            siblings = [r for r in found if r.folder == importer.folder]
            if siblings:
                return siblings[:1]
        return found

    def _qualified(
        self, record: ModuleRecord, qualified: str, depth: int, module_parts: int = 0
    ) -> Target:
        """Resolve an absolute dotted path: the longest prefix that is a project module,
        then the rest inside it; no prefix in the project: an external name.
        ``module_parts``: how many leading parts an import of ``record`` names as a
        module (``from a.b import c``: 2)."""
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
            if target is record and cut < module_parts:
                # ``from pkg.rnn import rnn`` in pkg/__init__.py, pkg/rnn.py not in the
                # tree: Python imports the submodule (or fails), it never reads the
                # package's own names; reading them would come back to this import with
                # a longer name each time (``rnn.rnn.rnn...``), to the depth bound
                return _UNKNOWN
            return self._in_module(target, ".".join(parts[cut:]), depth + 1)
        return ("external", qualified)

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
        """The kept answer to ``key`` (a cycle back to one in flight: nothing), or None."""
        found = self._memo.get(key)
        if found is not None:
            return found
        where = self._in_flight.get(key)
        if where is not None:
            self._lowest = min(self._lowest, where)
            return _UNKNOWN if key[-1] != _CLASS else (False, "")
        if not self._in_flight:
            return self._first.get((key, depth))
        found = self._walk.get(key)
        if found is not None:  # worked out in this walk, where a cycle was met
            self._lowest = min(self._lowest, 0)
        return found

    def _settled(self, key: Hashable, depth: int, work: Callable[[], Any]) -> Any:
        """``work``'s answer to ``key``, kept as the module docstring says."""
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
        elif place:
            self._walk[key] = found
        else:
            self._first[(key, depth)] = found
        if not place:
            self._walk.clear()
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
            target = self._qualified(record, absolute_module(record, module, level), depth)
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
        base = absolute_module(record, module, level)
        path = f"{base}.{name}" if name and base else name or base
        module_parts = base.count(".") + 1 if base and name else 0
        return self._qualified(record, path + ("." + rest if rest else ""), depth + 1, module_parts)

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
                notes[name] = _plain_code_note(name, foreign)
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
