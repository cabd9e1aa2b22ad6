"""Small networks and blocks built from qubvel/efficientnet's code (not B0-B7).

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py``. The ``tf.keras`` flavour of the project
(``inject_tfkeras_modules``, as ``efficientnet.tfkeras`` uses), so parity runs the original
on Keras 2 (tf_keras). Needs keras_applications (see REPOS.tsv).
"""

from efficientnet import inject_tfkeras_modules
from efficientnet.model import BlockArgs, EfficientNet, get_dropout, get_swish
from tensorflow import keras

_MODULES = dict(backend=keras.backend, layers=keras.layers, models=keras.models, utils=keras.utils)


def _tiny(blocks, **kwargs):
    return inject_tfkeras_modules(EfficientNet)(
        0.25,
        1.0,
        32,
        blocks_args=blocks,
        weights=None,
        input_shape=(32, 32, 3),
        classes=4,
        **kwargs,
    )


def build_tiny_efficientnet_no_se():
    blocks = [
        BlockArgs(
            kernel_size=3,
            num_repeat=1,
            input_filters=32,
            output_filters=16,
            expand_ratio=1,
            id_skip=True,
            strides=[1, 1],
            se_ratio=None,
        )
    ]
    return _tiny(blocks, dropout_rate=0.0, drop_connect_rate=0.0)


def build_tiny_efficientnet_se_drop_connect():
    blocks = [
        BlockArgs(
            kernel_size=3,
            num_repeat=2,
            input_filters=16,
            output_filters=16,
            expand_ratio=2,
            id_skip=True,
            strides=[1, 1],
            se_ratio=0.25,
        )
    ]
    return _tiny(blocks, dropout_rate=0.2, drop_connect_rate=0.2, include_top=False, pooling="avg")


def build_swish_fixed_dropout():
    inputs = keras.Input(shape=(8, 8, 4))
    x = keras.layers.Conv2D(8, 3, padding="same")(inputs)
    x = keras.layers.Activation(get_swish(**_MODULES), name="swish")(x)
    x = get_dropout(**_MODULES)(0.3, noise_shape=(None, 1, 1, 1), name="fixed_dropout")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(3)(x))
