"""The helper module beside rewritten files: what an ``EnsureHelper`` edit asks for.

Some calls have no single library function with the same meaning for every input; a
fix then calls a small helper with the old meaning instead, and the helper has to live
in the project (the user's code must run without kmigrate installed). One module per
folder holds the helpers its files call, and only those: it is created with the
rules' header, and an existing one gains the imports and functions it lacks, never
losing or changing what it holds (a user may have edited a helper on purpose).

Text in, text out, with ``ast`` only: the module is small, and a definition is added
whole, as the rule wrote it.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from kmigrate.engine.model import EnsureHelper


def compose_helper_module(existing: str | None, helpers: Sequence[EnsureHelper]) -> str:
    """The helper module's text with every helper of ``helpers`` defined: ``existing``
    (None: a new module) plus the imports and functions it lacks. Raises SyntaxError
    when ``existing`` does not parse (the caller leaves it alone)."""
    tree = ast.parse(existing or "")
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    have_imports = {
        ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
    }
    wanted = [h for h in _unique(helpers) if h.name not in defined]
    imports = [
        line
        for line in dict.fromkeys(i for h in wanted for i in h.imports)
        if ast.unparse(ast.parse(line).body[0]) not in have_imports
    ]
    if not wanted:
        return existing or ""
    definitions = [h.definition.strip("\n") + "\n" for h in wanted]
    if existing is None:
        header = next((h.header for h in helpers if h.header), "")
        parts = [f'"""{header.strip()}\n"""\n' if header else ""]
        parts.append("".join(f"{line}\n" for line in sorted(imports, key=_import_order)))
        return "\n".join(p for p in parts if p) + "\n\n" + "\n\n".join(definitions)
    return _extended(existing, tree, imports, definitions)


def _import_order(line: str) -> tuple[bool, str]:
    """``import x`` lines before ``from x import y`` lines, each alphabetically."""
    return line.startswith("from "), line


def _unique(helpers: Sequence[EnsureHelper]) -> list[EnsureHelper]:
    """One helper per name, the first asked for, in name order (a stable module)."""
    by_name: dict[str, EnsureHelper] = {}
    for helper in helpers:
        by_name.setdefault(helper.name, helper)
    return [by_name[name] for name in sorted(by_name)]


def _extended(existing: str, tree: ast.Module, imports: list[str], definitions: list[str]) -> str:
    lines = existing.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    if imports:
        after = _import_end(tree)
        lines[after:after] = [f"{line}\n" for line in sorted(imports, key=_import_order)]
    text = "".join(lines).rstrip("\n") + "\n"
    return text + "".join(f"\n\n{d}" for d in definitions)


def _import_end(tree: ast.Module) -> int:
    """The line index after the module's docstring and top import block."""
    end = 0
    for index, node in enumerate(tree.body):
        is_docstring = (
            index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if is_docstring or isinstance(node, (ast.Import, ast.ImportFrom)):
            end = node.end_lineno or node.lineno
            continue
        break
    return end
