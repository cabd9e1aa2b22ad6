"""Spelling new names in the edited module: a name the module binds to something else is
never written as if it were Keras (`import tf_keras as keras`), and scan says so first."""

from __future__ import annotations

import ast

import pytest

from kmigrate.commands.rewrite import apply_to_text
from kmigrate.commands.runner import scan_text
from kmigrate.engine.speller import Speller, UnspellableNameError
from kmigrate.rules.context_spec import CONTEXT_SPEC


def _speller(code: str) -> Speller:
    return Speller.for_tree(ast.parse(code), CONTEXT_SPEC.import_style)


@pytest.mark.parametrize(
    ("code", "why"),
    [
        ("import tf_keras as keras\n", "binds `keras` to `tf_keras`"),
        ("from tensorflow.python import keras\n", "`tensorflow.python.keras`"),
        ("keras = make_keras()\n", "a value of its own"),
        ("import tensorflow as tf\nkeras = tf.keras\nkeras = None\n", "a value of its own"),
    ],
)
def test_a_keras_bound_to_something_else_is_not_spelled(code: str, why: str) -> None:
    speller = _speller(code)
    assert why in speller.unspellable("keras.random.SeedGenerator")
    with pytest.raises(UnspellableNameError):
        speller.spell("keras.random.SeedGenerator")
    # `from keras import ops` binds a free name: keras.ops stays spellable
    assert speller.unspellable("keras.ops.mean") == ""


@pytest.mark.parametrize(
    "code",
    [
        "",
        "import keras\n",
        "from tensorflow import keras\n",  # KM102 makes it `import keras`
        "import keras_core as keras\n",  # so does KM106
        "import tensorflow as tf\nkeras = tf.keras\n",  # tf.keras is Keras 3 on TF 2.16+
    ],
)
def test_keras_itself_and_the_bindings_apply_replaces_are_spelled(code: str) -> None:
    speller = _speller(code)
    assert speller.unspellable("keras.random.SeedGenerator") == ""
    assert speller.spell("keras.random.SeedGenerator") == "keras.random.SeedGenerator"


LAYER = """\
import tensorflow as tf
import tf_keras as keras


class Noise(keras.layers.Layer):
    def call(self, x):
        return x + tf.random.uniform(tf.shape(x), seed=1) * tf.reduce_mean(x)
"""


def test_scan_promises_no_fix_that_would_write_keras_for_tf_keras() -> None:
    """`import tf_keras as keras` (TF 2.16+'s way to keep Keras 2): KM301's fix writes
    `keras.random.SeedGenerator`, which there would be tf_keras's (it has none)."""
    (km301,) = [f for f in scan_text(LAYER) if f.rule == "KM301"]
    assert not km301.fixable and "binds `keras` to `tf_keras`" in km301.message
    fixed = apply_to_text(LAYER)
    assert "keras.random" not in fixed and "tf.random.uniform" in fixed
    assert "ops.mean(x)" in fixed  # spelled through `from keras import ops`: Keras 3's


SHADOWED = """\
import tensorflow as tf
from tensorflow import keras


class Pool(keras.layers.Layer):
    def call(self, x, ops=("mean",)):
        if "mean" in ops:
            return tf.reduce_mean(x, axis=1)
        return tf.reduce_max(x, axis=1)


class Noise(keras.layers.Layer):
    def call(self, x):
        keras = None
        return x + tf.random.uniform(tf.shape(x), seed=1)
"""


def test_a_name_a_function_binds_itself_is_not_written_for_keras() -> None:
    """`ops.mean` written where a parameter is named `ops`, or `keras.random...` in a
    function that sets `keras = None`, would name those locals."""
    found = {(f.rule, f.span.line): f for f in scan_text(SHADOWED)}
    for line in (8, 9):
        assert "`ops` is a local name in `call`" in found["KM201", line].message
        assert not found["KM201", line].fixable
    assert "`keras` is a local name in `call`" in found["KM301", 15].message
    assert found["KM201", 15].fixable  # tf.shape -> ops.shape: `ops` is free there
    fixed = apply_to_text(SHADOWED)
    assert "tf.reduce_mean(x, axis=1)" in fixed and "keras.random" not in fixed
    assert "ops.shape(x)" in fixed
