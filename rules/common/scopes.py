"""What a scope binds in its own body: its nodes without nested functions and classes,
and the single value a name is assigned. Used by the KM4xx rules, KM514 and KM602.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kmigrate.engine import code_children


def single_assignment(scope: ast.AST, name: str) -> ast.expr | None:
    """The value of ``name = value`` when that is the only binding of ``name`` in the
    scope's own body (parameters, loops, augmented or repeated assignments: None)."""
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = scope.args
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        if name in params or (args.vararg and args.vararg.arg == name):
            return None
    values, rebound = _assignments(scope)
    if name in rebound:
        return None
    found = values.get(name)
    return found[0] if found is not None and len(found) == 1 else None


def _assignments(scope: ast.AST) -> tuple[dict[str, list[ast.expr]], set[str]]:
    """(values assigned to each plain name, names bound any other way) in the scope's own
    body. Made in one pass and kept on the scope node: rules ask about many names of one
    scope (every save call's path variable), and a pass per question walked the whole
    module for module-level code."""
    attributes = scope.__dict__
    table = attributes.get("_kmigrate_assignments")
    if table is not None:
        return table
    values: dict[str, list[ast.expr]] = {}
    rebound: set[str] = set()
    for node in own_nodes(scope):
        kind = node.__class__
        if kind is ast.Assign:
            for target in node.targets:
                if target.__class__ is ast.Name:
                    values.setdefault(target.id, []).append(node.value)
                else:  # a, b = ...; d[k] = ...: every name in it counts as bound otherwise
                    rebound.update(_names_in(target))
        elif kind is ast.AnnAssign:
            if node.target.__class__ is ast.Name and node.value is not None:
                values.setdefault(node.target.id, []).append(node.value)
        elif kind in _OTHER_BINDERS:
            targets = [getattr(node, "target", None)]
            targets += [item.optional_vars for item in getattr(node, "items", [])]
            for target in targets:
                if target is not None:
                    rebound.update(_names_in(target))
    table = attributes["_kmigrate_assignments"] = (values, rebound)
    return table


_OTHER_BINDERS = (ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.NamedExpr)


def _names_in(node: ast.AST) -> Iterator[str]:
    return (n.id for n in ast.walk(node) if n.__class__ is ast.Name)


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a scope's own body, not descending into nested functions and classes."""
    stack = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(code_children(node))


def scopes(tree: ast.Module) -> Iterator[ast.AST]:
    """The module and every function in it: the scopes whose :func:`own_nodes` together
    cover the module's code outside class bodies."""
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
