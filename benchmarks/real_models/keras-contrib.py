"""Small models built from keras-contrib's layers (keras-team/keras-contrib).

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py``. keras-contrib is standalone Keras 2 code
(``import keras``) of the TensorFlow 1 era; ``import tensorflow`` here says so, and parity
then runs the original on Keras 2 (tf_keras, with ``keras`` standing for it). Its
GroupNormalization is left out: it calls ``tf.nn.moments(..., keep_dims=...)`` (TensorFlow 1
arguments), so the original does not run on TensorFlow 2 at all.
"""

import keras
import tensorflow as tf  # noqa: F401  (the Keras 2 of its time ran on TensorFlow)
from keras_contrib.layers import PELU, CosineDense, InstanceNormalization, SineReLU


def build_pelu():
    inputs = keras.Input(shape=(8,))
    x = keras.layers.Dense(8)(inputs)
    x = PELU(name="pelu")(x)
    return keras.models.Model(inputs, keras.layers.Dense(3)(x))


def build_instance_normalization():
    inputs = keras.Input(shape=(6, 6, 4))
    x = keras.layers.Conv2D(4, 3, padding="same")(inputs)
    x = InstanceNormalization(axis=-1, name="instance_norm")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.models.Model(inputs, keras.layers.Dense(3)(x))


def build_sine_relu():
    inputs = keras.Input(shape=(8,))
    x = keras.layers.Dense(8)(inputs)
    x = SineReLU(epsilon=0.01, name="sine_relu")(x)
    return keras.models.Model(inputs, keras.layers.Dense(3)(x))


def build_cosine_dense():
    inputs = keras.Input(shape=(8,))
    x = CosineDense(6, name="cosine_dense")(inputs)
    return keras.models.Model(inputs, keras.layers.Dense(3)(x))
