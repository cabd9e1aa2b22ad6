"""Small models built from kpot/keras-transformer's layers.

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py``. keras-transformer is standalone Keras 2
code (``import keras``) of the TensorFlow 1 era; ``import tensorflow`` here says so, and
parity then runs the original on Keras 2 (tf_keras, with ``keras`` standing for it).
``keras_transformer.transformer`` is left out: it imports ``activations`` from
``keras.layers`` (Keras 2.2's star re-export), which tf_keras does not have, so the original
cannot run. ``MultiHeadSelfAttention`` is left out too: its ``build`` insists on a tuple
``input_shape`` (Keras 2.2) and tf_keras gives a ``TensorShape`` ("Invalid input").
"""

import keras
import tensorflow as tf  # noqa: F401  (the Keras 2 of its time ran on TensorFlow)
from keras_transformer.attention import MultiHeadAttention
from keras_transformer.position import AddPositionalEncoding, TransformerCoordinateEmbedding


def build_coordinate_embedding_cross_attention():
    values = keras.layers.Input(shape=(6, 8))
    queries = keras.layers.Input(shape=(6, 8))
    coordinates = TransformerCoordinateEmbedding(max_transformer_depth=2, name="coordinates")
    v = coordinates(values, step=0)
    q = coordinates(queries, step=1)
    x = MultiHeadAttention(num_heads=2, use_masking=False, name="attention")([v, q])
    x = keras.layers.LayerNormalization(name="norm")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.models.Model([values, queries], keras.layers.Dense(3)(x))


def build_positional_encoding_cross_attention():
    values = keras.layers.Input(shape=(6, 8))
    queries = keras.layers.Input(shape=(4, 8))
    v = AddPositionalEncoding(name="values_position")(values)
    q = AddPositionalEncoding(name="queries_position")(queries)
    x = MultiHeadAttention(num_heads=2, use_masking=True, name="attention")([v, q])
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.models.Model([values, queries], keras.layers.Dense(3)(x))
