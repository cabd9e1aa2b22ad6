"""Small models built from tensorflow/addons's layers (TensorFlow Addons, end of life).

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py``. Addons is ``tf.keras`` code, so parity
runs the original on Keras 2 (tf_keras). Needs typeguard < 3 (see REPOS.tsv).
"""

import tensorflow as tf
import tensorflow_addons as tfa

keras = tf.keras


def build_weight_normalization():
    inputs = keras.Input(shape=(8,))
    x = tfa.layers.WeightNormalization(keras.layers.Dense(6), name="wn_dense")(inputs)
    return keras.Model(inputs, keras.layers.Dense(3)(x))


def build_spectral_normalization():
    inputs = keras.Input(shape=(8, 8, 3))
    x = tfa.layers.SpectralNormalization(keras.layers.Conv2D(4, 3), name="sn_conv")(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(3)(x))


def build_group_normalization():
    inputs = keras.Input(shape=(6, 6, 8))
    x = keras.layers.Conv2D(8, 3, padding="same")(inputs)
    x = tfa.layers.GroupNormalization(groups=4, name="group_norm")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(3)(x))


def build_adaptive_average_pooling():
    inputs = keras.Input(shape=(12, 12, 3))
    x = keras.layers.Conv2D(4, 3, padding="same")(inputs)
    x = tfa.layers.AdaptiveAveragePooling2D((3, 3), name="adaptive_pool")(x)
    x = keras.layers.Flatten()(x)
    return keras.Model(inputs, keras.layers.Dense(3)(x))


def build_maxout_poincare():
    inputs = keras.Input(shape=(8,))
    x = keras.layers.Dense(12)(inputs)
    x = tfa.layers.Maxout(num_units=4, name="maxout")(x)
    x = tfa.layers.PoincareNormalize(axis=1, name="poincare")(x)
    return keras.Model(inputs, keras.layers.Dense(3)(x))
