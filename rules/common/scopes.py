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
    found: list[ast.expr] = []
    for node in own_nodes(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    found.append(node.value)
                elif any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                    return None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id == name and node.value is not None:
                found.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.NamedExpr)):
            targets = [getattr(node, "target", None)] + [
                i.optional_vars for i in getattr(node, "items", [])
            ]
            if any(
                isinstance(n, ast.Name) and n.id == name
                for t in targets
                if t is not None
                for n in ast.walk(t)
            ):
                return None
    return found[0] if len(found) == 1 else None


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a scope's own body, not descending into nested functions and classes."""
    stack = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(code_children(node))
