"""Small blocks built from titu1994/keras-efficientnets (not the whole network).

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py``. keras-efficientnets is standalone Keras 2
code (``import keras``) that also calls TensorFlow; parity runs the original on Keras 2
(tf_keras, with ``keras`` standing for it). Needs keras_applications (see REPOS.tsv).
"""

import keras
import tensorflow as tf  # noqa: F401  (the Keras 2 of its time ran on TensorFlow)
from keras_efficientnets.custom_objects import Swish
from keras_efficientnets.efficientnet import MBConvBlock, SEBlock


def build_mbconv_block_se():
    inputs = keras.layers.Input(shape=(8, 8, 8))
    x = MBConvBlock(8, 8, 3, [1, 1], 2, 0.25, True, 0.0)(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.models.Model(inputs, keras.layers.Dense(3)(x))


def build_mbconv_block_drop_connect_stride():
    inputs = keras.layers.Input(shape=(8, 8, 8))
    x = MBConvBlock(8, 8, 3, [1, 1], 1, None, True, 0.2)(inputs)
    x = MBConvBlock(8, 12, 3, [2, 2], 2, 0.25, True, 0.2)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.models.Model(inputs, keras.layers.Dense(3)(x))


def build_swish_se_block():
    inputs = keras.layers.Input(shape=(8, 8, 4))
    x = keras.layers.Conv2D(8, 3, padding="same")(inputs)
    # a name of its own: SEBlock's Swish takes the default "swish"
    x = Swish(name="stem_swish")(x)
    x = SEBlock(8, 0.25, 1)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.models.Model(inputs, keras.layers.Dense(3)(x))
