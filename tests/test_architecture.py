"""The floors of kmigrate, held by a test: each floor imports only the floors below it.

Every module under ``migrate/`` and ``rules/`` is parsed with ``ast`` (nothing is imported,
so this stays fast and framework-free) and its imports become edges of a module graph:
top-level, function-level and ``TYPE_CHECKING`` imports, and string references such as
the command table's ``"kmigrate.cli.check:check_command"`` or parity's
``-m kmigrate.parity.worker``, because those load the module just the same. The graph
must have no cycle, and no edge may point from a lower layer to a higher one (see
docs/architecture.md for the picture).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"kmigrate": ROOT / "migrate", "kmigrate.rules": ROOT / "rules"}
FACADE = "kmigrate.engine"

# floor -> the floors it may import (besides itself). Top to bottom: the command line;
# the public API; the scheduler; the reports; the repository; the store and the rules
# side by side; the engine. Parity stands apart: it runs models in subprocesses and
# imports no other floor.
ALLOWED = {
    "cli": {"api", "run", "report", "project", "store", "rules", "engine", "parity", "top"},
    "api": {"run", "report", "project", "store", "rules", "engine", "top"},
    "run": {"report", "project", "store", "rules", "engine", "parity", "top"},
    "report": {"rules", "engine", "top"},
    "project": {"store", "rules", "engine", "top"},
    # the store keys every entry on kmigrate's own code, rules included (code_fingerprint)
    "store": {"rules", "engine", "top"},
    "rules": {"engine", "top"},
    "engine": {"top"},
    "parity": {"top"},
    "top": {"cli"},
}
FLOORS = tuple(floor for floor in ALLOWED if floor != "top")
# a string that is a whole module path, optionally ``:attribute`` (docstrings do not count)
_MODULE_STRING = re.compile(r"(kmigrate(?:\.\w+)+)(?::\w+)?")


def module_files() -> dict[str, Path]:
    """Installed module name -> file, for every module of the two source folders."""
    modules: dict[str, Path] = {}
    for package, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = [p for p in path.relative_to(folder).with_suffix("").parts if p != "__init__"]
            if package == "kmigrate" and parts[:1] == ["rules"]:
                continue  # not a folder of migrate/
            modules[".".join([package, *parts])] = path
    return modules


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` is or lies in (``pkg.mod.attr`` -> ``pkg.mod``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported_names(module: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: None if is_package else -1]
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            names = [f"{source}.{alias.name}" for alias in node.names]
            yield from names
            # ``from pkg import submodule`` needs only the submodule (the package's own
            # __init__ runs first in any case, for every import of anything inside it)
            if any(name not in modules for name in names):
                yield source
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _MODULE_STRING.fullmatch(node.value)
            if match:
                yield match.group(1)


def import_graph(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Module -> the modules it imports (itself and unknown modules left out)."""
    modules = module_files() if modules is None else modules
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = {_known(name, modules) for name in _imported_names(module, path, modules)}
        graph[module] = {t for t in targets if t and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer(module: str) -> str:
    """``kmigrate.engine.model`` -> ``engine``; the top package and ``__main__`` -> ``top``."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in FLOORS:
        return parts[1]
    return "top"


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer(target) != layer(module) and layer(target) not in ALLOWED[layer(module)]:
                wrong.append(f"{module} -> {target}")
            elif layer(module) == "rules" and layer(target) == "engine" and target != FACADE:
                wrong.append(f"{module} -> {target} (rules use the engine through {FACADE})")
    return wrong


def test_the_graph_sees_every_layer():
    """Guards the guard: a parser that saw nothing would pass every check below."""
    graph = import_graph()
    layers = {layer(m) for m in graph}
    assert set(FLOORS) <= layers
    assert "kmigrate.engine.analyze" in graph["kmigrate.run.runner"]
    assert FACADE in graph["kmigrate.rules.base"]
    # string references count: the command table names its commands by string
    assert "kmigrate.cli.check" in graph["kmigrate.cli.main"]
    assert "kmigrate.parity.worker" in graph["kmigrate.parity.execute"]


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_imports_point_down_the_layers():
    wrong = layer_violations(import_graph())
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    ("source", "imported", "complaint"),
    [
        ("kmigrate.engine.analyze", "kmigrate.rules.registry", "violation"),
        ("kmigrate.engine.model", "kmigrate.cli.main", "violation"),
        ("kmigrate.rules.base", "kmigrate.cli.main", "violation"),
        ("kmigrate.rules.base", "kmigrate.engine.analyze", "violation"),
        ("kmigrate.parity.compare", "kmigrate.engine.model", "violation"),
        ("kmigrate.report.summary", "kmigrate.run.runner", "violation"),
        ("kmigrate.report.summary", "kmigrate.project.config", "violation"),
        ("kmigrate.store.cache", "kmigrate.report.json_report", "violation"),
        ("kmigrate.project.config", "kmigrate.run.runner", "violation"),
        ("kmigrate.run.runner", "kmigrate.cli.main", "violation"),
        ("kmigrate.api", "kmigrate.cli.main", "violation"),
        ("kmigrate.engine.model", "kmigrate.engine.analyze", "cycle"),
    ],
)
def test_a_forbidden_edge_is_caught(source, imported, complaint):
    """The checks are not vacuous: one added edge of each kind makes them fail."""
    graph = import_graph()
    graph[source] = graph[source] | {imported}
    if complaint == "cycle":
        assert any(source in c and imported in c for c in cycles(graph))
    else:
        assert any(v.startswith(f"{source} -> {imported}") for v in layer_violations(graph))


# -- the engine holds no TensorFlow/Keras knowledge ------------------------------------

ENGINE = ROOT / "migrate" / "engine"
# a framework spelling inside a string: the package names, or a ``tf.`` / ``K.`` symbol
_FRAMEWORK_SPELLING = re.compile(r"tensorflow|keras|(?<![\w.])(?:tf|K)\.")
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def framework_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of the string constants of ``source``'s code (f-string parts
    included) that spell a TensorFlow/Keras name. Docstrings and comments may: they
    explain the boundary with examples; the code must get every spelling from the
    rules' ``ContextSpec``."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, _DOCUMENTED)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and _FRAMEWORK_SPELLING.search(node.value)
    ]


def test_the_engine_spells_no_framework_name():
    files = sorted(ENGINE.rglob("*.py"))
    assert len(files) > 10
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in files
        for line, text in framework_strings(path.read_text(encoding="utf-8"))
    ]
    assert not found, "TensorFlow/Keras spellings in the engine's code:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        'PREFIXES = (("tensorflow.keras.backend", "K"),)\n',
        'def f(symbol):\n    return symbol.startswith(("tf.", "K."))\n',
        'def f(root):\n    return f"tensorflow.{root}"\n',
        'NAME = "keras.ops"\n',
    ],
)
def test_a_framework_spelling_is_caught(code):
    """The check is not vacuous: each way the engine used to spell TensorFlow fails it."""
    assert framework_strings(code)


def test_docstrings_and_plain_strings_pass():
    code = (
        '"""Resolves ``tf.reduce_mean`` from ``import tensorflow as tf``."""\n'
        "def f():\n"
        '    """Folds ``tensorflow.keras.backend`` into ``K``."""\n'
        '    return "OK. the file is left untouched", "pdf.K.x"  # tf.keras\n'
    )
    assert framework_strings(code) == []


# The test folders, as docs/architecture.md ("Where the tests live") lists them.
TEST_FOLDERS = {"cli", "run", "report", "project", "store", "engine", "parity", "rules"}
TEST_FOLDERS |= {"differential", "benchmarks"}
WHOLE_TOOL_TESTS = {
    "test_api.py",
    "test_architecture.py",
    "test_docs.py",
    "test_docs_examples.py",
    "test_packaging.py",
    "test_repo_fixtures_backends.py",
}


def test_tests_are_laid_out_like_the_source() -> None:
    tests = ROOT / "tests"
    floors = {p.name for p in (ROOT / "migrate").iterdir() if (p / "__init__.py").exists()}
    assert floors <= TEST_FOLDERS, f"a floor without a test folder: {floors - TEST_FOLDERS}"
    misplaced = [
        str(p.relative_to(tests))
        for p in tests.rglob("test_*.py")
        if "fixtures" not in p.relative_to(tests).parts
        and (
            p.parent.name not in TEST_FOLDERS
            if p.parent != tests
            else p.name not in WHOLE_TOOL_TESTS
        )
    ]
    assert not misplaced, f"tests outside the source's layout (docs/architecture.md): {misplaced}"
    documented = (ROOT / "docs" / "architecture.md").read_text()
    for name in WHOLE_TOOL_TESTS:
        assert f"`{name}`" in documented, name
