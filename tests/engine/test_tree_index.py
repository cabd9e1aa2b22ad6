"""The tree index answers what the walks it replaced answered.

Subtrees as number ranges, innermost owners by a sweep, and all scopes' bindings from
one pass are compared with the plain walks (``ast.walk``, a recursive owner walk,
``names.scope_bindings``) on a module written to hold the awkward cases, and on every
Python file of the samples and the fixture repositories.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from kmigrate.engine.names import scope_bindings
from kmigrate.engine.project_entry import build_entry
from kmigrate.engine.tree_index import TreeIndex, innermost
from kmigrate.rules.context_spec import CONTEXT_SPEC

ROOT = Path(__file__).resolve().parents[2]

AWKWARD = textwrap.dedent(
    """
    import os
    try:
        import tensorflow as tf
    except ImportError:
        tf = None
    from . import utils as u, helpers
    from .pkg.sub import *

    def outer(a, b=lambda q: q + 1, *args, c: int = 2, **kw):
        global counter
        import numpy as np
        x = [y for y in range(3) if (z := y)]
        def inner(d=tf.zeros(1)):
            nonlocal x
            class Local(tf.keras.layers.Layer):
                w = tf.ones(2)
                def call(self, t):
                    return tf.reduce_sum(t, axis=-1)
            return Local
        with tf.GradientTape() as tape:
            loss = inner()(x)
        try:
            pass
        except ValueError as err:
            del err
        return lambda v: np.mean(v) + tf.abs(v)

    class Top(tf.keras.Model):
        scale = tf.constant(1.0)

        @tf.function(jit_compile=True)
        def call(self, inputs, training=None):
            for i, (p, q) in enumerate(inputs):
                match p:
                    case [first, *rest]:
                        pass
                    case {"k": value}:
                        pass
                    case other:
                        pass
            return tf.nn.relu(inputs)

    value = outer(1)(2)
    """
)

_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _python_files() -> list[Path]:
    files = sorted((ROOT / "samples").rglob("*.py"))
    files += sorted((ROOT / "tests" / "fixtures" / "repos").rglob("*.py"))
    return files


# every way an imported name is read (project_entry._reads: attributes one and two deep,
# called or not, the name itself called, passed, stored, subscripted)
READS = """\
import keras.backend as K
from pkg import backend, layers as L, helper

a = K.mean(1)
b = K.epsilon
c = backend.K.sum(2) + backend.K.floatx
d = backend.K.floatx()
helper(K)
e = [L, L.Dense(3), L.Dense]
f = K.a.b.c(L.x[0], backend)
g = helper.run()(K.placeholder)[1]
h = L.x().y
"""


def _modules() -> list[tuple[str, ast.Module]]:
    found = [("awkward", ast.parse(AWKWARD)), ("reads", ast.parse(READS))]
    for path in _python_files():
        try:
            found.append((str(path.relative_to(ROOT)), ast.parse(path.read_text("utf-8"))))
        except (SyntaxError, UnicodeDecodeError):
            continue  # hostile-input fixtures
    return found


MODULES = _modules()


def _owners_by_walk(tree: ast.Module) -> dict[int, tuple[ast.AST | None, str | None]]:
    """Innermost function and class around every node, by a recursive walk."""
    found: dict[int, tuple[ast.AST | None, str | None]] = {}

    def visit(node: ast.AST, owner: ast.AST | None, owner_class: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            found[id(child)] = (owner, owner_class)
            if isinstance(child, _FUNCTIONS):
                visit(child, child, owner_class)
            elif isinstance(child, ast.ClassDef):
                visit(child, owner, child.name)
            else:
                visit(child, owner, owner_class)

    visit(tree, None, None)
    return found


def test_the_awkward_module_has_what_the_checks_need() -> None:
    kinds = {type(n) for n in ast.walk(MODULES[0][1])}
    assert {ast.Lambda, ast.ClassDef, ast.Nonlocal, ast.MatchAs, ast.NamedExpr} <= kinds
    assert len(MODULES) > 20  # samples and fixture repositories were found


@pytest.mark.parametrize("name,tree", MODULES, ids=[m[0] for m in MODULES])
def test_subtrees_and_owners_match_plain_walks(name: str, tree: ast.Module) -> None:
    index = TreeIndex(tree)
    every = [n for n in ast.walk(tree) if n in index.nodes(type(n))]
    assert len(index.order) == len(every)
    for node in [tree, *index.nodes(*_SCOPES[1:], ast.If, ast.With, ast.Call)]:
        walked = {id(n) for n in ast.walk(node) if isinstance(n, ast.Call)}
        assert {id(n) for n in index.below(ast.Call, node)} == walked
        calls, constants = index.below_each(node, (ast.Call, ast.Constant))
        assert calls == index.below(ast.Call, node)
        assert constants == index.below(ast.Constant, node)
    owners = _owners_by_walk(tree)
    functions = index.function_regions()
    calls = index.numbered(ast.Call)
    by_sweep = innermost(calls, functions)
    classes = innermost(calls, index.class_regions())
    for (call, owner), (_, owner_class) in zip(by_sweep, classes):
        assert (owner, owner_class) == owners[id(call)]
    nested = innermost([(n, f) for n, _, f in functions], functions, strict=True)
    for function, owner in nested:
        assert owner is owners[id(function)][0]


@pytest.mark.parametrize("name,tree", MODULES, ids=[m[0] for m in MODULES])
def test_scope_bindings_match_the_walk_per_scope(name: str, tree: ast.Module) -> None:
    index = TreeIndex(tree)
    for scope in index.nodes(*_SCOPES):
        swept = index.scope_bindings(scope, "pkg")
        walked = scope_bindings(scope, "pkg")
        assert list(swept.imports.items()) == list(walked.imports.items())
        assert (swept.others, swept.globals_, swept.is_class) == (
            walked.others,
            walked.globals_,
            walked.is_class,
        )


@pytest.mark.parametrize("name,tree", MODULES, ids=[m[0] for m in MODULES])
def test_index_entries_are_the_same_with_and_without_the_index(name: str, tree) -> None:
    """An entry made on its own walks the subtrees; with the analysis' index it bisects."""
    assert build_entry(tree, CONTEXT_SPEC, TreeIndex(tree)) == build_entry(tree, CONTEXT_SPEC)


def test_scope_bindings_are_copies() -> None:
    """ModuleInfo.bind changes the module scope it was given: never the index's own."""
    tree = ast.parse(AWKWARD)
    index = TreeIndex(tree)
    first = index.scope_bindings(tree)
    first.imports["K"] = "keras.backend"
    assert "K" not in index.scope_bindings(tree).imports


def test_parents_are_made_on_demand_and_match_the_tree() -> None:
    tree = ast.parse(AWKWARD)
    index = TreeIndex(tree)
    assert index._parents is None
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if child in index.nodes(type(child)):
                assert index.parent(child) is node


def test_local_binder_finds_the_innermost_function_that_binds_a_name() -> None:
    from kmigrate.engine.tree_index import TreeIndex

    tree = ast.parse(
        "ops = 1\n"
        "def outer(ops):\n"
        "    def inner():\n"
        "        global keras\n"
        "        keras = 2\n"
        "        return ops + keras\n"
        "    lam = lambda keras: keras + ops\n"
        "    return inner\n"
        "def other():\n"
        "    return ops\n"
    )
    index = TreeIndex(tree)
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in ("ops", "keras")]
    loads = {(n.lineno, n.col_offset, n.id): n for n in names if isinstance(n.ctx, ast.Load)}
    assert index.local_binder(loads[6, 15, "ops"], "ops") == "outer"
    assert index.local_binder(loads[6, 21, "keras"], "keras") is None  # global
    assert index.local_binder(loads[7, 24, "keras"], "keras") == "<lambda>"
    assert index.local_binder(loads[10, 11, "ops"], "ops") is None  # the module's
