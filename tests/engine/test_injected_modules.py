"""Keras's modules injected into a builder as keyword arguments and unpacked by
``get_submodules_from_kwargs`` (keras_applications' convention, real in qubvel's
efficientnet): the unpacked names are Keras's modules, so ``backend.sigmoid(x)`` is
``K.sigmoid(x)`` and gets its Keras 3 rewrite. Before, they were plain local variables:
the TensorFlow call the injected ``tf.keras`` backend makes stayed, with no finding, and
the model failed on JAX and PyTorch. The fixture repository ``injected_modules`` runs on
every backend in tests/test_repo_fixtures_backends.py."""

from __future__ import annotations

import ast
from pathlib import Path

from kmigrate.engine.injected_modules import unpacked_module_bindings
from kmigrate.engine.tree_index import TreeIndex
from tests.repo_fixtures import apply_repo, finding_lines, run_repo

UNPACKERS = (("get_submodules_from_kwargs", ("keras.backend", "keras.layers")),)

BUILDER = """from . import {helper}


def make_gate(**kwargs):
    backend, layers, models, utils = {helper}(kwargs)

    def gate(x):
        return x * backend.sigmoid(x)

    return layers.Activation(gate)
"""
INIT = "def get_submodules_from_kwargs(kwargs):\n    return kwargs['backend'], kwargs['layers']\n"


def _project(root: Path, helper: str = "get_submodules_from_kwargs") -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text(INIT)
    (root / "pkg" / "net.py").write_text(BUILDER.format(helper=helper))
    return root


def test_unpacked_names_bind_keras_modules_in_their_own_scope() -> None:
    tree = ast.parse(
        "def f(kwargs):\n"
        "    if kwargs:\n"
        "        backend, layers, models = pkg.get_submodules_from_kwargs(kwargs)\n"
        "    def g():\n"
        "        extra, = get_submodules_from_kwargs({})\n"
        "    self.b, c = get_submodules_from_kwargs(kwargs)\n"
        "    d, e = other(kwargs)\n"
    )
    index = TreeIndex(tree)
    found = unpacked_module_bindings(index, UNPACKERS)
    f, g = tree.body[0], tree.body[0].body[1]
    # past the end of the helper's result (`models`), an attribute target, another
    # function's result: nothing
    assert found[id(f)] == {
        "backend": "keras.backend",
        "layers": "keras.layers",
        "c": "keras.layers",
    }
    assert found[id(g)] == {"extra": "keras.backend"}  # the nested function's own scope
    index.add_bindings(found)
    assert index.scope_bindings(f).imports["backend"] == "keras.backend"
    assert "backend" not in index.scope_bindings(f).others


def test_a_call_through_an_injected_backend_is_rewritten(tmp_path: Path) -> None:
    root = _project(tmp_path)
    lines = finding_lines(run_repo(root))
    # the call is found and fixable; the unpacking itself is not the module "passed on"
    # (KM105)
    assert lines == ["pkg/net.py:8 KM201 model fixable"]
    apply_repo(root)
    text = (root / "pkg" / "net.py").read_text()
    assert "return x * ops.sigmoid(x)" in text and "from keras import ops" in text


def test_names_unpacked_from_another_function_stay_unknown(tmp_path: Path) -> None:
    root = _project(tmp_path, helper="unpack_settings")
    assert finding_lines(run_repo(root)) == []
