"""Spelling new names in the edited module: a name the module binds to something else is
never written as if it were Keras (`import tf_keras as keras`), and scan says so first."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from kmigrate.engine.model import EditPlan, EnsureImport, ReplaceNode, Span
from kmigrate.engine.speller import Speller, UnspellableNameError
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.run.runner import scan_text
from tests.repo_fixtures import apply_repo, run_repo


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
    ("code", "spelled", "imported"),
    [
        # `keras` is another module's (bert4keras): `keras.Operation` imported by name
        ("from mypkg.backend import keras\n", "Operation.compute_output_spec", "Operation"),
        ("import tf_keras as keras\n", "Operation.compute_output_spec", "Operation"),
        # wherever `keras` can be Keras 3's, it is written through it
        ("", "keras.Operation.compute_output_spec", "keras"),
        ("import keras\n", "keras.Operation.compute_output_spec", None),
        # the name `Operation` is taken: not spelled
        ("from mypkg.backend import keras\nOperation = 1\n", None, None),
    ],
)
def test_keras_operation_is_imported_by_name_only_where_keras_is_taken(
    code: str, spelled: str | None, imported: str | None
) -> None:
    speller = _speller(code)
    qualified = "keras.Operation.compute_output_spec"
    if spelled is None:
        assert speller.unspellable(qualified)
        return
    assert speller.unspellable(qualified) == ""
    assert speller.spell(qualified) == spelled
    wanted = {"Operation": EnsureImport("keras", "Operation"), "keras": EnsureImport("keras")}
    assert speller.needed == ([wanted[imported]] if imported else [])


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


def run(model):
    model.save("m.h5")
    return keras.models.load_model("m.h5")
"""


def _counts(code: str, tmp_path: Path) -> tuple[int, int, int, str]:
    """Fixable findings scan promises, fixes apply makes, fixable findings left after it,
    and the rewritten module."""
    (tmp_path / "m.py").write_text(code)
    scanned = sum(f.fixable for f in run_repo(tmp_path).findings)
    fixed = apply_repo(tmp_path)
    left = sum(f.fixable for f in run_repo(tmp_path).findings)
    return scanned, fixed, left, (tmp_path / "m.py").read_text()


def test_the_tf_keras_import_becomes_keras_with_the_fixes_that_spell_keras(
    tmp_path: Path,
) -> None:
    """KM104 makes `import tf_keras as keras` `import keras`, so the other fixes of the
    module, which write `keras.random...` and `keras.saving...`, are made in the same apply."""
    scanned, fixed, left, new = _counts(LAYER, tmp_path)
    assert scanned == fixed == 6 and left == 0
    assert "import keras\n" in new and "tf_keras" not in new and "tensorflow" not in new
    assert "keras.random.SeedGenerator(seed)" in new
    assert 'keras.saving.load_model("m.keras")' in new


WAITING = """\
import tensorflow as tf
import tf_keras as keras


class Scale(keras.layers.Layer):
    def call(self, x):
        return keras.backend.mean(x) * tf.random.uniform((2,), seed=1)
"""


def test_fixes_wait_for_the_round_that_rewrites_the_import(tmp_path: Path) -> None:
    """The import waits for `keras.backend.mean` (KM201 fixes it in round one); KM301's
    `keras.random.SeedGenerator` is written in round two, with the import: scan counts
    both as fixable."""
    (km104,) = [f for f in scan_text(WAITING) if f.rule == "KM104"]
    (km301,) = [f for f in scan_text(WAITING) if f.rule == "KM301"]
    assert km104.fix is None and km104.fixed_later
    assert km301.fix is None and km301.fixed_later
    scanned, fixed, left, new = _counts(WAITING, tmp_path)
    assert scanned == fixed == 3 and left == 0
    assert "ops.mean(x) * keras.random.uniform((2,), seed=self.seed_generator)" in new


@pytest.mark.parametrize(
    "code",
    [
        # `CuDNNLSTM` is not in Keras 3: the import stays, and with it tf_keras's `keras`
        LAYER + "\nrnn = keras.layers.CuDNNLSTM(8)\n",
        # a version switch: `keras` is tf.keras on the other path
        LAYER.replace(
            "import tf_keras as keras\n",
            'if tf.__version__ >= "2.16":\n    import tf_keras as keras\nelse:\n'
            "    keras = tf.keras\n",
        ),
    ],
    ids=["import-kept", "conditional-import"],
)
def test_scan_promises_no_fix_that_would_write_keras_for_tf_keras(
    code: str, tmp_path: Path
) -> None:
    """Where `keras` stays bound to tf_keras, KM301's fix would write
    `keras.random.SeedGenerator`, which there would be tf_keras's (it has none)."""
    (km301,) = [f for f in scan_text(code) if f.rule == "KM301"]
    assert not km301.fixable and "binds `keras` to `tf_keras`" in km301.message
    scanned, fixed, left, new = _counts(code, tmp_path)
    assert scanned == fixed and left == 0
    assert "keras.random" not in new and "tf.random.uniform" in new
    assert "ops.mean(x)" in new  # spelled through `from keras import ops`: Keras 3's


def test_a_plan_that_replaces_the_import_frees_its_name() -> None:
    """The editor spells `keras.X` when a plan of the same edit replaces the module's
    only binding of `keras` by `import keras`; not for an import inside an `if`."""
    style = CONTEXT_SPEC.import_style
    swap = EditPlan((ReplaceNode(Span(2, 0, 2, 24), "import keras", kind="stmt"),))
    top = ast.parse("import numpy as np\nimport tf_keras as keras\n")
    assert Speller.for_tree(top, style).unspellable("keras.random.SeedGenerator")
    assert Speller.for_tree(top, style, [swap]).unspellable("keras.random.SeedGenerator") == ""
    nested = ast.parse("if True:\n    import tf_keras as keras\n")
    swap = EditPlan((ReplaceNode(Span(2, 4, 2, 28), "import keras", kind="stmt"),))
    assert Speller.for_tree(nested, style, [swap]).unspellable("keras.random.SeedGenerator")


SHADOWED = """\
import tensorflow as tf
import keras
from keras import ops


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
    for line in (9, 10):
        assert "`ops` is a local name in `call`" in found["KM201", line].message
        assert not found["KM201", line].fixable
    assert "`keras` is a local name in `call`" in found["KM301", 16].message
    assert found["KM201", 16].fixable  # tf.shape -> ops.shape: `ops` is free there
    fixed = apply_to_text(SHADOWED)
    assert "tf.reduce_mean(x, axis=1)" in fixed and "keras.random" not in fixed
    assert "ops.shape(x)" in fixed


TF1 = "import tensorflow.compat.v1 as tf1\n"


@pytest.mark.parametrize(
    ("code", "spelled", "imported"),
    [
        (TF1, "tf.cast", EnsureImport("tensorflow", asname="tf")),
        ("import tensorflow as tf\n", "tf.cast", None),  # reused, nothing to add
        (TF1 + "tf = None\n", "tensorflow.cast", EnsureImport("tensorflow")),  # `tf` is taken
    ],
)
def test_tensorflow_comes_in_as_tf_when_that_name_is_free(
    code: str, spelled: str, imported: EnsureImport | None
) -> None:
    speller = _speller(code)
    assert speller.first_name("tensorflow.cast") == (spelled.partition(".")[0], "")
    assert speller.spell("tensorflow.cast") == spelled
    assert speller.spell("tensorflow.math.log") == spelled.replace("cast", "math.log")
    assert speller.needed == ([imported] if imported else [])


@pytest.mark.parametrize(
    "code",
    [
        "x = 1\n",
        "from tensorflow.keras import backend as K\n",  # Keras's after the migration
        "from tensorflow import keras\nimport tf_keras\n",
    ],
)
def test_tensorflow_is_never_imported_into_a_module_that_did_not_import_it(code: str) -> None:
    """A fix spelling ``tensorflow.cast`` in a module without its own TensorFlow import
    is refused (scan keeps no fix and says why): apply never adds ``import tensorflow``."""
    speller = _speller(code)
    name, why = speller.first_name("tensorflow.cast")
    assert "does not import `tensorflow`" in why
    with pytest.raises(UnspellableNameError, match="never adds that import"):
        speller.spell("tensorflow.cast")
    assert speller.needed == []
