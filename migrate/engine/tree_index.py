"""One walk over a parsed module that later passes query instead of walking again.

Many passes need the whole module: the project-index entry (the calls in each
function), the context index (calls and ``with`` blocks per function), the scopes (what
each function binds), the report's footprint, and the nodes rules ask for by class. A
walk costs about a third of the parse in pure-Python dispatch, so they do not walk:
this index walks once and numbers the nodes in that walk's pre-order. A subtree is then
a range of numbers, and "the calls inside this function" or "the innermost function
around this call" are a bisection or a sweep over a short, sorted list.

The walk pops the last child first (:func:`~kmigrate.engine.names.code_walk` order),
so a node's subtree is the range from its own number to the number of the leaf reached
by always taking its *first* child.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from typing import TypeVar

from kmigrate.engine.names import ScopeBindings, code_children, function_params, import_bindings

T = TypeVar("T")
Region = tuple[int, int, T]  # (first number, last number, what the range belongs to)

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_NAMED_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NAMED_BINDERS = (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)  # ``except E as name``
_EMPTY: tuple[list[ast.AST], list[int]] = ([], [])
# Half of a module's nodes are names and constants, which have no code children.
_CHILDLESS = frozenset({ast.Name, ast.Constant})


class TreeIndex:
    """Nodes by class in walk order, their numbers, and parent links of one module.

    Built once per parse and handed to every pass of the analysis; it holds the nodes
    but the tree holds nothing of it (no reference cycle keeps a tree alive)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        order: list[ast.AST] = []  # every node, by number
        todo: list[ast.AST] = [tree]
        visit, pop, push = order.append, todo.pop, todo.extend
        while todo:  # the whole walk: kept to three calls a node
            node = pop()
            visit(node)
            push(code_children(node))
        self.order = order
        self.numbers: dict[int, int] = dict(zip(map(id, order), range(len(order))))
        kinds: dict[type, tuple[list[ast.AST], list[int]]] = {}
        for number, node in enumerate(order):
            bucket = kinds.get(node.__class__)
            if bucket is None:
                bucket = kinds[node.__class__] = ([], [])
            bucket[0].append(node)
            bucket[1].append(number)
        self.kinds = kinds
        self._parents: dict[int, ast.AST] | None = None
        self._scopes: dict[int, ScopeBindings] | None = None
        self._scopes_package = ""
        self._functions: tuple[list[int], list[int], list[ast.AST], list[int]] | None = None
        self._function_names: set[str] | None = None  # every name some scope but the module binds
        # names bound like imports that no import statement binds (add_bindings)
        self._extra_bindings: dict[int, dict[str, str]] = {}

    @property
    def parents(self) -> dict[int, ast.AST]:
        """Parent links by child id, made on first use (most modules need none)."""
        if self._parents is None:
            parents: dict[int, ast.AST] = {}
            for node in self.order:
                if node.__class__ in _CHILDLESS:
                    continue
                children = code_children(node)
                if children:
                    parents.update(zip(map(id, children), repeat(node)))
            self._parents = parents
        return self._parents

    # -- nodes ------------------------------------------------------------------
    def nodes(self, *kinds: type) -> list[ast.AST]:
        """Every node of the given classes (``Load()``/``Add()`` leaves excepted), in
        walk order. Do not change the list."""
        if len(kinds) == 1:
            return self.kinds.get(kinds[0], _EMPTY)[0]
        return [node for _, node in self.numbered(*kinds)]

    def numbered(self, *kinds: type) -> list[tuple[int, ast.AST]]:
        """(number, node) of the given classes, by number."""
        found = [pair for kind in kinds for pair in zip(*self.kinds.get(kind, _EMPTY)[::-1])]
        if len(kinds) > 1:
            found.sort(key=_first)
        return found

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def span(self, node: ast.AST) -> tuple[int, int]:
        """The numbers of ``node`` and of the last node of its subtree."""
        first = self.numbers[id(node)]
        while True:
            children = code_children(node)
            if not children:
                return first, self.numbers[id(node)]
            node = children[0]

    def below(self, kind: type, node: ast.AST) -> list[ast.AST]:
        """Nodes of class ``kind`` in ``node``'s subtree (``node`` itself included)."""
        nodes, numbers = self.kinds.get(kind, _EMPTY)
        if not nodes:
            return nodes
        first, last = self.span(node)
        return nodes[bisect_left(numbers, first) : bisect_right(numbers, last)]

    def below_each(self, node: ast.AST, kinds: Sequence[type]) -> list[list[ast.AST]]:
        """For each of ``kinds``, its nodes in ``node``'s subtree (one span for all)."""
        first, last = self.span(node)
        found = []
        for kind in kinds:
            nodes, numbers = self.kinds.get(kind, _EMPTY)
            found.append(nodes[bisect_left(numbers, first) : bisect_right(numbers, last)])
        return found

    def below_any(self, node: ast.AST, kinds: Sequence[type]) -> list[ast.AST]:
        """Nodes of any of ``kinds`` in ``node``'s subtree, in walk order."""
        if len(kinds) == 1:
            return self.below(kinds[0], node)
        first, last = self.span(node)
        found = []
        for kind in kinds:
            nodes, numbers = self.kinds.get(kind, _EMPTY)
            if nodes:
                start, end = bisect_left(numbers, first), bisect_right(numbers, last)
                found += zip(numbers[start:end], nodes[start:end])
        found.sort(key=_first)
        return [node for _, node in found]

    def function_regions(self) -> list[Region[ast.AST]]:
        """The subtree of every function and lambda, by first number."""
        return [(n, self.span(f)[1], f) for n, f in self.numbered(*_FUNCTIONS)]

    def class_regions(self) -> list[Region[str]]:
        """The subtree of every class, with its name, by first number."""
        return [(n, self.span(c)[1], c.name) for n, c in self.numbered(ast.ClassDef)]  # type: ignore[attr-defined]

    # -- scopes -----------------------------------------------------------------
    def scope_bindings(self, scope: ast.AST, package: str = "") -> ScopeBindings:
        """What ``scope`` binds in its own body: the same answer as
        :func:`kmigrate.engine.names.scope_bindings`, for all scopes of the module from
        one sweep. Decorators, defaults and bases count for the enclosing scope."""
        if self._scopes is None or package != self._scopes_package:
            self._scopes = self._all_scope_bindings(package)
            self._scopes_package = package
        found = self._scopes.get(id(scope))
        if found is None:  # not a scope of this tree
            from kmigrate.engine.names import scope_bindings

            return scope_bindings(scope, package)
        # Each caller gets its own copy: the module scope is changed by ModuleInfo.bind.
        return ScopeBindings(
            dict(found.imports), set(found.others), set(found.globals_), found.is_class
        )

    def add_bindings(self, bindings: dict[int, dict[str, str]]) -> None:
        """Names that resolve like imports of a qualified module though no import binds
        them (local name -> qualified, by the ``id`` of the scope that binds them:
        Keras's modules unpacked from a builder's arguments, ``injected_modules``)."""
        for scope, names in bindings.items():
            self._extra_bindings.setdefault(scope, {}).update(names)
        self._scopes = None
        self._function_names = None

    def added_bindings(self) -> list[str]:
        """The qualified names :meth:`add_bindings` bound, in every scope."""
        return [q for names in self._extra_bindings.values() for q in names.values()]

    def local_binder(self, node: ast.AST, name: str) -> str | None:
        """The innermost function around ``node`` whose own body binds ``name`` (a
        parameter, an assignment, an import, unless declared global), by its name
        ("<lambda>"); None when only the module can: there a module-level name is that."""
        if self._scopes is None:
            self._scopes = self._all_scope_bindings(self._scopes_package)
        if self._function_names is None:  # a name no function binds: no search
            self._function_names = {
                name
                for scope in self._scopes.values()
                if scope is not self._scopes.get(id(self.tree))
                for name in (*scope.others, *scope.imports)
            }
        number = self.numbers.get(id(node))
        if name not in self._function_names or number is None:
            return None
        firsts, lasts, functions, parents = self._function_tree()
        i = bisect_left(firsts, number) - 1  # the last function starting before the node
        while i >= 0 and lasts[i] < number:  # ... that holds it, or the one around that
            i = parents[i]
        while i >= 0:
            bound = self._scopes.get(id(functions[i]))
            if (
                bound is not None
                and name not in bound.globals_
                and (name in bound.others or name in bound.imports)
            ):
                return getattr(functions[i], "name", "<lambda>")
            i = parents[i]
        return None

    def _function_tree(self) -> tuple[list[int], list[int], list[ast.AST], list[int]]:
        """The functions' first and last numbers, the functions, and the index of the
        function around each (-1: none), by first number; made once."""
        if self._functions is None:
            regions = self.function_regions()
            parents: list[int] = []
            open_: list[int] = []
            for i, (first, _, _) in enumerate(regions):
                while open_ and regions[open_[-1]][1] < first:
                    open_.pop()
                parents.append(open_[-1] if open_ else -1)
                open_.append(i)
            self._functions = (
                [r[0] for r in regions],
                [r[1] for r in regions],
                [r[2] for r in regions],
                parents,
            )
        return self._functions

    def _body_region(self, scope: ast.AST) -> tuple[int, int] | None:
        if isinstance(scope, ast.Lambda):
            return self.span(scope.body)
        body = scope.body  # type: ignore[attr-defined]
        if not body:
            return None
        return self.numbers[id(body[-1])], self.span(body[0])[1]

    def _all_scope_bindings(self, package: str) -> dict[int, ScopeBindings]:
        scopes: dict[int, ScopeBindings] = {}
        regions: list[Region[ScopeBindings]] = []
        for _, scope in self.numbered(*_SCOPES):
            bindings = scopes[id(scope)] = ScopeBindings(is_class=isinstance(scope, ast.ClassDef))
            bindings.others.update(function_params(scope))
            region = self._body_region(scope)
            if region is not None:
                regions.append((*region, bindings))
        regions.sort(key=_first)
        names = [(n, x) for n, x in self.numbered(ast.Name) if x.ctx.__class__ is not ast.Load]  # type: ignore[attr-defined]
        for node, bindings in innermost(names, regions):
            if bindings is not None:
                bindings.others.add(node.id)  # type: ignore[attr-defined]
        for node, bindings in innermost(
            self.numbered(*_NAMED_DEFINITIONS, *_NAMED_BINDERS), regions
        ):
            if bindings is not None and node.name:  # type: ignore[attr-defined]
                bindings.others.add(node.name)  # type: ignore[attr-defined]
        for node, bindings in innermost(self.numbered(ast.Global, ast.Nonlocal), regions):
            if bindings is not None:
                bindings.globals_.update(node.names)  # type: ignore[attr-defined]
        for node, bindings in innermost(self.numbered(ast.Import, ast.ImportFrom), regions):
            if bindings is not None:
                for local, qualified in import_bindings(node, package):  # type: ignore[arg-type]
                    bindings.imports.setdefault(local, qualified)
        for scope, names in self._extra_bindings.items():
            if scope in scopes:
                scopes[scope].imports.update(names)
        for bindings in scopes.values():
            bindings.others.difference_update(bindings.imports)
        return scopes


def innermost(
    targets: Iterable[tuple[int, T]], regions: Sequence[Region], strict: bool = False
) -> Iterator[tuple[T, object]]:
    """Each target (by number) with what the innermost region around it belongs to
    (None when none is). ``regions``: sorted by first number, nested or apart, as
    subtrees are. ``strict``: a region does not hold its own first node (a function is
    not its own owner)."""
    open_regions: list[tuple[int, int, object]] = []
    next_region = 0
    for number, target in targets:
        while next_region < len(regions):
            region = regions[next_region]
            if region[0] > number or (strict and region[0] == number):
                break
            open_regions.append(region)
            next_region += 1
        while open_regions and open_regions[-1][1] < number:
            open_regions.pop()
        yield target, (open_regions[-1][2] if open_regions else None)


def _first(pair: tuple) -> int:
    return pair[0]
