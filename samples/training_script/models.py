"""Small CNNs for 16x16 RGB thumbnails (tf.keras, TF 2.x style).

`build_model()` is the Sequential baseline used by train.py; `build_residual_model()`
is the functional variant we tried later (pass --arch residual to train.py).
"""
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

IMG_SIZE = 16
NUM_CLASSES = 3


def build_model(num_classes=NUM_CLASSES):
    model = keras.Sequential([
        layers.Conv2D(8, 3, padding="same", activation="relu",
                      input_shape=(IMG_SIZE, IMG_SIZE, 3)),
        layers.MaxPooling2D(),
        layers.Conv2D(16, 3, padding="same", activation="relu"),
        layers.GlobalAveragePooling2D(),
        layers.Dropout(0.2),
        layers.Dense(32, activation="relu"),
        layers.Dense(num_classes),  # logits
    ], name="thumbnail_cnn")
    return model


def residual_block(x, filters):
    shortcut = x
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    if shortcut.shape[-1] != filters:
        shortcut = layers.Conv2D(filters, 1, padding="same")(shortcut)
    return layers.ReLU()(layers.add([x, shortcut]))


def build_residual_model(num_classes=NUM_CLASSES):
    inputs = keras.Input(shape=(IMG_SIZE, IMG_SIZE, 3))
    x = residual_block(inputs, 8)
    x = layers.MaxPooling2D()(x)
    x = residual_block(x, 16)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(num_classes)(x)  # logits
    return keras.Model(inputs, outputs, name="thumbnail_resnet")


ARCHITECTURES = {"simple": build_model, "residual": build_residual_model}
