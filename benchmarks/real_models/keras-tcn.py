"""Small models built from keras-tcn's TCN layer (philipperemy/keras-tcn).

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py``. keras-tcn is ``tf.keras`` code, so parity
runs the original on Keras 2 (tf_keras).
"""

from tcn import TCN
from tensorflow import keras


def build_tcn_last_step():
    inputs = keras.Input(shape=(12, 3))
    x = TCN(nb_filters=8, kernel_size=2, dilations=(1, 2, 4), name="tcn")(inputs)
    return keras.Model(inputs, keras.layers.Dense(2)(x))


def build_tcn_sequences_no_skip():
    inputs = keras.Input(shape=(12, 3))
    x = TCN(
        nb_filters=6,
        kernel_size=3,
        dilations=(1, 2),
        use_skip_connections=False,
        return_sequences=True,
        name="tcn",
    )(inputs)
    return keras.Model(inputs, keras.layers.Dense(2)(x))


def build_tcn_layer_norm_same_padding():
    inputs = keras.Input(shape=(10, 4))
    x = TCN(
        nb_filters=8,
        kernel_size=3,
        dilations=(1, 2),
        padding="same",
        use_layer_norm=True,
        return_sequences=True,
        name="tcn",
    )(inputs)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inputs, keras.layers.Dense(2)(x))


def build_tcn_two_stacks():
    inputs = keras.Input(shape=(12, 2))
    x = TCN(nb_filters=4, kernel_size=2, nb_stacks=2, dilations=(1, 2), name="tcn")(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(x))
