"""Which assignment a local name's read sees, in straight-line function code.

``shape = K.shape(x)`` then ``shape = [s or shape[i] for ...]``: the ``shape`` read inside
the second statement's value is the first binding, the reads after it the second. A
read's binding is the last binding of the name before it in the source, where that
binding is certain to have run and no other can have run since: it is in the same
statement list as (an ancestor of) the read, and no binding of the name inside a loop
around the read follows the read (the loop's next round would see it); a binding in one
branch of an ``if`` is never seen from the other branch (unless a loop runs the ``if``
again). Anything else (a binding in one branch of an ``if`` read after it, in a
``try``, a name read in a nested function or lambda, ``global``/``nonlocal``, a
comprehension's own variable of that name) is ambiguous: the callers then give up, as a
rewrite must be exact or not done.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kmigrate.engine import ModuleInfo

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCTIONS, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Bindings that are not Name nodes: the tracker does not follow them (opaque).
_OTHER_BINDINGS = (ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping)
_KINDS = (
    ast.Name,
    ast.arg,
    ast.Global,
    ast.Nonlocal,
    ast.Import,
    ast.ImportFrom,
    *_SCOPES,
    *_OTHER_BINDINGS,
)


@dataclass(frozen=True)
class _Binding:
    node: ast.AST  # the Name stored to (or the parameter)
    statement: ast.AST  # the statement that binds it (the function for a parameter)
    position: tuple[int, int]  # where the binding takes effect
    value: ast.expr | None  # the value of a plain ``name = value``


class _Names:
    """The bindings and reads of one name in one function."""

    def __init__(self, module: ModuleInfo, function: ast.AST, name: str) -> None:
        self.module, self.function, self.name = module, function, name
        self.bindings: list[_Binding] = []
        self.reads: list[ast.Name] = []
        self.opaque = False  # some use the tracker does not follow
        for node in module.nodes_in(function, *_KINDS):
            self._add(node)
        self.bindings.sort(key=lambda b: b.position)

    def _add(self, node: ast.AST) -> None:
        name = self.name
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            self.opaque = True
        elif isinstance(node, _OTHER_BINDINGS):
            if name in (getattr(node, "name", None), getattr(node, "rest", None)):
                self.opaque = True
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name).split(".")[0] == name for a in node.names):
                self.opaque = True
        elif isinstance(node, _SCOPES) and node is not self.function:
            if getattr(node, "name", None) == name:
                self.opaque = True
        elif isinstance(node, ast.arg) and node.arg == name:
            if self._owner(node) is not self.function:
                return  # a nested function's or lambda's own parameter
            start = (self.function.lineno, self.function.col_offset)  # type: ignore[attr-defined]
            self.bindings.append(_Binding(node, self.function, start, None))
        elif isinstance(node, ast.Name) and node.id == name:
            if self._owner(node) is not self.function:
                self.opaque = True  # read or bound in a nested function, lambda or class
            elif self._comprehension_target(node):
                self.opaque = True
            elif isinstance(node.ctx, ast.Load):
                self.reads.append(node)
            else:
                self._add_store(node)

    def _owner(self, node: ast.AST) -> ast.AST | None:
        """The function, lambda or class whose scope ``node`` is in (a parameter belongs to
        its function)."""
        parent = self.module.parent_of(node)
        while parent is not None and not isinstance(parent, _SCOPES):
            parent = self.module.parent_of(parent)
        return parent

    def _comprehension_target(self, node: ast.AST) -> bool:
        child, parent = node, self.module.parent_of(node)
        while parent is not None and not isinstance(parent, (ast.stmt, *_SCOPES)):
            if isinstance(parent, ast.comprehension) and child is parent.target:
                return True
            child, parent = parent, self.module.parent_of(parent)
        return False

    def _add_store(self, node: ast.Name) -> None:
        parent = self.module.parent_of(node)
        statement = parent
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self.module.parent_of(statement)
        if statement is None or isinstance(node.ctx, ast.Del) or isinstance(parent, ast.AugAssign):
            self.opaque = True
            return
        value = None
        if isinstance(parent, ast.Assign) and parent.targets == [node]:
            value = parent.value
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            end = statement.iter  # the target is bound after the iterable is read
            position = (end.end_lineno or 0, end.end_col_offset or 0)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            position = (node.lineno, node.col_offset)
        elif isinstance(parent, ast.NamedExpr):
            position = (parent.end_lineno or 0, parent.end_col_offset or 0)
        else:
            position = (statement.end_lineno or 0, statement.end_col_offset or 0)
        self.bindings.append(_Binding(node, statement, position, value))

    def reaching(self, read: ast.Name) -> _Binding | None:
        """The one binding ``read`` sees, or None (none, or it cannot be told)."""
        if self.opaque:
            return None
        here = (read.lineno, read.col_offset)
        before = [b for b in self.bindings if b.position <= here and not self._exclusive(b, read)]
        if not before:
            return None
        last = before[-1]
        if not self._dominates(last, read):
            return None
        for loop in self._loops_around(read):
            for binding in self.bindings:
                if binding.position > here and _inside(self.module, binding.node, loop):
                    return None
        return last

    def _exclusive(self, binding: _Binding, read: ast.AST) -> bool:
        """Whether ``binding`` and ``read`` sit in the two branches of one ``if`` that no
        loop of the function runs again: the binding cannot have run before the read."""
        child: ast.AST = binding.node
        parent = self.module.parent_of(child)
        while parent is not None and parent is not self.function:
            if isinstance(parent, ast.If) and _inside(self.module, read, parent):
                mine = _branch_of(parent, child)
                theirs = _branch_of(parent, _child_toward(self.module, read, parent))
                if mine and theirs and mine != theirs and not self._loops_around(parent):
                    return True
            child, parent = parent, self.module.parent_of(parent)
        return False

    def _dominates(self, binding: _Binding, read: ast.AST) -> bool:
        """Whether ``binding`` has certainly run when ``read`` runs: its statement is in
        a statement list that holds an ancestor of the read, before it (or the read is
        in the body of the loop / ``with`` that binds the name, or it is a parameter)."""
        statement = binding.statement
        if statement is self.function:
            return True
        node: ast.AST | None = read
        while node is not None and node is not self.function:
            parent = self.module.parent_of(node)
            if parent is statement:
                return isinstance(statement, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)) and (
                    any(node is s for s in statement.body)
                )
            if parent is self.module.parent_of(statement) and parent is not None:
                return _same_list_before(parent, statement, node)
            node = parent
        return False

    def _loops_around(self, read: ast.AST) -> list[ast.AST]:
        loops = []
        node = self.module.parent_of(read)
        while node is not None and node is not self.function:
            if isinstance(node, _LOOPS):
                loops.append(node)
            node = self.module.parent_of(node)
        return loops


def _same_list_before(parent: ast.AST, first: ast.AST, second: ast.AST) -> bool:
    """Whether ``first`` and ``second`` are in one statement list of ``parent``, in that
    order."""
    for _, value in ast.iter_fields(parent):
        if isinstance(value, list) and any(item is first for item in value):
            positions = {id(item): index for index, item in enumerate(value)}
            return id(second) in positions and positions[id(first)] < positions[id(second)]
    return False


def _branch_of(statement: ast.If, child: ast.AST | None) -> str:
    """ "body" or "orelse": the branch of ``statement`` that holds its child ``child``
    ("" for its test)."""
    for branch in ("body", "orelse"):
        if any(item is child for item in getattr(statement, branch)):
            return branch
    return ""


def _child_toward(module: ModuleInfo, node: ast.AST, ancestor: ast.AST) -> ast.AST | None:
    """The child of ``ancestor`` that holds ``node``."""
    while node is not None:
        parent = module.parent_of(node)
        if parent is ancestor:
            return node
        node = parent  # type: ignore[assignment]
    return None


def _inside(module: ModuleInfo, node: ast.AST, ancestor: ast.AST) -> bool:
    parent = module.parent_of(node)
    while parent is not None:
        if parent is ancestor:
            return True
        parent = module.parent_of(parent)
    return False


def enclosing_function(module: ModuleInfo, node: ast.AST) -> ast.AST | None:
    """The function whose local scope ``node`` is in (through comprehensions), or None."""
    parent = module.parent_of(node)
    while parent is not None and not isinstance(parent, _SCOPES):
        parent = module.parent_of(parent)
    return parent if isinstance(parent, _FUNCTIONS) else None


def _names(module: ModuleInfo, function: ast.AST, name: str) -> _Names:
    return module.memo(("local-names", id(function), name), lambda: _Names(module, function, name))


def bound_value(module: ModuleInfo, read: ast.Name) -> ast.expr | None:
    """The value of the plain assignment ``name = value`` the read ``read`` sees, if
    there is exactly one it can see (None for a parameter, an unpacking, a loop
    variable, or where it cannot be told)."""
    function = enclosing_function(module, read)
    if function is None:
        return None
    binding = _names(module, function, read.id).reaching(read)
    return None if binding is None else binding.value


def reads_of(module: ModuleInfo, target: ast.Name) -> list[ast.Name] | None:
    """Every read that sees the binding ``target`` (the Name a plain assignment stores
    to), or None when some read of the name may see it but cannot be told to."""
    function = enclosing_function(module, target)
    if function is None:
        return None
    names = _names(module, function, target.id)
    if names.opaque:
        return None
    binding = next((b for b in names.bindings if b.node is target), None)
    if binding is None:
        return None
    reads = []
    for read in names.reads:
        if (read.lineno, read.col_offset) < binding.position:
            # before the binding in the source (its own value included): unseen, unless
            # a loop around both runs the read again after it
            if any(_inside(names.module, target, loop) for loop in names._loops_around(read)):
                return None
            continue
        seen = names.reaching(read)
        if seen is None:
            return None  # ambiguous: this binding may be the one it sees
        if seen is binding:
            reads.append(read)
    return reads


def parameter_reads(module: ModuleInfo, function: ast.AST, name: str) -> list[ast.Name] | None:
    """Every read of parameter ``name`` of ``function``, where each sees the parameter
    itself (never rebound before it); None otherwise."""
    names = _names(module, function, name)
    if names.opaque or not names.bindings or names.bindings[0].statement is not function:
        return None
    reads = []
    for read in names.reads:
        seen = names.reaching(read)
        if seen is None or seen.statement is not function:
            return None
        reads.append(read)
    return reads


def possible_values(module: ModuleInfo, read: ast.Name) -> list[ast.expr]:
    """The values the read ``read`` may hold from plain assignments in its function: the
    one it sees where that can be told, else every plain assignment's value of the name
    (a superset: for a caller asking whether any of them is a tensor)."""
    function = enclosing_function(module, read)
    if function is None:
        return []
    names = _names(module, function, read.id)
    binding = names.reaching(read)
    if binding is not None:
        return [binding.value] if binding.value is not None else []
    return [b.value for b in names.bindings if b.value is not None]


def mutated(module: ModuleInfo, read: ast.Name) -> bool:
    """Whether the value ``read`` sees may be changed in place through the name (an item
    stored, ``.append`` / ``.insert`` / ``.extend`` / ...): True where it cannot be told."""
    function = enclosing_function(module, read)
    if function is None:
        return True
    binding = _names(module, function, read.id).reaching(read)
    if binding is None or not isinstance(binding.node, ast.Name):
        return True
    reads = reads_of(module, binding.node)
    if reads is None:
        return True
    for other in reads:
        parent = module.parent_of(other)
        if isinstance(parent, ast.Subscript) and not isinstance(parent.ctx, ast.Load):
            return True
        if isinstance(parent, ast.Attribute) and parent.attr in _MUTATORS:
            return True
    return False


_MUTATORS = frozenset({"append", "insert", "extend", "pop", "remove", "clear", "reverse", "sort"})


def binding_sources(module: ModuleInfo, read: ast.Name) -> list[tuple[str, ast.AST]] | None:
    """Where the value ``read`` holds comes from: the one binding it sees where that can
    be told, else every binding of the name in its function. Each is ``("value", expr)``
    (``name = expr``, chained targets too), ``("element", expr)`` (``a, name = expr``:
    one item of ``expr``) or ``("parameter", arg)`` (the function's own parameter); None
    where some binding is none of these (a loop variable, ``with ... as``, ``+=``...) or
    the name is not tracked."""
    function = enclosing_function(module, read)
    if function is None:
        return None
    names = _names(module, function, read.id)
    if names.opaque:
        return None
    seen = names.reaching(read)
    bindings = [seen] if seen is not None else names.bindings
    sources: list[tuple[str, ast.AST]] = []
    for binding in bindings:
        if binding.statement is function:
            sources.append(("parameter", binding.node))
            continue
        parent = module.parent_of(binding.node)
        statement = binding.statement
        if not isinstance(statement, ast.Assign):
            return None
        if parent is statement:
            sources.append(("value", statement.value))
        elif isinstance(parent, (ast.Tuple, ast.List)) and module.parent_of(parent) is statement:
            if any(isinstance(e, ast.Starred) for e in parent.elts):
                return None
            sources.append(("element", statement.value))
        else:
            return None
    return sources or None
