"""KM209: a tensor indexed with a Python list of ``None`` / ``slice`` / ``...`` entries.

TensorFlow's ``tensor[i]`` reads a list as it reads a tuple (one entry per axis), so Keras 2
code builds its index as a list and mutates it (bert4keras' ``align``: ``indices = [None] *
ndim``, ``indices[i] = slice(None)``, ``tensor[indices]``). NumPy-style indexing does not:
JAX raises TypeError ("Using a non-tuple sequence for multidimensional indexing is not
allowed"), PyTorch warns that it will read the list as a tensor of indices. A tuple of the
same entries means the same on every backend, TensorFlow included.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from kmigrate.engine import Context, EditPlan, Node, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class ListIndex(Rule):
    id = "KM209"
    name = "list-index"
    summary = "A tensor indexed with a Python list of `None` / `slice` entries."
    rationale = (
        "TensorFlow reads `tensor[[None, slice(None)]]` as `tensor[None, :]`: a list index "
        "is one entry per axis, as a tuple is. NumPy-style backends do not: JAX raises "
        "TypeError ('Using a non-tuple sequence for multidimensional indexing is not "
        "allowed'), and PyTorch warns that it will read the list as a tensor of indices. "
        "Keras 2 code builds such an index in a list it fills per axis (`indices = [None] * "
        "ndim`, `indices[axis] = slice(None)`) and indexes with it."
    )
    fix_safety = (
        "Exact: the list becomes `tuple(indices)` (a literal list becomes a tuple), the "
        "same entries TensorFlow read. Only where every entry the function puts into the "
        "list is `None`, `slice(...)` or `...`, the list is bound once in the function and "
        "is only filled, measured with `len` or used as an index there; a list of ints or "
        "one that comes from elsewhere is left alone (a list of ints is a gather on NumPy "
        "arrays)."
    )
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL})
    visit_types = (ast.FunctionDef, ast.AsyncFunctionDef)
    examples = [
        Flagged(
            """
            import keras


            def align(tensor, axes, ndim):
                indices = [None] * ndim
                for i in axes:
                    indices[i] = slice(None)
                return tensor[indices]


            class Outer(keras.layers.Layer):
                def call(self, x):
                    return align(x, [0, 2], 4) * x[[slice(None), None]]
            """,
            """
            import keras


            def align(tensor, axes, ndim):
                indices = [None] * ndim
                for i in axes:
                    indices[i] = slice(None)
                return tensor[tuple(indices)]


            class Outer(keras.layers.Layer):
                def call(self, x):
                    return align(x, [0, 2], 4) * x[(slice(None), None)]
            """,
        ),
        Clean(
            """
            import keras


            def pick(tensor, rows):
                indices = [0, 2]
                return tensor[indices] + tensor[rows]


            class Pick(keras.layers.Layer):
                def call(self, x):
                    return pick(x, [1])
            """
        ),
    ]

    def check_node(self, site: Node) -> Iterable[Report]:
        function = site.node
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        literal, named = _module_may_match(site)
        if not (literal or named) or _slice_shadowed(site):
            return
        nodes = list(_own_nodes(function))
        for node in nodes if literal else ():
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                index = node.slice
                if isinstance(index, ast.List) and index.elts and all(map(_entry, index.elts)):
                    items = [site.module.node_text(e) for e in index.elts]
                    text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
                    yield _report(site, index, text, "this list")
        if not named:
            return
        lists = _index_lists(function, nodes)
        for node in nodes:
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Load)
                and isinstance(node.slice, ast.Name)
                and node.slice.id in lists
            ):
                name = node.slice.id
                yield _report(site, node.slice, f"tuple({name})", f"`{name}`, a list built here")


def _module_may_match(site: Node) -> tuple[bool, bool]:
    """Whether the module has (a literal list of entries as an index, a name bound to a
    list of entries and used as an index somewhere): the per-function analysis below
    walks every function of model code, a large part of a scan's time, for what few
    modules hold. Both are necessary for a report of their kind, so the answer is exact."""

    def compute() -> tuple[bool, bool]:
        module = site.module
        literal, index_names = False, set()
        for node in module.nodes(ast.Subscript):
            if not isinstance(node.ctx, ast.Load):
                continue
            index = node.slice
            if isinstance(index, ast.Name):
                index_names.add(index.id)
            elif isinstance(index, ast.List) and index.elts and all(map(_entry, index.elts)):
                literal = True
        named = bool(index_names) and any(
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in index_names
            and _list_of_entries(node.value)
            for node in module.nodes(ast.Assign)
        )
        return literal, named

    return site.module.memo(("list-index-may-match",), compute)


def _report(site: Node, index: ast.expr, text: str, what: str) -> Report:
    span = site.module.span_of(index)
    return Report(
        site,
        f"{what} of None / slice entries indexes a tensor: TensorFlow reads a list index "
        "as a tuple (one entry per axis), JAX raises TypeError and PyTorch will read it "
        f"as a tensor of indices; use `{text}`",
        fix=EditPlan((ReplaceNode(span, text),)),
        span=span,
    )


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The function's nodes, without those of the functions, lambdas, classes and
    comprehensions it defines (they have their own names)."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES + _COMPREHENSIONS):
            stack.extend(ast.iter_child_nodes(node))


def _nested_names(function: ast.AST) -> set[str]:
    """Every name read or bound inside the function's nested scopes."""
    names: set[str] = set()
    for node in _own_nodes(function):
        if isinstance(node, _SCOPES + _COMPREHENSIONS):
            names.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    return names


def _entry(node: ast.expr) -> bool:
    """`None`, `...` or a call of the builtin `slice` (the module does not rebind it)."""
    if isinstance(node, ast.Constant):
        return node.value is None or node.value is Ellipsis
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "slice"
        and not node.keywords
    )


def _list_of_entries(node: ast.expr) -> bool:
    """``[None, slice(None)]`` or ``[None] * n`` (``n * [None]``)."""
    if isinstance(node, ast.List):
        return all(map(_entry, node.elts))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return any(
            isinstance(side, ast.List) and side.elts and all(map(_entry, side.elts))
            for side in (node.left, node.right)
        )
    return False


def _index_lists(function: ast.AST, nodes: list[ast.AST]) -> set[str]:
    """Local names bound once to a list of index entries and otherwise only filled with
    entries (``l[i] = slice(None)``, ``l.append(None)``), measured (``len(l)``) or used as
    an index (``x[l]``)."""
    parents: dict[int, ast.AST] = {}
    for node in nodes:
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    params = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}  # type: ignore[attr-defined]
    nested = _nested_names(function)
    bound: dict[str, int] = {}
    candidates: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound[node.id] = bound.get(node.id, 0) + 1
            parent = parents.get(id(node))
            if (
                isinstance(parent, ast.Assign)
                and parent.targets == [node]
                and _list_of_entries(parent.value)
            ):
                candidates.add(node.id)
    found = set()
    for name in candidates - params - nested:
        if bound.get(name) != 1 or _global(function, name):
            continue
        reads = [
            n
            for n in nodes
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        ]
        if reads and all(_allowed_read(n, parents) for n in reads):
            found.add(name)
    return found


def _allowed_read(node: ast.Name, parents: dict[int, ast.AST]) -> bool:
    parent = parents.get(id(node))
    if isinstance(parent, ast.Subscript) and parent.value is node:
        # indices[i] = <entry> (a plain assignment of one entry)
        statement = parents.get(id(parent))
        return (
            isinstance(parent.ctx, ast.Store)
            and isinstance(statement, ast.Assign)
            and statement.targets == [parent]
            and _entry(statement.value)
        )
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Attribute) and parent.value is node:
        call = parents.get(id(parent))
        if not isinstance(call, ast.Call) or call.func is not parent or call.keywords:
            return False
        if parent.attr == "append":
            return len(call.args) == 1 and _entry(call.args[0])
        if parent.attr == "insert":
            return len(call.args) == 2 and _entry(call.args[1])
        return False
    if isinstance(parent, ast.Call) and parent.args == [node]:
        return isinstance(parent.func, ast.Name) and parent.func.id == "len"
    return False


def _global(function: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in _own_nodes(function)
    )


def _slice_shadowed(site: Node) -> bool:
    """The module binds `slice` (or `len`) itself: its calls may not be the builtin."""

    def compute() -> bool:
        tree = site.module.tree
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                if node.id in {"slice", "len"}:
                    return True
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name in {"slice", "len"}:
                    return True
            elif isinstance(node, ast.arg) and node.arg in {"slice", "len"}:
                return True
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if any((a.asname or a.name.split(".")[0]) in {"slice", "len"} for a in node.names):
                    return True
        return False

    return site.module.memo(("list-index-slice-shadowed",), compute)
