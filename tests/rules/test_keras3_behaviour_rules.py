"""Keras 2 -> 3 behaviour changes that used to pass silently (issue 18): KM515-KM521."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def found(text: str, rule: str):
    return [f for f in scan_text(_code(text), select=[rule]) if f.rule == rule]


# -- KM515 training read from **kwargs ----------------------------------------------------

STANDALONE_KERAS2_LAYER = """
from keras import backend as K
from keras.engine import Layer


class Attention(Layer):
    def call(self, x, **kwargs):
        training = kwargs.get("training", None)
        mask = kwargs["training"]
        return K.in_train_phase(x * 0.5, x, training=training), mask
"""


def test_training_from_kwargs_under_a_standalone_keras2_base():
    findings = found(STANDALONE_KERAS2_LAYER, "KM515")
    assert [f.span.line for f in findings] == [7, 8]
    assert all("add `training=None`" in f.message for f in findings)


def test_training_named_or_not_read_is_fine():
    text = """
    import keras

    class A(keras.layers.Layer):
        def call(self, x, training=None, **kwargs):
            return x if kwargs.get("training") is None else x

    class B(keras.layers.Layer):
        def call(self, x, **kwargs):
            return self.inner(x, **kwargs)
    """
    assert found(text, "KM515") == []


# -- KM516 / KM517 / KM518 layer structure ---------------------------------------------------


def test_attribute_before_super_init_names_every_early_object():
    text = """
    import tensorflow as tf

    class Block(tf.keras.layers.Layer):
        def __init__(self, units, **kwargs):
            self.units = units
            self.dense = tf.keras.layers.Dense(units)
            self.w = tf.Variable(tf.zeros((units,)))  # not a torch module: fine
            self.inner = InnerBlock()
            super(Block, self).__init__(**kwargs)
    """
    (finding,) = found(text, "KM516")
    assert "`self.dense`, `self.inner`" in finding.message
    assert "self.w" not in finding.message
    assert finding.span.line == 6


KM516_CASES = {
    # a layer built before super().__init__() moves too: its constructor is pure
    "moved": ("self.dense = keras.layers.Dense(units)", "keras.layers.Layer", None),
    "name set by Layer.__init__": (
        "self.dense = keras.layers.Dense(units)\n            self.trainable = False",
        "keras.layers.Layer",
        "`Layer.__init__` sets `self.trainable` too",
    ),
    "a base whose __init__ is not known": (
        "self.dense = keras.layers.Dense(units)",
        "keras.Model",
        "base class's `__init__`",
    ),
    "kwargs consumed first": (
        "self.dense = keras.layers.Dense(units)\n            self.rate = kwargs.pop('rate')",
        "keras.layers.Layer",
        "calls a function",
    ),
    "arguments read a local set before": (
        "self.dense = keras.layers.Dense(units)\n            name = 'block'",
        "keras.layers.Layer",
        "its arguments depend on the assignments",
    ),
}


@pytest.mark.parametrize("case", sorted(KM516_CASES))
def test_super_init_moves_only_when_nothing_can_differ(case):
    body, base, refusal = KM516_CASES[case]
    text = f"""
    import keras

    class Block({base}):
        def __init__(self, units, **kwargs):
            {body}
            super().__init__(name=locals().get("name"), **kwargs)
    """
    if "name = " not in body:
        text = text.replace('name=locals().get("name"), ', "")
    else:
        text = text.replace('locals().get("name")', "name")
    (finding,) = found(text, "KM516")
    if refusal is None:
        assert finding.fix is not None and "moved first" in finding.message
        assert "    super().__init__(**kwargs)\n        self.dense" in apply_to_text(_code(text))
    else:
        assert finding.fix is None and refusal in finding.message, finding.message


def test_layer_created_in_a_function_nested_in_call():
    text = """
    from keras.layers import Layer, Dense

    class Head(Layer):
        def call(self, x):
            def project(y):
                return Dense(4)(y)
            return project(x)
    """
    (finding,) = found(text, "KM517")
    assert "`Dense`" in finding.message


def test_in_place_update_spares_counters_and_lists():
    text = """
    import keras

    class Att(keras.layers.Layer):
        def call(self, e, mask):
            outs = []
            outs += [e]
            for i in range(2):
                i += 1
            x, n = e, 1
            n += 1
            e *= mask
            total = 0
            total += 1
            return e
    """
    (finding,) = found(text, "KM518")
    assert finding.span.line == 11 and "`e = e * (...)`" in finding.message


def test_in_place_update_is_rewritten_only_where_every_binding_is_a_number_or_a_tensor():
    text = """
    import keras
    from tensorflow.keras import backend as K

    class Att(keras.layers.Layer):
        def call(self, e, mask):
            b, xb = 0., 0.
            b = K.reshape(self.b, (1, -1))
            b /= K.sum(e) + xb
            parts = keras.ops.split(e, 2)
            parts += [e]
            out = project(e)
            out *= 2
            e *= mask
            def step(y):
                y += 1
                return y
            return b + out + step(e)
    """
    fixes = {f.span.line: f.fix is not None for f in found(text, "KM518")}
    # b: a number then a tensor (fixed); parts: a list (from split), out: a project
    # function's result and e, y: parameters (reported, not rewritten)
    assert fixes == {8: True, 10: False, 12: False, 13: False, 15: False}, fixes
    assert "b = b / (K.sum(e) + xb)" in apply_to_text(textwrap.dedent(text), select=["KM518"])


# -- KM519 custom object under a built-in name ---------------------------------------------


def test_update_registration_and_string_uses_are_fixed_in_the_module():
    text = """
    import keras
    from keras.utils import get_custom_objects


    def gelu(x):
        return x


    get_custom_objects().update({"gelu": gelu, "my_act": gelu})


    def build():
        x = keras.Input((4,))
        y = keras.layers.Dense(4, activation="gelu")(x)
        y = keras.layers.Activation("gelu")(y)
        return keras.Model(x, keras.layers.Dense(2, activation="relu")(y))
    """
    findings = found(text, "KM519")
    assert len(findings) == 3  # the registration and the two uses
    assert "keras.activations.gelu" in findings[0].message
    out = apply_to_text(_code(text), select=["KM519"])
    assert "activation=gelu)" in out and "Activation(gelu)" in out
    assert 'activation="relu"' in out


def test_string_use_before_the_function_exists_is_not_rewritten():
    text = """
    import keras

    keras.utils.get_custom_objects()["swish"] = lambda x: x
    dense = keras.layers.Dense(4, activation="swish")
    """
    findings = found(text, "KM519")
    assert len(findings) == 2 and not any(f.fixable for f in findings)


def test_loss_alias_shadowed():
    text = """
    import keras

    def mse(y, p):
        return keras.ops.mean(keras.ops.abs(y - p))

    keras.utils.get_custom_objects()["mse"] = mse

    def train(model):
        model.compile(optimizer="sgd", loss="mse")
    """
    out = apply_to_text(_code(text), select=["KM519"])
    assert "loss=mse)" in out


# -- KM520 add_loss on a functional model, KM521 K.is_tensor ----------------------------------


def test_add_loss_on_functional_model_in_a_builder():
    text = """
    from keras.layers import Input, Dense
    from keras.models import Model
    from keras import backend as K

    def build_vae():
        x = Input((4,))
        z = Dense(2)(x)
        vae = Model(inputs=x, outputs=z)
        vae.add_loss(K.mean(z))
        return vae
    """
    (finding,) = found(text, "KM520")
    assert "functional model" in finding.message


def test_add_loss_on_a_subclassed_model_is_fine():
    text = """
    import keras

    def attach(model: keras.Model, z):
        model.add_loss(z)
    """
    assert found(text, "KM520") == []


def test_k_is_tensor_through_standalone_keras():
    text = "from keras import backend as K\nok = K.is_tensor(1)\n"
    (finding,) = found(text, "KM521")
    assert "keras.KerasTensor" in finding.message


def test_training_fix_with_star_args_and_two_reads():
    text = """
    import keras


    class Block(keras.layers.Layer):
        def call(self, x, *args, **kwargs):
            def noisy(y):
                return self.drop(y, training=kwargs.get("training"))

            return noisy(x) if kwargs.get("training", None) else x
    """
    out = apply_to_text(_code(text), select=["KM515"])
    assert "def call(self, x, *args, training=None, **kwargs):" in out
    assert "training=training)" in out and "if training else x" in out
    assert all(f.fixable for f in found(text, "KM515"))


def test_training_reads_stay_manual_when_one_is_not_exact():
    text = """
    import keras


    class Block(keras.layers.Layer):
        def call(self, x, **kwargs):
            a = kwargs.get("training")
            b = kwargs.get("training", False)
            return x if a or b else -x
    """
    findings = found(text, "KM515")
    assert len(findings) == 2 and not any(f.fixable for f in findings)


# -- KM526 read-only weight properties, KM527 node API --------------------------------------


def test_weight_property_through_a_local_base_and_an_own_property():
    text = """
    from keras.layers import Conv2D, Embedding

    class Base(Conv2D):
        pass

    class Tied(Base):
        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(3, 3, 1, 1))
            self.bias = None

    class Owned(Embedding):
        @property
        def embeddings(self):
            return self._table

        @embeddings.setter
        def embeddings(self, value):
            self._table = value

        def build(self, input_shape=None):
            self.embeddings = self.add_weight(shape=(4, 2))
    """
    (finding,) = found(text, "KM526")
    assert finding.span.line == 8 and "subclass of `Conv2D`" in finding.message
    assert "`self._kernel = ...`" in finding.message


def test_node_api_rewrites_only_node_zero():
    text = """
    def tensors(layer, i):
        return layer.get_output_at(i), layer.get_output_at(0), layer.get_input_shape_at(0)
    """
    findings = found(text, "KM527")
    assert [f.fix is not None for f in findings] == [False, True, False]
    assert "layer.get_output_at(i), layer.output, layer.get_input_shape_at(0)" in apply_to_text(
        _code(text)
    )
