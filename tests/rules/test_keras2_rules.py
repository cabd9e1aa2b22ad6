"""KM5xx edge cases beyond the rules' own examples."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def found(text: str, rule: str):
    """Findings of the rules whose id starts with ``rule``."""
    code = textwrap.dedent(text).lstrip("\n")
    return [f for f in scan_text(code, select=[rule]) if f.rule.startswith(rule)]


def fixed(text: str, rule: str) -> str:
    """``text`` after ``apply`` with ``rule``; applying again must change nothing."""
    once = apply_to_text(textwrap.dedent(text).lstrip("\n"), select=[rule])
    assert apply_to_text(once, select=[rule]) == once, "not idempotent"
    return once


LAYER = """
import tensorflow as tf

class L(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.w = {call}
"""


def _layer(call: str) -> str:
    return LAYER.format(call=call)


# -- KM501 add_weight ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            'self.add_weight("w", (2, 3), "float32", "zeros")',
            'self.add_weight(name="w", shape=(2, 3), dtype="float32", initializer="zeros")',
        ),
        (
            "self.add_weight(weight_name, shape=(2,))",
            "self.add_weight(name=weight_name, shape=(2,))",
        ),
        (
            'self.add_weight(name="w", shape=(), trainable=None, experimental_autocast=False)',
            'self.add_weight(name="w", shape=(), trainable=True, autocast=False)',
        ),
        (
            'self.add_weight(name="w", synchronization=tf.VariableSynchronization.AUTO, shape=())',
            'self.add_weight(name="w", shape=())',
        ),
        (
            'self.add_weight(f"w_{i}", (4,), aggregation=tf.VariableAggregation.MEAN)',
            'self.add_weight(name=f"w_{i}", shape=(4,), aggregation="mean")',
        ),
    ],
)
def test_add_weight_keyword_rewrites(call: str, expected: str) -> None:
    assert fixed(_layer(call), "KM501") == _layer(expected).lstrip("\n")


@pytest.mark.parametrize(
    "call",
    [
        'self.add_weight((2, 3), "zeros", "float32")',  # Keras 3 positional order
        'self.add_weight(shape=(2,), name="w")',
        "self.add_weight(shape, init, trainable=False)",
    ],
)
def test_keras3_add_weight_is_clean(call: str) -> None:
    assert found(_layer(call), "KM501") == []


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (
            'self.add_weight("w", (2,), synchronization=tf.VariableSynchronization.ON_READ)',
            "synchronization",
        ),
        ('self.add_weight("w", (2,), caching_device="/cpu:0")', "caching_device"),
        ("self.add_weight(*spec)", None),
    ],
)
def test_add_weight_manual_cases(call: str, reason: str | None) -> None:
    findings = found(_layer(call), "KM501")
    if reason is None:
        assert findings == []  # *args: nothing can be said
        return
    assert len(findings) == 1 and not findings[0].fixable and reason in findings[0].message


# -- KM502 / KM503 / KM504 optimizers -------------------------------------------------------


def test_lr_on_experimental_and_tf_keras_namespaces() -> None:
    before = """
        import tensorflow as tf
        import tf_keras

        a = tf.keras.optimizers.experimental.SGD(lr=0.1, momentum=0.9)
        b = tf_keras.optimizers.RMSprop(lr=1e-3)
        """
    after = fixed(before, "KM502")
    assert "SGD(learning_rate=0.1, momentum=0.9)" in after
    assert "RMSprop(learning_rate=1e-3)" in after


def test_legacy_positional_arguments_past_the_shared_prefix_become_keywords() -> None:
    before = """
        import tensorflow as tf

        a = tf.keras.optimizers.legacy.Adam(1e-3, 0.9, 0.99, 1e-7, True, "adam")
        b = tf.keras.optimizers.legacy.Ftrl(0.1, -0.5, 0.1, 0.0, 0.0, "ftrl", 0.01)
        c = tf.keras.optimizers.legacy.RMSprop(lr=0.01, decay=0)
        """
    after = fixed(before, "KM504")
    assert 'keras.optimizers.Adam(1e-3, 0.9, 0.99, 1e-7, True, name="adam")' in after
    assert (
        'keras.optimizers.Ftrl(0.1, -0.5, 0.1, 0.0, 0.0, name="ftrl", '
        "l2_shrinkage_regularization_strength=0.01)" in after
    )
    assert "keras.optimizers.RMSprop(learning_rate=0.01)" in after


def test_legacy_optimizer_with_decay_is_manual_with_the_schedule() -> None:
    (finding,) = found(
        """
        import tensorflow as tf

        opt = tf.keras.optimizers.legacy.SGD(0.1, decay=1e-3)
        """,
        "KM504",
    )
    assert not finding.fixable
    assert "InverseTimeDecay(0.1, decay_steps=1, decay_rate=1e-3)" in finding.message


def test_decay_rule_covers_legacy_and_current_optimizers() -> None:
    findings = found(
        """
        import tensorflow as tf
        from tensorflow import keras

        a = tf.keras.optimizers.legacy.Adam(lr=0.01, decay=1e-4)
        b = keras.optimizers.Adam(decay=1e-4)
        """,
        "KM503",
    )
    assert len(findings) == 2
    assert "InverseTimeDecay(0.01," in findings[0].message
    assert "InverseTimeDecay(0.001," in findings[1].message  # the Keras default rate


def test_non_optimizer_calls_are_not_touched() -> None:
    code = """
        import tensorflow as tf

        opt = tf.compat.v1.train.AdamOptimizer(learning_rate=0.1)
        schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 100, 0.9)
        """
    assert found(code, "KM50") == []


# -- KM505 generators ---------------------------------------------------------------------


def test_fit_generator_maps_every_positional_argument_by_name() -> None:
    before = """
        def train(model, gen, val, cbs):
            model.fit_generator(gen, 10, 2, 1, cbs, val, 5, 1, {0: 1.0}, 10, 1, False, True, 0)
        """
    after = fixed(before, "KM505")
    assert after.splitlines()[1] == (
        "    model.fit(gen, steps_per_epoch=10, epochs=2, verbose=1, callbacks=cbs, "
        "validation_data=val, validation_steps=5, validation_freq=1, class_weight={0: 1.0}, "
        "shuffle=True, initial_epoch=0)"
    )


def test_generator_keyword_becomes_the_first_positional() -> None:
    before = """
        def score(model, gen):
            return model.evaluate_generator(steps=3, generator=gen)
        """
    assert "model.evaluate(gen, steps=3, verbose=0)" in fixed(before, "KM505")


# -- KM506 / KM507 backend ------------------------------------------------------------------


def test_set_value_parenthesizes_complex_receivers_and_keeps_plain_ones() -> None:
    before = """
        from tensorflow.keras import backend as K

        def reset(layers, opt):
            K.set_value(layers[0].kernel, 0.0)
            K.set_value(opt.lr, 0.1)
            K.set_value(a if layers else b, 1.0)
        """
    after = fixed(before, "KM506")
    assert "layers[0].kernel.assign(0.0)" in after
    assert "opt.learning_rate.assign(0.1)" in after
    assert "(a if layers else b).assign(1.0)" in after


def test_backend_aliases_resolve() -> None:
    code = """
        import keras.backend as KB
        from tensorflow.python.keras import backend

        x = KB.eval(y)
        sess = backend.get_session()
        """
    rules = sorted(f.rule for f in found(code, "KM507"))
    assert rules == ["KM507", "KM507"]


# -- KM508 - KM514 ----------------------------------------------------------------------


def test_add_update_with_backend_update_unwraps() -> None:
    before = """
        import tensorflow as tf
        from tensorflow.keras import backend as K

        class Avg(tf.keras.layers.Layer):
            def call(self, x):
                self.add_update(K.moving_average_update(self.mean, x, 0.9))
                return x
        """
    # K.moving_average_update is not an assignment kmigrate recognises: manual.
    (finding,) = found(before, "KM508")
    assert not finding.fixable


def test_private_attribute_store_in_own_class_is_not_flagged() -> None:
    code = """
        class Registry:
            def __init__(self):
                self._layers = []

            def add(self, layer):
                self._layers.append(layer)
        """
    assert found(code, "KM509") == []


def test_compute_output_shape_variants() -> None:
    before = """
        import tensorflow as tf

        class A(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                return tf.TensorShape(input_shape)

        class B(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                return tf.TensorShape([input_shape[0]])

        def elsewhere():
            return tf.TensorShape([1, 2])

        def shapes(dataset):
            return dataset.map(lambda x: tf.ensure_shape(x, tf.TensorShape([1, 2])))
        """
    after = fixed(before, "KM510")
    assert "return tuple(input_shape)" in after
    assert "return (input_shape[0],)" in after
    # model code unless proven otherwise (a Keras module): the same tuple
    assert "def elsewhere():\n    return (1, 2)" in after
    # a tf.data map's shapes stay TensorFlow's
    assert "tf.ensure_shape(x, tf.TensorShape([1, 2]))" in after


def test_a_shape_used_as_a_shape_object_is_not_turned_into_a_tuple() -> None:
    """`tuple(x).as_list()` would raise: the shape's own uses decide (found in
    tensorflow/addons' Maxout, which `apply` used to break this way)."""
    before = """
        import tensorflow as tf

        class A(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                input_shape = tf.TensorShape(input_shape).as_list()
                input_shape[-1] = 3
                return tf.TensorShape(input_shape)

        class B(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                shape = tf.TensorShape(input_shape)
                if shape.rank is None:
                    return shape
                return shape[:-1]

        class C(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                shape = tf.TensorShape([input_shape[0], 4])
                if len(shape) > 1:
                    return shape
                return shape[0]

        class D(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                return helper(tf.TensorShape(input_shape))

        class E(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                if self.first:
                    out = tf.TensorShape([input_shape[0], 2])
                else:
                    out = tf.TensorShape([input_shape[0], 3])
                return out

        class F(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                grown = tf.TensorShape([input_shape[0]])
                grown += [4]
                return grown
        """
    after = fixed(before, "KM510")
    assert "input_shape = list(input_shape)\n" in after
    assert "return tuple(input_shape)" in after
    assert "shape = tf.TensorShape(input_shape)\n" in after  # B: .rank is a shape's
    assert "shape = (input_shape[0], 4)" in after  # C: returned, indexed, len()
    assert "return helper(tf.TensorShape(input_shape))" in after  # D: passed on
    assert "out = (input_shape[0], 2)" in after and "out = (input_shape[0], 3)" in after
    assert "grown = tf.TensorShape([input_shape[0]])" in after  # F: `+= [4]` fails on tuples
    messages = [f.message for f in found(before, "KM510") if not f.fixable]
    assert any("`shape` is used as a shape object" in m for m in messages)
    assert any("used beyond being returned" in m for m in messages)
    assert "as_list()" not in after.replace("tf.TensorShape(input_shape).as_list()", "")


def test_unknown_rank_shape_is_manual() -> None:
    (finding,) = found(
        """
        import tensorflow as tf

        class A(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                return tf.TensorShape(None)
        """,
        "KM510",
    )
    assert not finding.fixable


@pytest.mark.parametrize(
    ("code", "flagged"),
    [
        (
            """
            import tensorflow as tf

            class Base(tf.keras.layers.Layer):
                pass

            class Child(Base):
                def __init__(self, units):
                    super().__init__()
                    self.units = units
            """,
            True,
        ),
        (
            """
            import tensorflow as tf

            class OnlyKwargs(tf.keras.layers.Layer):
                def __init__(self, name=None, **kwargs):
                    super().__init__(name=name, **kwargs)
            """,
            False,
        ),
        (
            """
            class NotKeras:
                def __init__(self, units):
                    self.units = units
            """,
            False,
        ),
    ],
)
def test_custom_object_without_config(code: str, flagged: bool) -> None:
    assert bool(found(code, "KM513")) is flagged


def test_reset_states_on_metric_attribute_from_init() -> None:
    before = """
        from tensorflow import keras

        class Tracker(keras.Model):
            def __init__(self):
                super().__init__()
                self.loss_tracker = keras.metrics.Mean(name="loss")

            def reset(self):
                self.loss_tracker.reset_states()
        """
    assert "self.loss_tracker.reset_state()" in fixed(before, "KM514")


def test_lambda_with_positional_output_shape_is_clean() -> None:
    code = """
        from tensorflow import keras

        layer = keras.layers.Lambda(lambda t: t, (4,))
        """
    assert found(code, "KM511") == []


def test_plain_defaults_only_need_registration() -> None:
    code = """
        import tensorflow as tf

        class Heads(tf.keras.layers.Layer):
            def __init__(self, num_heads=4, mode="sum", **kwargs):
                super().__init__(**kwargs)
                self.num_heads = num_heads
        """
    (finding,) = found(code, "KM513")
    assert finding.severity.value == "info" and "register_keras_serializable" in finding.message
    registered = code.replace(
        "        class Heads",
        "        @tf.keras.utils.register_keras_serializable()\n        class Heads",
    )
    assert found(registered, "KM513") == []


def test_set_value_of_a_get_value_is_one_round(monkeypatch) -> None:
    """`K.set_value(lr, K.get_value(lr) * 0.1)` (the usual learning-rate decay): the
    assignment is written with the read already rewritten, so `apply` edits once."""
    from kmigrate.engine import apply as fix_loop
    from kmigrate.rules.context_spec import CONTEXT_SPEC
    from kmigrate.run.runner import ruleset_for, select_ids

    code = (
        "from tensorflow.keras import backend as K\n\n\n"
        "def decay(model):\n"
        "    K.set_value(model.optimizer.lr, K.get_value(model.optimizer.lr) * 0.1)\n"
    )
    analyses = []
    analyze = fix_loop.analyze_module_text
    monkeypatch.setattr(
        fix_loop, "analyze_module_text", lambda *a, **k: analyses.append(1) or analyze(*a, **k)
    )
    outcome = fix_loop.fix_module_text("m.py", code, ruleset_for(select_ids((), ())), CONTEXT_SPEC)
    assert (outcome.fixed, len(analyses)) == (2, 2)  # the first analysis and its check
    assert (
        "model.optimizer.learning_rate.assign("
        "ops.convert_to_numpy(model.optimizer.learning_rate) * 0.1)"
    ) in outcome.text
