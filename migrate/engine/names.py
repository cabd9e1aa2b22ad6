"""Name resolution from a module's own imports, with scopes where shadowing is possible.

``import tensorflow as tfx`` makes ``tfx.reduce_mean`` resolve to
``tensorflow.reduce_mean``; a parameter or local variable named ``tf`` hides the
module-level import inside that function. Resolution never looks at text: only at
``ast`` bindings. :class:`Canonical` then folds the many spellings of one symbol into
the short form rules and reports use (``tf.reduce_mean``, ``K.mean``), by a table the
rules hand over: the engine itself holds no framework's spellings.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

# A canonical-spelling table: (qualified prefix, short spelling) pairs, first match wins.
CanonicalPrefixes = tuple[tuple[str, str], ...]


# ---------------------------------------------------------------------------
# Fast traversal. ``ast.iter_child_nodes`` is a generator over a generator and
# dominates every pass over a tree; these return lists, driven by a per-class
# table of the fields that can hold nodes (read from the node classes' own ASDL
# signatures), so each pass costs about half as much. ``code_children`` also
# leaves out the shared leaf singletons ``ast`` attaches for contexts and
# operators (``Load()``, ``Add()``...), about a third of all nodes, which no
# analysis pass looks at.
# ---------------------------------------------------------------------------

_NEVER_NODES = frozenset({"identifier", "string", "constant", "int", "object"})
LEAF_KINDS: tuple[type, ...] = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
_LEAF_NAMES = frozenset(cls.__name__ for cls in LEAF_KINDS)
_ASDL_FIELD = re.compile(r"(\w+)([*?]?) (\w+)")
FieldSpec = tuple[tuple[str, bool], ...]  # (field name, holds a list)
_FULL_SPECS: dict[type, FieldSpec | None] = {}
_CODE_SPECS: dict[type, FieldSpec | None] = {}


def _field_spec(cls: type, lean: bool) -> FieldSpec | None:
    """Fields of ``cls`` that can hold nodes, from its ASDL signature; None if unknown."""
    if not cls._fields:  # Pass, Break, Load(), Add() ...
        return ()
    fields: list[tuple[str, str, str]] = []  # (name, type, quantifier)
    annotations = getattr(cls, "_field_types", None)  # Python 3.13+
    if isinstance(annotations, dict) and set(annotations) == set(cls._fields):
        for name in cls._fields:
            text = str(annotations[name])
            many = text.startswith("list[")
            kinds = re.findall(r"ast\.(\w+)", text)
            kind = kinds[0] if kinds else "object"
            fields.append((name, kind, "*" if many else ""))
    else:
        match = re.fullmatch(rf"{cls.__name__}\((.*)\)", (cls.__doc__ or "").strip())
        if match is None:
            return None
        fields = [(name, kind, q) for kind, q, name in _ASDL_FIELD.findall(match.group(1))]
        if tuple(name for name, _, _ in fields) != tuple(cls._fields):
            return None
    return tuple(
        (name, quantifier == "*")
        for name, kind, quantifier in fields
        if kind not in _NEVER_NODES and not (lean and kind in _LEAF_NAMES)
    )


def _children(node: ast.AST, specs: dict[type, FieldSpec | None], lean: bool) -> list[ast.AST]:
    cls = node.__class__
    try:
        spec = specs[cls]
    except KeyError:
        spec = specs[cls] = _field_spec(cls, lean)
    if spec is None:  # a node class this table does not know: the slow, sure way
        found = list(ast.iter_child_nodes(node))
        return [n for n in found if not isinstance(n, LEAF_KINDS)] if lean else found
    out: list[ast.AST] = []
    for name, many in spec:
        value = getattr(node, name, None)
        if value is None:
            continue
        if many:
            if None in value:  # Dict keys of ``**x``, kw_defaults without a default
                out.extend([v for v in value if v is not None])
            else:
                out.extend(value)
        else:
            out.append(value)
    return out


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The direct children of ``node``: exactly what ``ast.iter_child_nodes`` yields."""
    return _children(node, _FULL_SPECS, False)


def code_children(node: ast.AST) -> list[ast.AST]:
    """:func:`child_nodes` without context and operator leaves (``Load()``, ``Add()``).

    Several passes run over each tree (contexts, scopes, the rules' walk, the
    footprint), so the list is kept on the node the first time: callers must not
    change it. The shared leaf singletons are never asked (they are not children).
    """
    attributes = node.__dict__
    children = attributes.get("_kmigrate_children")
    if children is None:
        children = attributes["_kmigrate_children"] = _children(node, _CODE_SPECS, True)
    return children


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk``, same nodes in the same order, faster."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(_children(node, _FULL_SPECS, False))
        yield node


def code_walk(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and everything below it except the ``Load()``/``Add()`` leaves, in no
    particular order: for searches (a call, a name) that need neither."""
    todo = [node]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(code_children(node))


def statements(node: ast.AST) -> Iterator[ast.stmt]:
    """Every statement nested in ``node``'s blocks, at any depth (``ast.walk`` restricted
    to statements: expressions are never entered, so it costs a fraction of a walk)."""
    todo = [c for c in code_children(node) if isinstance(c, _BLOCK_KINDS)]
    while todo:
        child = todo.pop()
        if isinstance(child, ast.stmt):
            yield child
        todo.extend(c for c in code_children(child) if isinstance(c, _BLOCK_KINDS))


_BLOCK_KINDS = (ast.stmt, ast.ExceptHandler, ast.match_case)


class Canonical:
    """Folds a qualified name into its canonical spelling, the short form rules and
    reports use, by the ordered prefix table it is given.

    The table is data from the caller (``ContextSpec.canonical_prefixes``, filled by
    the rules): the engine knows no framework's spellings. The first prefix that is the
    whole name or a dotted head of it is replaced, so a table lists the specific
    prefixes before the general ones:

    >>> fold = Canonical((("pkg.sub", "S"), ("pkg", "p")))
    >>> fold("pkg.sub.f"), fold("pkg.g"), fold("pkg"), fold("pkgx.h")
    ('S.f', 'p.g', 'p', 'pkgx.h')

    Results are memoised: resolution asks for the same few thousand names again and
    again (:func:`canonical_for` shares one memo per table across a run).
    """

    __slots__ = ("memo", "prefixes")

    def __init__(self, prefixes: CanonicalPrefixes) -> None:
        self.prefixes = prefixes
        self.memo: dict[str, str] = {}

    def __call__(self, qualified: str) -> str:
        try:
            return self.memo[qualified]
        except KeyError:
            pass
        if len(self.memo) > 100_000:
            self.memo.clear()
        found = self.memo[qualified] = self._fold(qualified)
        return found

    def _fold(self, qualified: str) -> str:
        for prefix, short in self.prefixes:
            if qualified == prefix:
                return short
            if qualified.startswith(prefix) and qualified[len(prefix)] == ".":
                return short + qualified[len(prefix) :]
        return qualified


_CANONICALS: dict[CanonicalPrefixes, Canonical] = {}


def canonical_for(prefixes: CanonicalPrefixes) -> Canonical:
    """The one :class:`Canonical` of a table in this process, so that every module of a
    run shares its memo."""
    found = _CANONICALS.get(prefixes)
    if found is None:
        found = _CANONICALS[prefixes] = Canonical(prefixes)
    return found


def dotted_parts(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None when the chain does not start at a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


def import_bindings(
    node: ast.Import | ast.ImportFrom, package: str = ""
) -> Iterator[tuple[str, str]]:
    """(local name, qualified name) pairs an import statement binds."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                root = alias.name.split(".")[0]
                yield root, root
        return
    if node.level:  # relative imports point into the user's own package
        base = package
    else:
        base = node.module or ""
    if node.level and node.module:
        base = f"{package}.{node.module}" if package else node.module
    for alias in node.names:
        if alias.name == "*":
            continue
        local = alias.asname or alias.name
        yield local, f"{base}.{alias.name}" if base else alias.name


@dataclass
class ScopeBindings:
    """Names a function (or the module) binds: from imports, and otherwise."""

    imports: dict[str, str] = field(default_factory=dict)
    others: set[str] = field(default_factory=set)
    globals_: set[str] = field(default_factory=set)
    is_class: bool = False

    def lookup(self, name: str) -> tuple[bool, str | None]:
        """(found, qualified): found=True with None means the name is shadowed."""
        if name in self.globals_:
            return False, None
        if name in self.imports:
            return True, self.imports[name]
        if name in self.others:
            return True, None
        return False, None


_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


_SCOPE_TYPES = frozenset(_SCOPE_NODES)
# Node types scope_bindings acts on (besides Name); everything else is only walked.
_BINDING_TYPES = _SCOPE_TYPES | {
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
}
# Expressions without code children: no pass needs to descend into them.
_NO_CODE_CHILDREN = frozenset({ast.Name, ast.Constant})


def _own_body_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a scope's own body, not descending into nested scopes."""
    if isinstance(scope, ast.Lambda):
        stack: list[ast.AST] = [scope.body]
    else:
        stack = list(getattr(scope, "body", []))
        if isinstance(scope, ast.Module):
            pass
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPE_NODES):
            # decorators, defaults and bases are evaluated in the enclosing scope
            stack.extend(getattr(node, "decorator_list", []))
            if isinstance(node, ast.ClassDef):
                stack.extend(node.bases)
                stack.extend(k.value for k in node.keywords)
            elif not isinstance(node, ast.Lambda):
                stack.extend(d for d in node.args.defaults if d is not None)
                stack.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        stack.extend(code_children(node))


def function_params(scope: ast.AST) -> list[str]:
    """The names a function's or lambda's parameters bind (none for other scopes)."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return []
    args = scope.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def scope_bindings(scope: ast.AST, package: str = "") -> ScopeBindings:
    """What ``scope`` (module, class, function or lambda) binds in its own body.

    Imports anywhere in the scope win over other bindings of the same name, so
    ``try: import tensorflow as tf / except ImportError: tf = None`` still resolves.
    """
    bindings = ScopeBindings(is_class=isinstance(scope, ast.ClassDef))
    others = bindings.others
    others.update(function_params(scope))
    # The walk of _own_body_nodes, inlined and dispatched on exact node types: this
    # runs over every node of every file, and most nodes bind nothing.
    if isinstance(scope, ast.Lambda):
        stack: list[ast.AST] = [scope.body]
    else:
        stack = list(getattr(scope, "body", []))
    pop = stack.pop
    extend = stack.extend
    while stack:
        node = pop()
        cls = node.__class__
        if cls in _NO_CODE_CHILDREN:
            if cls is ast.Name and node.ctx.__class__ is not ast.Load:  # Store or Del
                others.add(node.id)
            continue
        if cls in _BINDING_TYPES:
            if cls is ast.Import or cls is ast.ImportFrom:
                for local, qualified in import_bindings(node, package):
                    bindings.imports.setdefault(local, qualified)
            elif cls is ast.Global or cls is ast.Nonlocal:
                bindings.globals_.update(node.names)
            elif cls in _SCOPE_TYPES:
                if cls is not ast.Lambda:
                    others.add(node.name)
                # decorators, defaults and bases are evaluated in the enclosing scope
                extend(getattr(node, "decorator_list", []))
                if cls is ast.ClassDef:
                    extend(node.bases)
                    extend(k.value for k in node.keywords)
                elif cls is not ast.Lambda:
                    extend(d for d in node.args.defaults if d is not None)
                    extend(d for d in node.args.kw_defaults if d is not None)
                continue
            elif node.name:  # ExceptHandler, MatchAs, MatchStar
                others.add(node.name)
        extend(code_children(node))
    for name in bindings.imports:
        bindings.others.discard(name)
    return bindings


class Resolver:
    """Resolves names through a stack of scopes, innermost last.

    Class scopes are skipped when looking up from inside a method, as Python does.
    The analyzer asks for every name and attribute chain it walks past, most of them
    local variables, so lookups are memoised until the stack changes.
    """

    def __init__(self, module_scope: ScopeBindings, canonical: Canonical) -> None:
        self.stack: list[ScopeBindings] = [module_scope]
        self._memo: dict[str, str | None] = {}
        self.canonical = canonical

    def push(self, bindings: ScopeBindings) -> None:
        self.stack.append(bindings)
        self._memo = {}

    def pop(self) -> None:
        self.stack.pop()
        self._memo = {}

    def qualified_name(self, name: str) -> str | None:
        try:
            return self._memo[name]
        except KeyError:
            pass
        qualified = None
        innermost = len(self.stack) - 1
        for depth in range(innermost, -1, -1):
            scope = self.stack[depth]
            if scope.is_class and depth != innermost:
                continue
            found, qualified = scope.lookup(name)
            if found:
                break
        self._memo[name] = qualified
        return qualified

    def resolve(self, node: ast.expr) -> str | None:
        """Qualified name of a dotted expression, or None when it is not an import."""
        root = node
        while root.__class__ is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if root.__class__ is not ast.Name:
            return None
        base = self.qualified_name(root.id)  # type: ignore[attr-defined]
        if base is None or root is node:
            return base
        parts = dotted_parts(node)
        return ".".join([base, *parts[1:]])  # type: ignore[index]

    def symbol(self, node: ast.expr) -> str | None:
        """Canonical symbol of a dotted expression (``tf.reduce_mean``), or None."""
        qualified = self.resolve(node)
        if qualified is None:
            return None
        canonical = self.canonical
        try:
            return canonical.memo[qualified]
        except KeyError:
            return canonical(qualified)


def _annotations(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [a.annotation for a in every if a is not None and a.annotation is not None]
    return found + ([node.returns] if node.returns is not None else [])


def module_level_uses(tree: ast.Module) -> dict[str, int]:
    """How often each module-level name is read, scope-aware: a parameter or local
    variable of the same name inside a function does not count."""
    uses: dict[str, int] = {}

    def visit(nodes: Iterable[ast.AST], shadowed: frozenset[str]) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                outer: list[ast.AST] = [*node.args.defaults, *filter(None, node.args.kw_defaults)]
                if not isinstance(node, ast.Lambda):
                    # annotations are read where the function is defined: an import they
                    # name stays (`-> tf.Tensor` with `tf` gone fails when the module loads)
                    outer += [*node.decorator_list, *_annotations(node)]
                visit(outer, shadowed)
                local = scope_bindings(node)
                inner = shadowed | ((set(local.imports) | local.others) - local.globals_)
                body = [node.body] if isinstance(node, ast.Lambda) else node.body
                visit(body, frozenset(inner))
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id not in shadowed:
                    uses[node.id] = uses.get(node.id, 0) + 1
            visit(code_children(node), shadowed)

    visit([tree], frozenset())
    return uses
