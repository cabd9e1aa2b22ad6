"""KM532 without a backend: one finding per layer naming every unbuilt sub-layer, the fix
(``compute_output_spec`` tracing ``call``) where nothing in the class or its bases speaks
against it, the reason where something does, and the spelling in a module whose ``keras``
is the project's own backend module (bert4keras: ``from bert4keras.backend import keras``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text
from tests.repo_fixtures import apply_repo, run_repo

ATTENTION = """
class Attention({base}):
    def build(self, input_shape):
        super().build(input_shape)
        self.q_dense = Dense(4)
        self.dropout = Dropout(0.1)
        self.o_dense = Dense(4)
{extra}
    def call(self, inputs):
        return self.o_dense(self.dropout(self.q_dense(inputs[0])))

    def compute_output_shape(self, input_shape):
        return input_shape[0]
"""
HEADER = "import keras\nfrom keras.layers import Dense, Dropout\n"


def layer(base: str = "keras.layers.Layer", extra: str = "", header: str = HEADER) -> str:
    extra = textwrap.indent(textwrap.dedent(extra), "    ") if extra else ""
    return header + "\n" + ATTENTION.format(base=base, extra=extra)


def km532(text: str) -> list:
    return [f for f in scan_text(text, select=["KM532"]) if f.rule == "KM532"]


def test_one_finding_names_every_unbuilt_sub_layer_with_weights() -> None:
    (found,) = km532(layer())
    assert "`self.q_dense` (Dense), `self.o_dense` (Dense) and does not build them" in (
        found.message
    )
    assert "dropout" not in found.message  # its seed state is made in __init__
    assert found.fix is not None and found.span.line == 8


def test_the_fix_appends_the_tracing_method_once() -> None:
    fixed = apply_to_text(layer(), select=["KM532"])
    assert fixed.count("def compute_output_spec(self, *args, **kwargs):") == 1
    assert "return keras.Operation.compute_output_spec(self, *args, **kwargs)" in fixed
    assert apply_to_text(fixed, select=["KM532"]) == fixed
    assert km532(fixed) == []  # the class now uses `compute_output_spec`: not reported again


@pytest.mark.parametrize(
    ("base", "extra", "why"),
    [
        ("keras.layers.Layer, Mixin", "", "more bases"),
        ("keras.layers.Dense", "", "its base `keras.layers.Dense` is not `keras.layers.Layer`"),
        (
            "keras.layers.Layer",
            "def get_table(self):\n    return self.table\n",
            "",  # returning self.x elsewhere than call is fine
        ),
        (
            "keras.layers.Layer",
            "def __call__(self, *args):\n    return super().__call__(*args)\n",
            "it defines `__call__`",
        ),
        (
            "keras.layers.Layer",
            "def compute_output_spec(self, inputs):\n    return inputs[0]\n",
            "the class defines `compute_output_spec`",
        ),
    ],
)
def test_what_the_class_itself_says_against_the_fix(base: str, extra: str, why: str) -> None:
    header = HEADER + "from tools import Mixin\n"
    (found,) = km532(layer(base, extra, header))
    if not why:
        assert found.fix is not None, found.message
        return
    assert found.fix is None and why in found.message, found.message


def test_a_variable_returned_by_call_is_not_traced_on_jax() -> None:
    text = layer().replace(
        "self.o_dense = Dense(4)\n",
        "self.o_dense = Dense(4)\n        self.scale = self.add_weight(shape=(4,))\n",
    )
    text = text.replace(
        "return self.o_dense(self.dropout(self.q_dense(inputs[0])))",
        "return [self.o_dense(self.q_dense(inputs[0])), self.scale]",
    )
    (found,) = km532(text.replace("return input_shape[0]", "return [input_shape[0], (4,)]"))
    assert found.fix is None and "`call` returns `self.scale`" in found.message, found.message


def test_a_base_of_the_module_that_defines_call_paths_blocks_the_fix() -> None:
    text = layer(
        "Layer",
        header=HEADER
        + "\n\nclass Layer(keras.layers.Layer):\n"
        + "    def __call__(self, *args, **kwargs):\n"
        + "        return super().__call__(*args, **kwargs)\n",
    )
    (found,) = km532(text)
    assert found.fix is None and "its base `Layer` defines `__call__`" in found.message


BACKEND = """
import os
import sys

import tensorflow as tf

if os.environ.get("TF_KERAS"):
    sys.modules["keras"] = tf.keras

import keras
"""
LAYERS = """
import os
from mypkg.backend import keras
from keras.layers import *

if os.environ.get("OLD_KERAS"):

    class Layer(keras.layers.Layer):
        def __setattr__(self, name, value):
            super().__setattr__(name, value)

else:

    class Layer(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

"""


def test_bert4keras_shape_a_project_keras_and_a_base_defined_per_keras_version(
    tmp_path: Path,
) -> None:
    """``keras`` is the project's backend module's: ``keras.Operation`` cannot be spelled
    through it, so the fix imports ``Operation`` by name; the base ``Layer`` is defined
    in an ``if`` and an ``else``, both checked."""
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "backend.py").write_text(BACKEND)
    (package / "layers.py").write_text(LAYERS + ATTENTION.format(base="Layer", extra=""))
    findings = [f for f in run_repo(tmp_path).findings if f.rule == "KM532"]
    assert len(findings) == 1 and findings[0].fix is not None, [f.message for f in findings]
    apply_repo(tmp_path)
    text = (package / "layers.py").read_text()
    assert "from keras import Operation\n" in text
    assert "        return Operation.compute_output_spec(self, *args, **kwargs)\n" in text
