"""The engine's own behaviour: name resolution, contexts, fingerprints, editing."""

from __future__ import annotations

import ast
import textwrap

from contract import FINDING_FIELDS

from kmigrate.api import apply_to_text
from kmigrate.engine.contexts import build_context_index
from kmigrate.engine.model import Context
from kmigrate.engine.module_info import ModuleInfo
from kmigrate.engine.names import Canonical, Resolver, scope_bindings
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.run.runner import scan_text

canonical = CONTEXT_SPEC.canonical


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- names ---------------------------------------------------------------------


def test_canonical_spellings() -> None:
    assert canonical("tensorflow.math.reduce_mean") == "tf.math.reduce_mean"
    assert canonical("tensorflow.compat.v2.reduce_mean") == "tf.reduce_mean"
    assert canonical("tensorflow.keras.backend.mean") == "K.mean"
    assert canonical("keras.backend.mean") == "K.mean"
    assert canonical("keras.backend.common.epsilon") == "K.epsilon"  # Keras 2 re-exports it
    assert canonical("tensorflow.keras.layers.Dense") == "tf.keras.layers.Dense"
    assert canonical("numpy.random.normal") == "np.random.normal"
    assert canonical("keras.layers.Dense") == "keras.layers.Dense"
    assert canonical("tensorflowx.foo") == "tensorflowx.foo"


def test_canonical_folds_by_the_table_it_is_given() -> None:
    """The engine holds no spelling of its own: the first matching prefix of the
    caller's table wins, only at a dot; with no table every name stays as written."""
    fold = Canonical((("pkg.sub", "S"), ("pkg", "p")))
    assert [fold(n) for n in ("pkg.sub.f", "pkg.g", "pkg", "pkgx.h", "other")] == [
        "S.f",
        "p.g",
        "p",
        "pkgx.h",
        "other",
    ]
    assert Canonical(())("tensorflow.math.reduce_mean") == "tensorflow.math.reduce_mean"


def _resolve_all(text: str) -> dict[str, str | None]:
    tree = ast.parse(text)
    resolver = Resolver(scope_bindings(tree), canonical)
    return {
        ast.unparse(n): resolver.symbol(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)
    }


def test_aliases_resolve() -> None:
    found = _resolve_all(
        code(
            """
            import tensorflow as tfx
            from tensorflow import keras as tfk
            from tensorflow import math as tfm
            from tensorflow.keras import backend as KB
            a = tfx.reduce_mean
            b = tfk.layers.Dense
            c = tfm.reduce_sum
            d = KB.mean
            """
        )
    )
    assert found["tfx.reduce_mean"] == "tf.reduce_mean"
    assert found["tfk.layers.Dense"] == "tf.keras.layers.Dense"
    assert found["tfm.reduce_sum"] == "tf.math.reduce_sum"
    assert found["KB.mean"] == "K.mean"


def test_local_variable_named_tf_is_not_tensorflow() -> None:
    text = code(
        """
        import tensorflow as tf
        from tensorflow import keras

        class Norm(keras.layers.Layer):
            def call(self, x):
                tf = SomeHelper()
                return tf.keras.layers.Dense(3)(x)

        def build(tf):
            return tf.keras.layers.Dense(4)

        dense = tf.keras.layers.Dense(5)
        """
    )
    findings = [f for f in scan_text(text, select=["KM101"])]
    assert [f.span.line for f in findings] == [12]
    out = apply_to_text(text, select=["KM101"])
    assert "tf = SomeHelper()\n        return tf.keras.layers.Dense(3)(x)" in out
    assert "def build(tf):\n    return tf.keras.layers.Dense(4)" in out
    assert "dense = keras.layers.Dense(5)" in out


def test_try_import_fallback_still_resolves() -> None:
    text = code(
        """
        try:
            import tensorflow as tf
        except ImportError:
            tf = None
        layer = tf.keras.layers.Dense(3)
        """
    )
    assert [f.rule for f in scan_text(text, select=["KM1"])] == ["KM101"]


# -- contexts ------------------------------------------------------------------


def _contexts(text: str) -> dict[str, Context | None]:
    tree = ast.parse(text)
    module = ModuleInfo("m.py", text, tree, canonical=canonical)
    index = build_context_index(tree, module.resolver, CONTEXT_SPEC)
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = index.for_function(node)
    return names


LEGACY = code(
    """
    import tensorflow as tf
    from tensorflow import keras

    def normalize(x):
        return x / tf.norm(x)

    def helper_of_helper(x):
        return normalize(x)

    def parse_example(record):
        return tf.io.parse_single_example(record, {})

    def augment(image):
        return tf.image.flip_left_right(image)

    def focal(y_true, y_pred):
        return tf.reduce_mean(y_pred)

    class Block(keras.layers.Layer):
        def call(self, x):
            return helper_of_helper(x)

    def train_step(model, x):
        with tf.GradientTape() as tape:
            loss = model(x)
        return tape.gradient(loss, model.trainable_variables)

    def build():
        inputs = keras.Input(shape=(3,))
        return keras.Model(inputs, tf.nn.relu(inputs))

    def unrelated():
        return 1

    ds = tf.data.TFRecordDataset("x").map(augment)
    model = build()
    model.compile(loss=focal)
    """
)


def test_function_called_from_layer_call_is_model_code() -> None:
    contexts = _contexts(LEGACY)
    assert contexts["call"] is Context.MODEL
    assert contexts["helper_of_helper"] is Context.MODEL
    assert contexts["normalize"] is Context.MODEL


def test_dataset_map_function_is_data_code() -> None:
    contexts = _contexts(LEGACY)
    assert contexts["augment"] is Context.DATA
    assert contexts["parse_example"] is Context.DATA


def test_loss_functional_builder_training_loop_contexts() -> None:
    contexts = _contexts(LEGACY)
    assert contexts["focal"] is Context.MODEL  # passed as loss=
    assert contexts["build"] is Context.MODEL  # applies tf ops to keras.Input
    assert contexts["train_step"] is Context.TRAINING_LOOP
    assert contexts["unrelated"] is Context.MODEL  # a Keras module: model unless proven


def test_without_keras_unseeded_code_is_other() -> None:
    text = "import tensorflow as tf\n\ndef unrelated(x):\n    return tf.reduce_sum(x)\n"
    assert _contexts(text) == {"unrelated": None}
    assert _contexts(text.replace("(x)\n", "(x)\n\nlayer = tf.keras.layers.Dense(3)\n")) == {
        "unrelated": Context.MODEL  # reading `tf.keras` makes it a Keras module
    }
    for star in ("from keras.layers import *", "from tensorflow.keras.models import *"):
        assert _contexts(f"{star}\n{text}") == {"unrelated": Context.MODEL}, star
    assert _contexts(f"from numpy import *\n{text}") == {"unrelated": None}


def test_a_helper_of_a_layer_and_of_a_data_map_is_undecided() -> None:
    contexts = _contexts(
        code(
            """
            import tensorflow as tf
            from tensorflow import keras

            def scale(x):
                return x * 2.0

            def shared(x):
                return scale(x)

            class Block(keras.layers.Layer):
                def call(self, x):
                    return shared(x)

            ds = tf.data.Dataset.range(3).map(shared)
            """
        )
    )
    assert contexts["shared"] is contexts["scale"] is Context.UNDECIDED
    assert contexts["call"] is Context.MODEL  # a layer's own method whatever it calls


def test_serving_distribution_and_image_calls() -> None:
    contexts = _contexts(
        code(
            """
            import tensorflow as tf
            from tensorflow import keras

            def export(model):
                tf.saved_model.save(model, "out")

            def replicas():
                return tf.distribute.MirroredStrategy()

            def crop(x):  # tf.image proves nothing: layers crop too
                return tf.image.central_crop(x, 0.5)

            def decode(record):  # tf.io parsing does
                return tf.io.decode_raw(record, tf.uint8)
            """
        )
    )
    assert contexts == {
        "export": Context.SERVING,
        "replicas": Context.DISTRIBUTION,
        "crop": Context.MODEL,
        "decode": Context.DATA,
    }


def test_lambda_passed_to_lambda_layer_is_model_code() -> None:
    text = code(
        """
        import tensorflow as tf
        from tensorflow.keras import layers
        norm = layers.Lambda(lambda t: tf.nn.l2_normalize(t, axis=-1))
        """
    )
    tree = ast.parse(text)
    module = ModuleInfo("m.py", text, tree, canonical=canonical)
    index = build_context_index(tree, module.resolver, CONTEXT_SPEC)
    lam = next(n for n in ast.walk(tree) if isinstance(n, ast.Lambda))
    assert index.for_function(lam) is Context.MODEL


# -- findings and fingerprints -------------------------------------------------


def test_fingerprint_survives_lines_inserted_above() -> None:
    text = code(
        """
        import tensorflow as tf
        layer = tf.keras.layers.Dense(3)
        """
    )
    shifted = text.replace("import tensorflow as tf\n", "import tensorflow as tf\n\n\n# hello\n")
    (before,) = scan_text(text, select=["KM101"])
    (after,) = scan_text(shifted, select=["KM101"])
    assert before.span.line != after.span.line
    assert before.fingerprint == after.fingerprint


def test_json_finding_shape() -> None:
    (finding,) = scan_text(
        "import tensorflow as tf\nx = tf.keras.layers.Dense(3)\n", select=["KM101"]
    )
    data = finding.to_json()
    assert tuple(data) == FINDING_FIELDS
    assert (data["line"], data["column"]) == (2, 5)
    assert data["symbol"] == "tf.keras.layers.Dense"


def test_syntax_error_is_km901_not_a_crash() -> None:
    findings = scan_text("import tensorflow as tf\nprint 'hi'\n")
    assert [f.rule for f in findings] == ["KM901"]
    assert "Python 2" in findings[0].message


def test_suppression_comment() -> None:
    text = "import tensorflow as tf\nx = tf.keras.layers.Dense(3)  # kmigrate: ignore[KM101]\n"
    assert scan_text(text, select=["KM101"]) == []
    text = "import tensorflow as tf\nx = tf.keras.layers.Dense(3)  # kmigrate: ignore[KM2]\n"
    assert len(scan_text(text, select=["KM101"])) == 1


# -- editing -------------------------------------------------------------------


def test_formatting_and_comments_outside_rewrites_are_kept() -> None:
    text = code(
        """
        import tensorflow as tf   # the framework
        import numpy as np


        # A comment block
        # that stays.
        def   odd_spacing( a,b ):
            return a+b   # untouched

        layer = tf.keras.layers.Dense(   3 ,  activation = "relu" )  # tail comment
        """
    )
    out = apply_to_text(text, select=["KM1"])
    old_lines = text.splitlines()
    new_lines = out.splitlines()
    assert 'layer = keras.layers.Dense(   3 ,  activation = "relu" )  # tail comment' in new_lines
    assert "import keras" in new_lines
    assert "import tensorflow as tf   # the framework" not in new_lines  # unused now
    kept = [line for line in old_lines if "tf." not in line and "import tensorflow" not in line]
    for line in kept:
        assert line in new_lines


def test_crlf_line_endings_survive() -> None:
    text = "import tensorflow as tf\r\n\r\nx = tf.keras.layers.Dense(3)\r\n"
    out = apply_to_text(text, select=["KM1"])
    assert out == "import keras\r\n\r\nx = keras.layers.Dense(3)\r\n"


def test_used_tensorflow_import_is_kept() -> None:
    text = "import tensorflow as tf\nx = tf.keras.layers.Dense(3)\nds = tf.data.Dataset.range(3)\n"
    out = apply_to_text(text, select=["KM1"])
    assert out.startswith("import keras\nimport tensorflow as tf\n")  # isort's order


def test_an_import_that_annotations_name_is_kept() -> None:
    """`-> tf.Tensor` is read when the function is defined: dropping `import tensorflow as
    tf` under it breaks the module on import (seen on tensorflow/addons' snake.py)."""
    text = (
        "import tensorflow as tf\n\n\nclass L(tf.keras.layers.Layer):\n"
        "    def call(self, x: tf.Tensor, *, k: int = 1) -> tf.Tensor:\n"
        "        return tf.abs(x)\n"
    )
    out = apply_to_text(text)
    assert "import tensorflow as tf\n" in out and "-> tf.Tensor" in out
    compile(out, "m.py", "exec")


def test_loss_chosen_through_a_name_and_conditional_is_model_code() -> None:
    contexts = _contexts(
        code(
            """
            import tensorflow as tf

            def focal(y, p):
                return tf.reduce_mean(p)

            def smoothed(y, p):
                return tf.reduce_mean(y)

            def compile_model(model, use_focal):
                loss = focal if use_focal else smoothed
                model.compile(loss=loss)
            """
        )
    )
    assert contexts["focal"] is Context.MODEL
    assert contexts["smoothed"] is Context.MODEL


_MANUAL_PORTS = """import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K


class Mixer(keras.layers.Layer):
    def build(self, input_shape):
        self.table = tf.Variable(make_table(input_shape))

    def call(self, x, sizes):
        a, b = tf.split(x, sizes, axis=1)
        return K.reshape(a, (-1,), 3) + b
"""


def test_analysing_a_file_leaves_no_tree_in_reference_cycles() -> None:
    """Workers pause the garbage collector per file (kmigrate.run.runner.run_job): that is
    only sound while reference counting frees each file's tree, sites and reports.
    (The stdlib's ast.literal_eval and ast.dump leave small cycles of their own helper
    closures, which hold no node.)"""
    import gc
    from pathlib import Path

    samples = sorted((Path(__file__).resolve().parents[2] / "samples").rglob("*.py"))
    assert samples
    texts = [(path.read_text(encoding="utf-8"), path.name) for path in samples]
    # Calls with no automatic rewrite: their plans come back as ManualPortError values,
    # whose tracebacks would hold the frames and so the tree.
    texts.append((_MANUAL_PORTS, "manual_ports.py"))
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for text, name in texts:
            scan_text(text, path=name)
        gc.collect()
        kept = {type(o).__name__ for o in gc.garbage if not isinstance(o, (tuple, dict))}
        kept -= {"function", "cell"}
        assert not kept, f"analysis left these in reference cycles: {sorted(kept)}"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
