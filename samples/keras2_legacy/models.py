"""Tabular regressor from the Keras 2 days (TF 2.3-ish, `import keras`-era habits).

Runs on Keras 2 only (tf_keras, TF_USE_LEGACY_KERAS=1); see ../README.md.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
from tensorflow.keras import backend as K

NUM_FEATURES = 12


class LegacyDense(layers.Layer):
    """Dense layer written against the Keras 2 backend API."""

    def __init__(self, units, activation=None, **kwargs):
        super(LegacyDense, self).__init__(**kwargs)
        self.units = units
        self.activation = keras.activations.get(activation)

    def build(self, input_shape):
        in_dim = int(input_shape[-1])
        # Keras 2 signature: add_weight(name, shape, dtype, initializer, ...)
        self.kernel = self.add_weight("kernel", (in_dim, self.units),
                                      initializer="glorot_uniform", trainable=True)
        self.bias = self.add_weight("bias", (self.units,), initializer="zeros")
        super(LegacyDense, self).build(input_shape)

    def call(self, inputs):
        output = K.dot(inputs, self.kernel)
        output = K.bias_add(output, self.bias)
        return self.activation(output)

    def get_config(self):
        config = super(LegacyDense, self).get_config()
        config["units"] = self.units
        config["activation"] = keras.activations.serialize(self.activation)
        return config


class SquaredFeatures(layers.Layer):
    """Appends x**2 and the row sum of x to the features."""

    def call(self, inputs):
        row_sum = K.sum(inputs, axis=-1, keepdims=True)
        return K.concatenate([inputs, K.square(inputs), row_sum])

    def compute_output_shape(self, input_shape):
        return (input_shape[0], 2 * input_shape[-1] + 1)


def build_model():
    inputs = keras.Input(shape=(NUM_FEATURES,))
    x = SquaredFeatures()(inputs)
    # hidden width follows the expanded feature size (2 * 12 + 1 = 25 -> 50)
    x = LegacyDense(2 * K.int_shape(x)[-1], activation="relu")(x)
    # cap activations (relu6-style); Keras 2 wraps this TF op in a TFOpLambda layer
    x = tf.clip_by_value(x, 0.0, 6.0)
    x = LegacyDense(16, activation="relu")(x)
    outputs = LegacyDense(1)(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer=keras.optimizers.Adam(lr=0.01), loss="mse", metrics=["mae"])
    return model


def data_generator(batch_size=32):
    """Endless generator of (x, y) batches, the pre-tf.data way."""
    w = np.linspace(-1.0, 1.0, NUM_FEATURES).astype("float32")
    while True:
        x = np.random.randn(batch_size, NUM_FEATURES).astype("float32")
        y = x.dot(w)[:, None] + 0.1 * np.random.randn(batch_size, 1).astype("float32")
        yield x, y


def train(epochs=3, steps_per_epoch=20):
    model = build_model()
    model.fit_generator(data_generator(), steps_per_epoch=steps_per_epoch, epochs=epochs,
                        validation_data=data_generator(), validation_steps=5)
    # fine-tune with a smaller step
    K.set_value(model.optimizer.lr, 0.1 * K.get_value(model.optimizer.lr))
    model.fit_generator(data_generator(), steps_per_epoch=steps_per_epoch, epochs=1)
    print("final lr:", K.get_value(model.optimizer.lr))
    return model


if __name__ == "__main__":
    train()
