"""The Keras 2 helpers a fix may call, read from ``rules/data/keras2_compat.py``.

Where a Keras 2 function has no single ``keras.ops`` equivalent for every input
(``K.batch_dot`` when the ranks are not written in the code), the fix calls a helper
with Keras 2's meaning instead, written into the project beside the file
(``_keras2_compat.py``, one per folder, only the helpers used). The helpers are real
Python in one data file: readable, linted, and imported as they are by the
differential tests that prove them against tf_keras. Here they are only parsed (a scan
never imports Keras): each function's text, and the file's imports it reads.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from kmigrate.engine import CallSite, EnsureHelper

HELPER_FILE = Path(__file__).resolve().parent.parent / "data" / "keras2_compat.py"
# the module written into the project, beside the rewritten file
HELPER_MODULE = "_keras2_compat"


@cache
def _helper_source() -> tuple[str, dict[str, str], dict[str, tuple[str, ...]]]:
    """The file's docstring, each function's text, and the import lines each one needs."""
    text = HELPER_FILE.read_text(encoding="utf-8")
    tree = ast.parse(text)
    imports: dict[str, str] = {}  # bound name -> its import statement
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                imports[local] = ast.get_source_segment(text, node) or ""
    functions: dict[str, str] = {}
    needs: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = ast.get_source_segment(text, node) or ""
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            needs[node.name] = tuple(dict.fromkeys(imports[n] for n in used if n in imports))
    return ast.get_docstring(tree) or "", functions, needs


def helper_names() -> frozenset[str]:
    """The helpers the data file defines."""
    return frozenset(_helper_source()[1])


def helper_edit(site: CallSite, name: str) -> EnsureHelper:
    """The edit that makes helper ``name`` exist beside ``site``'s module and imported
    there (relatively inside a package, by its plain name in a script's folder)."""
    header, functions, needs = _helper_source()
    where = f".{HELPER_MODULE}" if site.module.package else HELPER_MODULE
    return EnsureHelper(HELPER_MODULE, name, where, functions[name], needs[name], header)


def helper_name_taken(site: CallSite, name: str) -> bool:
    """Whether the module uses ``name`` for something of its own (a function, a
    variable, a parameter, an import from elsewhere): the helper's import would clash
    with it. An import of the helper itself does not count."""
    module = site.module
    return name in module.memo(("compat-helpers-taken",), lambda: _names_taken(module))


def _names_taken(module) -> frozenset[str]:
    """Every name the module binds or reads but an import of the helper module: read
    once per module from its index (each call site asking walked the whole tree)."""
    index = module.index
    taken = {node.id for node in index.nodes(ast.Name)}
    taken.update(node.arg for node in index.nodes(ast.arg))
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    taken.update(node.name for node in index.nodes(*definitions))
    for node in index.nodes(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(HELPER_MODULE):
            continue
        taken.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
    return frozenset(taken)
