"""The project index's per-file part: what one module defines, imports, binds and
calls, as a JSON-able entry, and the signed store that keeps entries by file content.

An entry depends on the file's bytes only (relative imports keep their level; the
package is applied when :mod:`kmigrate.engine.project_index` resolves the project), so it
is made once per file version: by the analysis, which has the tree and its
:class:`~kmigrate.engine.tree_index.TreeIndex` at hand, or on its own for a file no rule
analyses. No TensorFlow knowledge lives here either: what counts as a Keras callee, a
data API or a saved-model file name comes from the rules'
:class:`~kmigrate.engine.spec.ContextSpec`.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from kmigrate.engine.fact_provider import EntrySource, entry_values, valid_entry_values
from kmigrate.engine.names import code_children, dotted_parts, import_bindings
from kmigrate.engine.spec import ContextSpec, function_refs

if TYPE_CHECKING:
    from kmigrate.engine.tree_index import TreeIndex

# 8: what the rules' fact providers keep (``provided``: engine/fact_provider.py), which
# holds the calls that may write or reload a SavedModel (was ``saved_model_calls``);
# 7: module-level dict registries of functions/classes (``registries``), a class's
# helper objects held in attributes (``held``), subscripts of module-level names read
# in functions (``NAME.[]``), custom-object registrations and registered functions as
# model references (``Class()``: an instance handed over);
# 6: what the module reads of each name its imports bind (``reads``);
# 5: a call that may reload a SavedModel also says whether its path is a literal folder
ENTRY_FORMAT = 8
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Module-level statements whose calls were taken already (functions, classes) or that
# hold none (imports: names only, no call, no string).
_NO_OWN_PARTS = frozenset({*_FUNCTIONS, ast.ClassDef, ast.Import, ast.ImportFrom})


# ---------------------------------------------------------------------------
# Per-file entries (plain data)
# ---------------------------------------------------------------------------


def _dotted(node: ast.AST) -> str | None:
    parts = dotted_parts(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    return ".".join(parts) if parts else None


def module_statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Top-level statements, including those in ``if``/``try``/``with`` blocks at module
    level (conditional imports and try/except fallbacks bind module names too)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from module_statements(stmt.body)
            yield from module_statements(stmt.orelse)
        elif isinstance(stmt, ast.Try) or stmt.__class__.__name__ == "TryStar":
            yield from module_statements(stmt.body)
            for handler in stmt.handlers:
                yield from module_statements(handler.body)
            yield from module_statements(stmt.orelse)
            yield from module_statements(stmt.finalbody)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from module_statements(stmt.body)


class _EntryBuilder:
    def __init__(self, spec: ContextSpec, index: TreeIndex | None) -> None:
        self.spec = spec
        self.index = index
        self.model_refs: set[str] = set()
        self.data_refs: set[str] = set()
        self.paths: set[str] = set()  # literal saved-model / weights file names
        # every call: (callee as written, line, its path when a function imports its root,
        # whether it reads a literal folder)
        self.calls: list[tuple[str, int, str, bool]] = []
        # module-level names: a subscript of one in a function is recorded (``NAME.[]``)
        self.module_names: frozenset[str] = frozenset()
        self.held: dict[str, str] = {}  # ``self.attr = Callee(...)`` of the class being read

    def calls_in(self, node: ast.AST) -> list[str]:
        """Dotted callees of every call below ``node``; also notes the functions handed
        to Keras (``loss=f``, ``Lambda(f)``) or to a dataset (``.map(f)``)."""
        found: set[str] = set()
        calls, constants, imports, assigns, subscripts = self._nodes_below(node)
        imported = _imported(imports) if imports and node.__class__ in _FUNCTIONS else {}
        for assign in assigns:
            self._on_assign(assign)  # type: ignore[arg-type]
        if node.__class__ in _FUNCTIONS:
            names = self.module_names
            for subscript in subscripts:
                read = _dotted(subscript.value)  # type: ignore[attr-defined]
                if read is not None and read.partition(".")[0] in names:
                    found.add(read + ".[]")
        record = self.calls.append
        for call in calls:
            callee = self._on_call(call, found)  # type: ignore[arg-type]
            if callee is None:
                continue
            path = ""
            if imported:
                root = callee.partition(".")[0]
                where = imported.get(root, "")
                path = where + callee[len(root) :] if where else ""
            record((callee, call.lineno, path, self.spec.reads_folder(call)))  # type: ignore[arg-type]
        suffixes = self.spec.saved_file_suffixes
        for constant in constants:
            value = constant.value  # type: ignore[attr-defined]
            if value.__class__ is str and value.endswith(suffixes):
                self.paths.add(value)
        return sorted(found)

    def _nodes_below(self, node: ast.AST) -> list[list[ast.AST]]:
        """The calls, the constants and the imports below ``node``: from the module's
        tree index when the analysis made one, else by walking the subtree (an entry
        made on its own, for a file no rule analyses, costs less without an index of
        every node)."""
        if self.index is not None:
            calls, constants, imports, from_imports, assigns, subscripts = self.index.below_each(
                node, _GATHERED
            )
            imports = imports + from_imports if from_imports else imports
            return [calls, constants, imports, assigns, subscripts]
        calls: list[ast.AST] = []
        constants: list[ast.AST] = []
        imports: list[ast.AST] = []
        assigns: list[ast.AST] = []
        subscripts: list[ast.AST] = []
        todo = [node]
        while todo:
            child = todo.pop()
            cls = child.__class__
            if cls is ast.Call:
                calls.append(child)
            elif cls is ast.Constant:
                constants.append(child)
                continue  # nothing below a constant
            elif cls is ast.Import or cls is ast.ImportFrom:
                imports.append(child)
                continue  # names only below an import
            elif cls is ast.Assign:
                assigns.append(child)
            elif cls is ast.Subscript:
                subscripts.append(child)
            todo.extend(code_children(child))
        return [calls, constants, imports, assigns, subscripts]

    def _on_assign(self, assign: ast.Assign) -> None:
        """``get_custom_objects()["gelu"] = gelu`` registers a model function;
        ``self.helper = Decomposer()`` in a method: the class holds a helper object."""
        value = assign.value
        for target in assign.targets:
            cls = target.__class__
            if cls is ast.Subscript and self._is_custom_objects(target.value):  # type: ignore[attr-defined]
                self._refs(value, self.model_refs)
            elif (
                cls is ast.Attribute
                and target.value.__class__ is ast.Name  # type: ignore[attr-defined]
                and target.value.id == "self"  # type: ignore[attr-defined]
                and value.__class__ is ast.Call
            ):
                callee = _dotted(value.func)  # type: ignore[attr-defined]
                if callee is not None:
                    self.held.setdefault(target.attr, callee)  # type: ignore[attr-defined]

    def _is_custom_objects(self, node: ast.AST) -> bool:
        """Whether ``node`` is a call of Keras's custom-object table getter."""
        if node.__class__ is not ast.Call:
            return False
        callee = _dotted(node.func)  # type: ignore[attr-defined]
        return bool(callee) and ("." + callee).endswith(self.spec.custom_object_getters)

    def _on_call(self, call: ast.Call, found: set[str]) -> str | None:
        spec = self.spec
        callee = _dotted(call.func)
        if callee is not None:
            found.add(callee)
        for keyword in call.keywords:
            if keyword.arg in spec.model_function_keywords:
                self._refs(keyword.value, self.model_refs)
        if callee and call.args and ("." + callee).endswith(spec.model_function_callees):
            self._refs(call.args[0], self.model_refs)
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr in spec.data_methods:
                for arg in call.args[:1]:
                    self._refs(arg, self.data_refs)
            elif func.attr == "update" and self._is_custom_objects(func.value):
                for arg in call.args[:1]:
                    self._refs(arg, self.model_refs)
        return callee

    @staticmethod
    def _refs(expr: ast.AST, into: set[str]) -> None:
        """The dotted names of the functions in ``expr``; ``Name()`` for an object made
        there (``loss=ScaledError(2.0)``: the class's methods run as model code)."""
        for ref in function_refs(expr):
            if ref.__class__ is ast.Call:
                made = _dotted(ref.func)  # type: ignore[attr-defined]
                if made is not None:
                    into.add(made + "()")
                continue
            name = _dotted(ref)
            if name is not None:
                into.add(name)


_GATHERED = (ast.Call, ast.Constant, ast.Import, ast.ImportFrom, ast.Assign, ast.Subscript)


def _imported(imports: list[ast.AST]) -> dict[str, str]:
    """Names the absolute imports inside a function bind (``import tensorflow as tf`` in
    a function body): module-level resolution does not see them. In source order, so a
    later import of a name wins, however the imports were gathered."""
    bound: dict[str, str] = {}
    for node in sorted(imports, key=_position):
        if not getattr(node, "level", 0):
            bound.update(import_bindings(node))  # type: ignore[arg-type]
    return bound


def _position(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def build_entry(tree: ast.Module, spec: ContextSpec, index: TreeIndex | None = None) -> dict:
    """The index entry of one parsed module: JSON-able, independent of the file's path
    (relative imports keep their level; the package is applied at resolution).
    ``index``: the module's :class:`TreeIndex` when the caller has it."""
    builder = _EntryBuilder(spec, index)
    imports: list[list] = []
    assigns: list[list[str]] = []
    patches: list[list[str]] = []  # ``K.reshape = reshape``: the project replaces K.reshape
    classes: dict[str, dict] = {}
    functions: dict[str, list[str]] = {}
    registries: dict[str, list[str]] = {}  # ``ACTIVATIONS = {"relu": relu}``
    exported: list[str] | None = None
    statements = list(module_statements(tree.body))
    builder.module_names = frozenset(_bound_names(statements))
    for stmt in statements:
        cls = stmt.__class__
        if cls is ast.Import:
            for alias in stmt.names:  # type: ignore[attr-defined]
                local = alias.asname or alias.name.split(".")[0]
                target = alias.name if alias.asname else local
                imports.append([local, target, None, 0])
        elif cls is ast.ImportFrom:
            for alias in stmt.names:  # type: ignore[attr-defined]
                local = "*" if alias.name == "*" else alias.asname or alias.name
                imports.append([local, stmt.module or "", alias.name, stmt.level])  # type: ignore[attr-defined]
        elif cls is ast.Assign or cls is ast.AnnAssign:
            targets = stmt.targets if cls is ast.Assign else [stmt.target]  # type: ignore[attr-defined]
            value = stmt.value  # type: ignore[attr-defined]
            for target in targets:
                patched = _dotted(target) if isinstance(target, ast.Attribute) else None
                if patched is not None and patched.count(".") == 1:
                    patches.append([*patched.split("."), _dotted(value) or ""])
                if not isinstance(target, ast.Name) or value is None:
                    continue
                if target.id == "__all__":
                    exported = _string_list(value)
                    continue
                source = _dotted(value)
                if source is not None:
                    assigns.append([target.id, source])
                elif value.__class__ is ast.Dict:
                    refs: set[str] = set()
                    builder._refs(value, refs)
                    registries[target.id] = sorted(r for r in refs if not r.endswith("()"))
        elif cls in _FUNCTIONS:
            functions[stmt.name] = builder.calls_in(stmt)  # type: ignore[attr-defined]
            if any(_registers(d, spec) for d in stmt.decorator_list):  # type: ignore[attr-defined]
                builder.model_refs.add(stmt.name)  # type: ignore[attr-defined]
        elif cls is ast.ClassDef:
            builder.held = {}
            methods = {
                item.name: builder.calls_in(item)
                for item in stmt.body  # type: ignore[attr-defined]
                if isinstance(item, _FUNCTIONS)
            }
            bases = [_dotted(b) or "" for b in stmt.bases]  # type: ignore[attr-defined]
            info = {"bases": bases, "methods": methods}
            if builder.held:
                info["held"] = dict(sorted(builder.held.items()))
            classes[stmt.name] = info  # type: ignore[attr-defined]
        if cls not in _NO_OWN_PARTS:
            for part in _own_parts(stmt):  # module-level code: only the references it hands over
                builder.calls_in(part)
    return {
        "format": ENTRY_FORMAT,
        "imports": imports,
        "assigns": assigns,
        "patches": patches,
        "classes": classes,
        "functions": functions,
        "all": exported,
        "registries": registries,
        "model_refs": sorted(builder.model_refs),
        "data_refs": sorted(builder.data_refs),
        "paths": sorted(builder.paths),
        # what each cross-file fact provider keeps of the file (engine/fact_provider.py)
        "provided": entry_values(
            spec.providers(), EntrySource(imports, assigns, builder.calls, tree)
        ),
        "reads": _reads(tree, index, _project_candidates(imports, spec)),
    }


def _bound_names(statements: list[ast.stmt]) -> Iterable[str]:
    """The names module-level ``statements`` bind by import or assignment: a function's
    subscript of one may read a registry (``ACTIVATIONS[name]``)."""
    for stmt in statements:
        cls = stmt.__class__
        if cls is ast.Import or cls is ast.ImportFrom:
            for alias in stmt.names:  # type: ignore[attr-defined]
                yield (alias.asname or alias.name).partition(".")[0]
        elif cls is ast.Assign:
            for target in stmt.targets:  # type: ignore[attr-defined]
                if target.__class__ is ast.Name:
                    yield target.id  # type: ignore[attr-defined]


def _registers(decorator: ast.AST, spec: ContextSpec) -> bool:
    """Whether ``decorator`` registers the function as a Keras custom object
    (``@register_keras_serializable()``): Keras then runs it as model code."""
    node = decorator.func if decorator.__class__ is ast.Call else decorator  # type: ignore[attr-defined]
    name = _dotted(node)
    return bool(name) and ("." + name).endswith(spec.model_function_decorators)


def _project_candidates(imports: list[list], spec: ContextSpec) -> set[str]:
    """The names the imports bind that may be a project's module or name: not a star,
    nor from a package the spec spells (``tensorflow``: whose reads would only fill the
    entry)."""
    known = {prefix.partition(".")[0] for prefix, _ in spec.canonical_prefixes}
    return {
        local
        for local, module, name, level in imports
        if local != "*" and (level or (module or name or "").partition(".")[0] not in known)
    }


def _reads(tree: ast.Module, index: TreeIndex | None, bound: set[str]) -> dict[str, list[str]]:
    """What the module reads of each name in ``bound`` (those its imports bind): the
    attributes taken from it, one and two deep (``backend.K``, ``pkg.backend.K``),
    ``!`` when the object itself is used other than called (passed, stored: anything
    may then be read from it), ``a!`` the same for its attribute ``a``. Another module
    importing a name from this module's import of it learns who reads what
    (``ModuleFacts.imported_by``); a name left out is taken as used any way."""
    found: dict[str, set[str]] = {}
    for name, parent, above in _name_loads(tree, index, bound):
        reads = found.setdefault(name.id, set())  # type: ignore[attr-defined]
        if parent.__class__ is ast.Attribute:
            attr = parent.attr  # type: ignore[attr-defined]
            if above.__class__ is ast.Attribute:
                reads.update((attr, f"{attr}.{above.attr}"))  # type: ignore[attr-defined]
            else:
                called = above.__class__ is ast.Call and above.func is parent  # type: ignore[attr-defined]
                reads.update((attr,) if called else (attr, f"{attr}!"))
        elif not (parent.__class__ is ast.Call and parent.func is name):  # type: ignore[attr-defined]
            reads.add("!")
    return {name: sorted(found.get(name, ())) for name in sorted(bound)}


# The parent of a read whose parent is neither an attribute of it nor a call of it.
_OTHER_PARENT = ast.AST()


def _name_loads(
    tree: ast.Module, index: TreeIndex | None, bound: set[str]
) -> Iterable[tuple[ast.Name, ast.AST, ast.AST | None]]:
    """(name, its parent, the parent's parent) of each read of a name in ``bound``; from
    a tree index, a parent that is neither an attribute of its child nor a call of it
    is ``_OTHER_PARENT`` (all :func:`_reads` tells apart)."""
    if not bound:
        return
    if index is not None:
        loads = [
            n
            for n in index.nodes(ast.Name)
            if n.id in bound and n.ctx.__class__ is ast.Load  # type: ignore[attr-defined]
        ]
        if not loads:
            return
        # a map of every node's parent cost each file's first guess more than the rest of
        # its entry's reads (the analysis needs one for few files)
        above_of = {id(n.value): n for n in index.nodes(ast.Attribute)}  # type: ignore[attr-defined]
        above_of.update((id(n.func), n) for n in index.nodes(ast.Call))  # type: ignore[attr-defined]
        for name in loads:
            parent = above_of.get(id(name), _OTHER_PARENT)
            yield name, parent, above_of.get(id(parent), _OTHER_PARENT)  # type: ignore[misc]
        return
    todo: list[tuple[ast.AST, ast.AST | None, ast.AST | None]] = [(tree, None, None)]
    while todo:
        node, parent, above = todo.pop()
        if node.__class__ is ast.Name:
            if node.id in bound and node.ctx.__class__ is ast.Load and parent is not None:  # type: ignore[attr-defined]
                yield node, parent, above  # type: ignore[misc]
            continue
        todo.extend((child, node, parent) for child in code_children(node))


def _own_parts(stmt: ast.stmt) -> list[ast.AST]:
    """What of a module-level statement :func:`module_statements` does not yield on its
    own: an ``if``'s test, a ``with``'s items, a ``try``'s exception types; the whole
    statement for any other kind. Walking a block's statements twice finds nothing new."""
    if isinstance(stmt, ast.If):
        return [stmt.test]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if isinstance(stmt, ast.Try) or stmt.__class__.__name__ == "TryStar":
        return [h.type for h in stmt.handlers if h.type is not None]  # type: ignore[attr-defined]
    return [stmt]


def _string_list(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def valid_entry(value: object, spec: ContextSpec) -> bool:
    """Whether ``value`` has the shape :func:`build_entry` gives with ``spec`` (a cached
    entry is data from disk: anything else is a miss, never trusted)."""
    providers = spec.providers()
    if not isinstance(value, dict) or value.get("format") != ENTRY_FORMAT:
        return False
    try:
        ok = all(
            isinstance(i, list) and len(i) == 4 and isinstance(i[0], str) and isinstance(i[1], str)
            for i in value["imports"]
        )
        ok = ok and all(
            isinstance(a, list) and len(a) == 2 and all(isinstance(s, str) for s in a)
            for a in value["assigns"]
        )
        ok = ok and all(len(p) == 3 and _strings(p) for p in value["patches"])
        ok = ok and all(
            isinstance(c, dict)
            and _strings(c["bases"])
            and isinstance(c["methods"], dict)
            and all(_strings(v) for v in c["methods"].values())
            and _string_map(c.get("held", {}))
            for c in value["classes"].values()
        )
        ok = ok and isinstance(value["registries"], dict)
        ok = ok and all(_strings(v) for v in value["registries"].values())
        ok = ok and all(_strings(v) for v in value["functions"].values())
        ok = ok and (value["all"] is None or _strings(value["all"]))
        ok = ok and _strings(value["paths"])
        ok = ok and valid_entry_values(providers, value["provided"])
        ok = ok and isinstance(value["reads"], dict)
        ok = ok and all(_strings(v) for v in value["reads"].values())
        return ok and _strings(value["model_refs"]) and _strings(value["data_refs"])
    except (KeyError, TypeError, AttributeError):
        return False


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def _string_map(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def entry_shape(entry: dict) -> str:
    """A digest of what resolution reads from ``entry`` when *other* modules resolve
    names through it: what it imports, binds, patches, exports, its classes' bases,
    method names and held helpers, and its registries (resolution from another module
    follows them). Calls, references and file names are left out: they only shape the module's own
    :class:`LocalFacts`."""
    shape = [
        entry["imports"],
        entry["assigns"],
        entry["patches"],
        sorted(
            (name, info["bases"], sorted(info["methods"]), info.get("held", {}))
            for name, info in entry["classes"].items()
        ),
        list(entry["functions"]),
        entry["all"],
        entry["registries"],
    ]
    return hashlib.blake2b(repr(shape).encode(), digest_size=12).hexdigest()


# ---------------------------------------------------------------------------
# The per-file cache: entries go through a signed plain-data store (the result cache's
# ``load_value``/``store_value``: JSON bound to this machine, see docs/security.md) and
# are validated again here; anything else is a miss.
# ---------------------------------------------------------------------------

ENTRY_NAMESPACE = "index"


class ValueStore(Protocol):
    """The part of :class:`kmigrate.store.cache.ResultCache` the index uses."""

    def load_value(self, namespace: str, key: str, decode: Callable[[Any], Any]) -> Any: ...

    def store_value(self, namespace: str, key: str, value: Any) -> bool: ...


def entry_key(data: bytes) -> str:
    """An entry depends on the file's bytes only (the builder's format and spec name
    the store's folder)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def load_entry(store: ValueStore, data: bytes, spec: ContextSpec) -> dict | None:
    """The stored entry of a file with bytes ``data`` (made with ``spec``), or None:
    missing, unsigned, malformed or of another format are all a miss."""

    def checked(value: object) -> dict:
        if not valid_entry(value, spec):
            raise ValueError("not an index entry")
        return value  # type: ignore[return-value]

    return store.load_value(ENTRY_NAMESPACE, entry_key(data), checked)


def store_entry(store: ValueStore, data: bytes, entry: dict) -> None:
    """Store ``entry`` for ``data``; a failed write only means no caching."""
    store_entry_at(store, entry_key(data), entry)


def store_entry_at(store: ValueStore, key: str, entry: dict) -> None:
    """:func:`store_entry` by the key of the bytes (:func:`entry_key`), for a caller
    that no longer holds them."""
    store.store_value(ENTRY_NAMESPACE, key, entry)
