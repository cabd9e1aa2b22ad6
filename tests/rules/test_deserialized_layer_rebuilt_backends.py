"""KM535 on the real backends: a wrapper of tensorflow/addons' ``WeightNormalization``
shape copies the layer it wraps with ``layers.deserialize(layers.serialize(layer))`` in
``build`` and builds the copy. It runs on Keras 2 (tf_keras); after ``kmigrate apply`` it
raises at that ``build`` on TensorFlow, JAX and PyTorch, as the finding says, and each of
the two ways the finding gives predicts what Keras 2 predicts on all three."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import (
    PREDICT_WORKER,
    assert_fails_on_every_backend,
    assert_matches_keras2,
    build_and_predict_worker,
)

pytestmark = pytest.mark.backends

COPY = """\
        layer_config = tf.keras.layers.serialize(self.layer)
        layer_config["config"]["trainable"] = False
        self.copy = tf.keras.layers.deserialize(layer_config)
        self.copy.build(input_shape)
"""
GUARDED = """\
        layer_config = tf.keras.layers.serialize(self.layer)
        layer_config["config"]["trainable"] = False
        self.copy = tf.keras.layers.deserialize(layer_config)
        if not self.copy.built:
            self.copy.build(input_shape)
"""
FROM_CONFIG = """\
        config = self.layer.get_config()
        config["trainable"] = False
        self.copy = type(self.layer).from_config(config)
        self.copy.build(input_shape)
"""

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf


    class Shadowed(tf.keras.layers.Wrapper):
        def build(self, input_shape):
            if not self.layer.built:
                self.layer.build(input_shape)
            self.g = self.add_weight(name="g", shape=(self.layer.units,), initializer="ones")
    {copy}        self.copy.set_weights(self.layer.get_weights())
            self.copy.activation = None
            self.built = True

        def call(self, inputs):
            return self.layer(inputs) * self.g + self.copy(inputs)


    def build():
        inputs = tf.keras.Input((4,))
        outputs = Shadowed(tf.keras.layers.Dense(3, activation="relu"))(inputs)
        return tf.keras.Model(inputs, outputs)
    """
).lstrip("\n")


def test_the_build_of_the_copy_is_the_finding() -> None:
    legacy = LEGACY.format(copy=COPY)
    (finding,) = [f for f in scan_text(legacy) if f["rule"] == "KM535"]
    assert (finding["line"], finding["severity"], finding["fixable"]) == (12, "error", False)
    assert legacy.splitlines()[11].strip() == "self.copy.build(input_shape)"
    for advice in (GUARDED, FROM_CONFIG):
        assert not [f for f in scan_text(LEGACY.format(copy=advice)) if f["rule"] == "KM535"]


def test_keras3_raises_where_the_finding_is(tmp_path) -> None:
    converted = apply_to_text(LEGACY.format(copy=COPY))
    assert "keras.layers.deserialize(layer_config)" in converted
    assert_fails_on_every_backend(
        PREDICT_WORKER,
        converted,
        "ValueError",
        "You cannot add new elements of state (variables or sub-layers) to a layer that is "
        "already built",
        tmp_path,
    )


@pytest.mark.parametrize("advice", [GUARDED, FROM_CONFIG], ids=["guarded", "from_config"])
def test_what_the_finding_advises_matches_keras2(tmp_path, advice: str) -> None:
    # the reference is the legacy code as written (Keras 2 builds its unbuilt copy)
    legacy = LEGACY.format(copy=COPY)
    converted = apply_to_text(LEGACY.format(copy=advice))
    assert_matches_keras2(build_and_predict_worker((3, 4)), legacy, converted, tmp_path)
