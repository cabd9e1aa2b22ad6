"""Small blocks built from xuannianz/EfficientDet's layers (not the whole detector).

kmigrate's own code, not the project's: `benchmarks/real_parity.py --factories` copies this
file into the checkout's root as ``rp_models.py`` (the project imports its modules from its
root: ``from layers import ...``). EfficientDet is ``tf.keras`` code, so parity runs the
original on Keras 2 (tf_keras). ``model.py`` is left out: it imports OpenCV through
``utils``.
"""

from initializers import PriorProbability
from layers import BatchNormalization, ClipBoxes, RegressBoxes, wBiFPNAdd
from tensorflow import keras


def build_weighted_bifpn_add():
    inputs = keras.Input(shape=(8, 8, 4))
    branches = [
        keras.layers.Conv2D(4, 3, padding="same", name=f"branch{i}")(inputs) for i in range(3)
    ]
    x = wBiFPNAdd(name="fuse")(branches)
    x = keras.layers.Activation("swish")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(3)(x))


def build_separable_conv_frozen_bn():
    inputs = keras.Input(shape=(8, 8, 4))
    x = keras.layers.SeparableConv2D(6, 3, padding="same", name="conv")(inputs)
    x = BatchNormalization(freeze=True, momentum=0.997, epsilon=1e-4, name="frozen_bn")(x)
    x = keras.layers.SeparableConv2D(6, 3, padding="same", name="conv2")(x)
    x = BatchNormalization(freeze=False, momentum=0.997, epsilon=1e-4, name="bn")(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(3)(x))


def build_class_head_prior_probability():
    inputs = keras.Input(shape=(8, 8, 4))
    x = keras.layers.Conv2D(
        6,
        3,
        padding="same",
        kernel_initializer=keras.initializers.RandomNormal(stddev=0.01),
        bias_initializer=PriorProbability(probability=0.01),
        name="class_conv",
    )(inputs)
    x = keras.layers.Reshape((-1, 2))(x)
    return keras.Model(inputs, keras.layers.Activation("sigmoid")(x))


def build_regress_and_clip_boxes():
    image = keras.Input(shape=(16, 16, 3))
    anchors = keras.Input(shape=(5, 4))
    features = keras.Input(shape=(5, 8))
    regression = keras.layers.Dense(4, name="regression")(features)
    boxes = RegressBoxes(name="boxes")([anchors, regression])
    boxes = ClipBoxes(name="clipped_boxes")([image, boxes])
    return keras.Model([image, anchors, features], boxes)
