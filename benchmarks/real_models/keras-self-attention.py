"""Small models built from keras-self-attention's layers (CyberZHG/keras-self-attention).

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py``. Each ``build_*()`` returns a small
functional model (a few layers, short sequences) in the project's own style (``tf.keras``,
as its layers are written), so parity runs the original on Keras 2 (tf_keras).
"""

from keras_self_attention import (
    ResidualScaledDotProductAttention,
    ScaledDotProductAttention,
    SeqSelfAttention,
    SeqWeightedAttention,
)
from tensorflow import keras


def _head(x):
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.layers.Dense(3, name="head")(x)


def build_seq_self_attention_additive():
    inputs = keras.Input(shape=(6, 8))
    x = SeqSelfAttention(units=8, attention_activation="sigmoid", name="attention")(inputs)
    return keras.Model(inputs, _head(x))


def build_seq_self_attention_multiplicative_local():
    inputs = keras.Input(shape=(6, 8))
    x = SeqSelfAttention(
        attention_type=SeqSelfAttention.ATTENTION_TYPE_MUL,
        attention_width=3,
        history_only=True,
        name="attention",
    )(inputs)
    return keras.Model(inputs, _head(x))


def build_seq_weighted_attention():
    inputs = keras.Input(shape=(6, 8))
    x = keras.layers.Dense(8, activation="tanh")(inputs)
    x = SeqWeightedAttention(name="weighted")(x)
    return keras.Model(inputs, keras.layers.Dense(3, name="head")(x))


def build_scaled_dot_product_attention():
    inputs = keras.Input(shape=(6, 8))
    query = keras.layers.Dense(8, name="query")(inputs)
    key = keras.layers.Dense(8, name="key")(inputs)
    value = keras.layers.Dense(8, name="value")(inputs)
    x = ScaledDotProductAttention(history_only=True, name="attention")([query, key, value])
    return keras.Model(inputs, _head(x))


def build_residual_scaled_dot_product_attention():
    # The layer reads its inputs' masks (`mask[0]`): Masking gives the sequence one.
    inputs = keras.Input(shape=(6, 8))
    previous = keras.Input(shape=(6, 6))
    x = keras.layers.Masking(mask_value=0.0)(inputs)
    x, _ = ResidualScaledDotProductAttention(name="attention")([x, previous])
    return keras.Model([inputs, previous], _head(x))
