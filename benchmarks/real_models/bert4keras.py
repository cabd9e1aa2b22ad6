"""Small models built from bert4keras's layers (bojone/bert4keras).

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py``. bert4keras's backend imports TensorFlow,
so parity runs the original on Keras 2 (tf_keras). ``TF_KERAS=1`` is bert4keras's own switch
to ``tf.keras`` (its README): without it, it reads Keras 2.3's ``keras.engine.base_layer.Node``,
which tf_keras does not have.
"""

import os

os.environ.setdefault("TF_KERAS", "1")

from bert4keras.backend import keras  # noqa: E402 import keras
from bert4keras.layers import (  # noqa: E402
    FeedForward,
    GatedAttentionUnit,
    GlobalPointer,
    LayerNormalization,
    MultiHeadAttention,
    PositionEmbedding,
)


def _sequence(length=6, width=8):
    inputs = keras.layers.Input(shape=(length, width))
    return inputs, keras.layers.Dense(width, name="project")(inputs)


def _head(x):
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.layers.Dense(3, name="head")(x)


def build_layer_normalization():
    inputs, x = _sequence()
    x = LayerNormalization(name="layer_norm")(x)
    return keras.models.Model(inputs, _head(x))


def build_multi_head_attention():
    inputs, x = _sequence()
    x = MultiHeadAttention(heads=2, head_size=4, name="attention")([x, x, x])
    return keras.models.Model(inputs, _head(x))


def build_gated_attention_unit():
    inputs, x = _sequence()
    x = GatedAttentionUnit(units=16, key_size=8, name="gau")(x)
    return keras.models.Model(inputs, _head(x))


def build_position_embedding():
    inputs, x = _sequence()
    x = PositionEmbedding(
        input_dim=16, output_dim=8, embeddings_initializer="glorot_uniform", name="position"
    )(x)
    return keras.models.Model(inputs, _head(x))


def build_feed_forward():
    inputs, x = _sequence()
    x = FeedForward(units=16, activation="gelu", name="ffn")(x)
    return keras.models.Model(inputs, _head(x))


def build_global_pointer():
    inputs, x = _sequence()
    x = GlobalPointer(heads=2, head_size=4, name="pointer")(x)
    x = keras.layers.Flatten()(x)
    return keras.models.Model(inputs, keras.layers.Dense(3, name="head")(x))
