"""KM3xx random rules: plans, manual reasons and rewrites, without any ML framework.

The numerical side (distributions, seeds, saving on three backends) is in
tests/rules/test_random_backends.py.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from kmigrate.engine.model import CallEdit, ClassEdit, ReplaceNode
from kmigrate.rules import km3_random
from kmigrate.rules.km3_random._table import BACKEND_RANDOM, KERAS_RANDOM, NUMPY_RANDOM, TF_RANDOM
from kmigrate.run.runner import scan_text

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "vae_sampling" / "models.py"


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def layer(call_body: str, init: str = "", imports: str = "") -> str:
    """A module with one layer whose ``call`` body is ``call_body``."""
    head = "import keras\nimport numpy as np\nimport tensorflow as tf\nfrom keras import ops\n"
    init_block = ""
    if init:
        init_block = (
            "    def __init__(self, **kwargs):\n        super().__init__(**kwargs)\n"
            + textwrap.indent(code(init), " " * 8)
            + "\n"
        )
    body = textwrap.indent(code(call_body), " " * 8)
    return (
        f"{head}{imports}\n\nclass Noise(keras.layers.Layer):\n{init_block}"
        f"    def call(self, x):\n{body}"
    )


def found(text: str, rule: str = "KM3") -> list:
    return [f for f in scan_text(text, select=[rule]) if f.rule.startswith(rule)]


def only(text: str, rule: str = "KM3"):
    result = found(text, rule)
    assert len(result) == 1, [(f.rule, f.message) for f in result]
    return result[0]


def call_edit(finding) -> CallEdit | ReplaceNode:
    return finding.fix.edits[0]


def rewritten_call(text: str, rule: str = "KM3") -> str:
    """The ``return`` expression of ``call`` after applying the rule."""
    new = apply_to_text(text, select=[rule])
    ast.parse(new)
    assert apply_to_text(new, select=[rule]) == new, "not idempotent"
    return next(line.strip() for line in new.splitlines() if line.strip().startswith("return "))


# -- the table ------------------------------------------------------------------------


@pytest.mark.parametrize("table", [TF_RANDOM, BACKEND_RANDOM, NUMPY_RANDOM])
def test_table_targets_and_renames_exist_in_keras(table) -> None:
    for symbol, mapping in table.items():
        assert mapping.target in KERAS_RANDOM, symbol
        keras_params = set(KERAS_RANDOM[mapping.target])
        for _, new in mapping.renames:
            assert new in keras_params, (symbol, new)
        for param, _ in mapping.implied:
            assert param in keras_params, (symbol, param)
        assert len(set(mapping.params)) == len(mapping.params), symbol


def test_tf_table_has_seed_and_name_everywhere() -> None:
    for symbol, mapping in TF_RANDOM.items():
        assert "seed" in mapping.params and "name" in mapping.params, symbol


# -- KM301: mappings --------------------------------------------------------------------


def test_normal_keeps_positional_arguments_and_adds_the_generator() -> None:
    finding = only(layer("return x + tf.random.normal(ops.shape(x), 0.0, 0.1)"))
    assert finding.rule == "KM301" and finding.fixable
    edit, class_edit = finding.fix.edits
    assert edit.callee == "keras.random.normal"
    assert [(a.source, a.keyword, a.value) for a in edit.args] == [
        (0, None, None),
        (1, None, None),
        (2, None, None),
        (None, "seed", "self.seed_generator"),
    ]
    assert isinstance(class_edit, ClassEdit)
    assert class_edit.init_params == (("seed", "None"),)
    assert class_edit.config_items == (("seed", "self.seed"),)
    assert rewritten_call(layer("return x + tf.random.normal(ops.shape(x), 0.0, 0.1)")) == (
        "return x + keras.random.normal(ops.shape(x), 0.0, 0.1, seed=self.seed_generator)"
    )


def test_name_is_dropped_and_dtype_translated() -> None:
    text = layer('return tf.random.normal((2,), dtype=tf.float16, name="eps")')
    assert rewritten_call(text) == (
        'return keras.random.normal((2,), dtype="float16", seed=self.seed_generator)'
    )


def test_string_dtype_is_kept_as_written() -> None:
    text = layer("return tf.random.truncated_normal((2,), stddev=2.0, dtype='float32')")
    assert rewritten_call(text) == (
        "return keras.random.truncated_normal((2,), stddev=2.0, dtype='float32', "
        "seed=self.seed_generator)"
    )


def test_integer_uniform_becomes_randint_with_explicit_minval() -> None:
    text = layer("return tf.random.uniform((3,), maxval=10, dtype=tf.int32)")
    assert rewritten_call(text) == (
        'return keras.random.randint((3,), minval=0, maxval=10, dtype="int32", '
        "seed=self.seed_generator)"
    )


def test_integer_uniform_without_maxval_is_manual() -> None:
    finding = only(layer("return tf.random.uniform((3,), dtype=tf.int64)"))
    assert not finding.fixable and "maxval" in finding.message


def test_uniform_maxval_none_means_default() -> None:
    text = layer("return tf.random.uniform((3,), -1.0, None)")
    assert rewritten_call(text) == (
        "return keras.random.uniform((3,), -1.0, seed=self.seed_generator)"
    )


def test_categorical_keeps_tensorflow_int64_default() -> None:
    text = layer("return tf.random.categorical(x, num_samples=5)")
    assert rewritten_call(text) == (
        'return keras.random.categorical(x, num_samples=5, dtype="int64", seed=self.seed_generator)'
    )
    text = layer("return tf.random.categorical(x, 5, dtype=tf.int32)")
    assert rewritten_call(text) == (
        'return keras.random.categorical(x, 5, dtype="int32", seed=self.seed_generator)'
    )


def test_v1_multinomial_output_dtype_is_dtype() -> None:
    text = layer("return tf.compat.v1.multinomial(x, 2, output_dtype=tf.int32)")
    assert rewritten_call(text) == (
        'return keras.random.categorical(x, 2, dtype="int32", seed=self.seed_generator)'
    )


def test_dropout_renames_and_keeps_noise_shape() -> None:
    text = layer("return tf.nn.dropout(x, 0.3, noise_shape=[None, 1])")
    assert rewritten_call(text) == (
        "return keras.random.dropout(x, 0.3, noise_shape=[None, 1], seed=self.seed_generator)"
    )
    text = layer("return tf.nn.dropout(x=x, rate=0.3)")
    assert rewritten_call(text) == (
        "return keras.random.dropout(inputs=x, rate=0.3, seed=self.seed_generator)"
    )


def test_v1_dropout_keep_prob_becomes_rate() -> None:
    text = layer("return tf.compat.v1.nn.dropout(x, keep_prob=self.keep + 0.1)")
    assert rewritten_call(text) == (
        "return keras.random.dropout(x, rate=1 - (self.keep + 0.1), seed=self.seed_generator)"
    )
    both = only(layer("return tf.compat.v1.nn.dropout(x, 0.9, rate=0.1)"))
    assert not both.fixable


def test_gamma_with_scalar_alpha_is_rewritten() -> None:
    text = layer("return tf.random.gamma([4], 2.0)")
    assert rewritten_call(text) == ("return keras.random.gamma([4], 2.0, seed=self.seed_generator)")


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        ("tf.random.gamma([4], alpha=[1.0, 2.0])", "alpha"),
        ("tf.random.gamma([4], self.alpha)", "alpha"),
        ("tf.random.gamma([4], 2.0, beta=3.0)", "beta"),
    ],
)
def test_gamma_that_is_not_exact_is_manual(call: str, reason: str) -> None:
    finding = only(layer(f"return {call}"))
    assert not finding.fixable and reason in finding.message


def test_shuffle_of_a_name_keeps_rows_together() -> None:
    text = layer("return tf.random.shuffle(x, seed=5)")
    assert rewritten_call(text) == (
        "return ops.take(x, ops.argsort(keras.random.uniform(ops.shape(x)[:1], "
        "seed=self.seed_generator)), axis=0)"
    )
    assert isinstance(call_edit(only(text)), ReplaceNode)


@pytest.mark.parametrize("value", ["x * 2", "tf.range(10)"])
def test_shuffle_of_an_expression_is_manual(value: str) -> None:
    finding = only(layer(f"return tf.random.shuffle({value})"))
    assert not finding.fixable and "JAX" in finding.message


def test_aliases_resolve() -> None:
    text = code(
        """
        import keras
        import tensorflow as tfx
        from tensorflow import random as tfr


        class Noise(keras.layers.Layer):
            def call(self, x):
                a = tfx.random.normal((2,)) + tfr.uniform((2,))
                return a + tfx.compat.v1.random_normal((2,))
        """
    )
    assert [f.symbol for f in found(text)] == [
        "tf.random.normal",
        "tf.random.uniform",
        "tf.compat.v1.random_normal",
    ]
    new = apply_to_text(text, select=["KM3"])
    assert "tfx" not in new and "tfr" not in new
    assert new.count("SeedGenerator(") == 1


def test_star_args_are_manual() -> None:
    finding = only(layer("return tf.random.normal(*self.args)"))
    assert not finding.fixable and "*args" in finding.message


# -- KM301: seeds and owners -------------------------------------------------------------


def test_int_seed_becomes_the_layers_default_seed() -> None:
    text = layer("return tf.random.normal((2,), seed=42) + tf.random.uniform((2,))")
    new = apply_to_text(text, select=["KM3"])
    assert "def __init__(self, seed=42, **kwargs):" in new
    assert new.count("keras.random.SeedGenerator(seed)") == 1
    assert "seed=42)" not in new.split("def call")[1]


def test_self_seed_is_accepted() -> None:
    text = code(
        """
        import keras
        import tensorflow as tf


        class Noise(keras.layers.Layer):
            def __init__(self, seed=None, **kwargs):
                super().__init__(**kwargs)
                self.seed = seed

            def call(self, x):
                return tf.random.normal((2,), seed=self.seed)
        """
    )
    new = apply_to_text(text, select=["KM3"])
    assert new.count("self.seed = seed") == 1
    assert "def __init__(self, seed=None, **kwargs):" in new
    assert "keras.random.normal((2,), seed=self.seed_generator)" in new


@pytest.mark.parametrize("seed", ["tf.constant(3)", "[1, 2]", "seed_value", "self._seed", "True"])
def test_non_int_seed_is_manual(seed: str) -> None:
    finding = only(layer(f"return tf.random.normal((2,), seed={seed})"))
    assert not finding.fixable and "not a Python int" in finding.message


def test_existing_seed_generator_is_reused() -> None:
    text = layer(
        "return tf.random.normal((2,)) * tf.nn.dropout(x, 0.5)",
        init="self.noise_rng = keras.random.SeedGenerator(3)",
    )
    findings = found(text)
    assert all(len(f.fix.edits) == 1 for f in findings)  # no ClassEdit
    new = apply_to_text(text, select=["KM3"])
    assert new.count("SeedGenerator(") == 1
    assert "seed=self.noise_rng" in new and "self.seed_generator" not in new


def test_generator_of_a_base_class_in_the_module_is_reused() -> None:
    text = code(
        """
        import keras
        import tensorflow as tf


        class Base(keras.layers.Layer):
            def __init__(self, seed=None, **kwargs):
                super().__init__(**kwargs)
                self.rng = keras.random.SeedGenerator(seed)


        class Noise(Base):
            def call(self, x):
                return x + tf.random.normal(tf.shape(x))
        """
    )
    new = apply_to_text(text, select=["KM3"])
    assert new.count("SeedGenerator(") == 1 and "seed=self.rng" in new


def test_a_tf_random_generator_is_not_reused() -> None:
    text = layer(
        "return tf.random.normal((2,))", init="self.rng = tf.random.Generator.from_seed(1)"
    )
    new = apply_to_text(text, select=["KM301"])
    assert "seed=self.seed_generator" in new
    assert any(f.rule == "KM306" for f in found(new))


def test_seed_generator_attribute_taken_by_something_else_is_manual() -> None:
    text = layer("return tf.random.normal((2,))", init="self.seed_generator = object()")
    assert not only(text).fixable


def test_self_seed_not_from_init_argument_is_manual() -> None:
    text = layer("return tf.random.normal((2,))", init="self.seed = 1234")
    finding = only(text)
    assert not finding.fixable and "self.seed = 1234" in finding.message


def test_several_draws_share_one_generator() -> None:
    text = layer(
        """
        a = tf.random.normal((2,))
        b = tf.random.uniform((2,))
        c = tf.nn.dropout(x, 0.2)
        return a + b + c
        """
    )
    new = apply_to_text(text, select=["KM3"])
    assert new.count("SeedGenerator(") == 1
    assert new.count("seed=self.seed_generator") == 3
    assert new.count("self.seed = seed") == 1
    assert "tf." not in new


def test_get_config_gets_the_seed() -> None:
    text = code(
        """
        import keras
        import tensorflow as tf


        class Noise(keras.layers.Layer):
            def __init__(self, stddev, **kwargs):
                super().__init__(**kwargs)
                self.stddev = stddev

            def call(self, x):
                return x + tf.random.normal(tf.shape(x), stddev=self.stddev)

            def get_config(self):
                config = super().get_config()
                config["stddev"] = self.stddev
                return config
        """
    )
    new = apply_to_text(text, select=["KM3"])
    assert "def __init__(self, stddev, seed=None, **kwargs):" in new
    assert 'return {**config, "seed": self.seed}' in new


@pytest.mark.parametrize(
    ("snippet", "reason"),
    [
        (
            """
            def noise(x):
                return x + tf.random.normal(tf.shape(x))

            layer = keras.layers.Lambda(noise)
            """,
            "outside any layer",
        ),
        (
            """
            class Noise(keras.layers.Layer):
                def call(self, x):
                    def one(row):
                        return row + tf.random.normal(tf.shape(row))
                    return tf.map_fn(one, x)
            """,
            "nested",
        ),
        (
            """
            class Noise(keras.layers.Layer):
                def call(self, x):
                    return tf.map_fn(lambda row: row + tf.random.normal((3,)), x)
            """,
            "nested",
        ),
        (
            """
            class Noise(keras.layers.Layer):
                @staticmethod
                def draw(shape):
                    return tf.random.normal(shape)
            """,
            "no `self`",
        ),
        (
            """
            class NoisyLoss(keras.losses.Loss):
                def call(self, y_true, y_pred):
                    return tf.random.normal(()) * 0.0 + y_pred
            """,
            "not from a Layer",
        ),
        (
            """
            class Noise(keras.layers.Layer):
                def __init__(self, **kwargs):
                    self.eps = tf.random.normal((3,))
                    super().__init__(**kwargs)
            """,
            "before super().__init__()",
        ),
    ],
)
def test_draws_without_an_owner_are_manual(snippet: str, reason: str) -> None:
    text = "import keras\nimport tensorflow as tf\n\n\n" + code(snippet)
    finding = only(text)
    assert finding.rule == "KM301" and not finding.fixable
    assert reason in finding.message, finding.message


def test_draw_in_init_after_super_is_rewritten() -> None:
    text = code(
        """
        import keras
        import tensorflow as tf


        class Noise(keras.layers.Layer):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.eps = tf.random.normal((3,))
        """
    )
    new = apply_to_text(text, select=["KM3"])
    lines = [line.strip() for line in new.splitlines()]
    assert lines.index("self.seed_generator = keras.random.SeedGenerator(seed)") < lines.index(
        "self.eps = keras.random.normal((3,), seed=self.seed_generator)"
    )


def test_tf_random_in_a_data_pipeline_is_not_reported() -> None:
    text = code(
        """
        import tensorflow as tf

        def augment(image):
            return image + tf.random.normal(tf.shape(image))

        dataset = tf.data.Dataset.range(4).map(augment)
        """
    )
    assert found(text) == []


# -- KM302: Keras 2 backend -----------------------------------------------------------


def test_backend_random_in_layer_uses_the_generator() -> None:
    text = code(
        """
        import keras
        from tensorflow.keras import backend as K


        class Noise(keras.layers.Layer):
            def call(self, x):
                return K.random_normal((2,), 0.0, 1.0, "float32") + K.random_bernoulli((2,))
        """
    )
    line = rewritten_call(text)
    assert line == (
        'return keras.random.normal((2,), 0.0, 1.0, "float32", seed=self.seed_generator) + '
        "keras.random.binomial((2,), counts=1, probabilities=0.0, seed=self.seed_generator)"
    )


def test_backend_random_outside_layers() -> None:
    text = code(
        """
        from tensorflow.keras import backend as K

        x = K.random_uniform((4, 2), maxval=3.0)
        y = K.dropout(x, level=0.5)
        """
    )
    new = apply_to_text(text, select=["KM302"])
    assert "x = keras.random.uniform((4, 2), maxval=3.0)" in new
    assert "y = keras.random.dropout(x, rate=0.5)" in new
    assert "backend" not in new


def test_backend_random_in_data_pipeline_is_manual() -> None:
    text = code(
        """
        import tensorflow as tf
        from tensorflow.keras import backend as K

        def augment(image):
            return image + K.random_normal(tf.shape(image))

        dataset = tf.data.Dataset.range(4).map(augment)
        """
    )
    finding = only(text)
    assert finding.rule == "KM302" and not finding.fixable and "tf.random" in finding.message


def test_backend_random_variable_is_manual() -> None:
    text = "from tensorflow.keras import backend as K\nw = K.random_normal_variable((2, 2), 0, 1)\n"
    finding = only(text)
    assert not finding.fixable and "add_weight" in finding.message


# -- KM303: numpy in call -----------------------------------------------------------


def test_numpy_rand_and_randn_take_dimensions() -> None:
    assert rewritten_call(layer("return x + np.random.randn(4, 2)")) == (
        "return x + keras.random.normal((4, 2), seed=self.seed_generator)"
    )
    assert rewritten_call(layer("return x * np.random.rand(3)")) == (
        "return x * keras.random.uniform((3,), seed=self.seed_generator)"
    )


def test_numpy_without_size_draws_a_scalar() -> None:
    assert rewritten_call(layer("return x * np.random.uniform(0.5, 1.5)")) == (
        "return x * keras.random.uniform(shape=(), minval=0.5, maxval=1.5, "
        "seed=self.seed_generator)"
    )
    finding = only(layer("return x * np.random.normal(self.means)"))
    assert not finding.fixable and "shape" in finding.message


def test_numpy_outside_call_is_not_reported() -> None:
    text = code(
        """
        import keras
        import numpy as np


        class Noise(keras.layers.Layer):
            def build(self, input_shape):
                self.start = np.random.normal(size=input_shape[1:])

        x = np.random.rand(32, 4)
        """
    )
    assert found(text) == []


# -- KM304 / KM305 / KM306 / KM307 ------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        ("tf.random.stateless_uniform((2,), seed=[1, 2])", "keras.random.uniform(..."),
        ("tf.random.poisson((2,), 3.0)", "Poisson"),
        ("tf.random.experimental.stateless_split([1, 2])", "SeedGenerator"),
        ("tf.random.log_uniform_candidate_sampler(x, 1, 5, True, 10)", "candidate"),
    ],
)
def test_no_keras_equivalent_in_layers(call: str, reason: str) -> None:
    finding = only(layer(f"return {call}"))
    assert finding.rule == "KM304" and not finding.fixable and reason in finding.message


@pytest.mark.parametrize(
    "call",
    [
        "tf.random.set_seed(7)",
        "tf.random.set_seed(seed=7)",
        "tf.compat.v1.set_random_seed(7)",
        "tf.compat.v1.random.set_random_seed(args.seed)",
    ],
)
def test_set_seed_becomes_keras_set_random_seed(call: str) -> None:
    text = f"import tensorflow as tf\n\n{call}\n"
    new = apply_to_text(text, select=["KM305"])
    assert new.startswith("import keras\n") and "tensorflow" not in new
    assert "keras.utils.set_random_seed(" in new


def test_generator_and_global_state_outside_model_are_info() -> None:
    text = code(
        """
        import tensorflow as tf

        def train(model, steps):
            rng = tf.random.Generator.from_seed(1)
            for _ in range(steps):
                with tf.GradientTape() as tape:
                    x = tf.random.normal((8, 4))
                    loss = model(x)
        """
    )
    findings = found(text)
    assert [(f.rule, f.severity.value, f.context.value) for f in findings] == [
        ("KM306", "info", "training-loop"),
        ("KM307", "info", "training-loop"),
    ]
    assert not any(f.fixable for f in findings)
    assert apply_to_text(text, select=["KM3"]) == text


def test_get_seed_is_not_a_draw() -> None:
    assert found("import tensorflow as tf\na, b = tf.compat.v1.random.get_seed(1)\n") == []


# -- the sample ------------------------------------------------------------------------


def test_vae_sample_gets_one_generator_per_layer_and_no_tf_random() -> None:
    text = SAMPLE.read_text()
    scanned = found(text)
    assert {f.symbol for f in scanned if f.fixable} == {
        "tf.random.normal",
        "tf.random.uniform",
        "tf.nn.dropout",
    }
    new = apply_to_text(text, select=["KM3"])
    assert "tf.random" not in new and "tf.nn.dropout" not in new
    classes = {
        n.name: ast.unparse(n) for n in ast.walk(ast.parse(new)) if isinstance(n, ast.ClassDef)
    }
    assert classes["Sampling"].count("SeedGenerator(") == 1
    assert classes["NoisyDropout"].count("SeedGenerator(") == 1
    assert classes["NoisyDropout"].count("seed=self.seed_generator") == 2
    assert "SeedGenerator" not in classes["KLDivergence"]
    assert apply_to_text(new, select=["KM3"]) == new
    assert [f.rule for f in found(new) if f.fixable] == []


def test_manual_findings_say_why() -> None:
    findings = found(
        layer("return tf.random.gamma([2], 1.0, beta=2.0) + tf.random.poisson((2,), 1.0)")
    )
    assert sorted(f.symbol for f in findings) == ["tf.random.gamma", "tf.random.poisson"]
    for finding in findings:
        assert not finding.fixable
        assert ": " in finding.message and len(finding.message) > 60


@pytest.mark.parametrize(
    "path", sorted(Path(km3_random.__file__).parent.glob("*.py")), ids=lambda p: p.name
)
def test_module_has_no_framework_imports(path: Path) -> None:
    tree = ast.parse(path.read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported.isdisjoint({"tensorflow", "keras", "jax", "torch", "numpy", "libcst"})
