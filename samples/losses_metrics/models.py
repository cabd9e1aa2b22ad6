"""Embedding classifier with custom losses and metrics (tf.keras 2.x style)."""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
from tensorflow.keras import backend as K

NUM_FEATURES = 20
NUM_CLASSES = 4


class FocalLoss(keras.losses.Loss):
    """Categorical focal loss (Lin et al. 2017) for one-hot targets."""

    def __init__(self, gamma=2.0, alpha=0.25, name="focal_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.gamma = gamma
        self.alpha = alpha

    def call(self, y_true, y_pred):
        y_true = tf.cast(y_true, tf.float32)
        y_pred = K.clip(y_pred, K.epsilon(), 1.0 - K.epsilon())
        cross_entropy = -y_true * tf.math.log(y_pred)
        weight = self.alpha * tf.pow(1.0 - y_pred, self.gamma)
        return tf.reduce_sum(weight * cross_entropy, axis=-1)

    def get_config(self):
        config = super().get_config()
        config.update({"gamma": self.gamma, "alpha": self.alpha})
        return config


def smoothed_crossentropy(y_true, y_pred, smoothing=0.1):
    """Cross entropy with label smoothing, written by hand."""
    y_true = tf.cast(y_true, tf.float32)
    y_true = y_true * (1.0 - smoothing) + smoothing / NUM_CLASSES
    y_pred = K.clip(y_pred, K.epsilon(), 1.0)
    return -tf.reduce_sum(y_true * tf.math.log(y_pred), axis=-1)


def mean_confidence(y_true, y_pred):
    """Average probability the model puts on its top class."""
    return K.mean(tf.reduce_max(y_pred, axis=-1))


class CategoricalTruePositives(keras.metrics.Metric):
    """Counts examples whose argmax prediction matches the label."""

    def __init__(self, name="categorical_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_weight(name="tp", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.argmax(y_pred, axis=-1)
        y_true = tf.argmax(y_true, axis=-1)
        values = tf.cast(tf.equal(y_true, y_pred), tf.float32)
        if sample_weight is not None:
            values = values * tf.cast(sample_weight, tf.float32)
        self.true_positives.assign_add(tf.reduce_sum(values))

    def result(self):
        return self.true_positives

    def reset_state(self):
        self.true_positives.assign(0.0)


def build_model(use_focal=False):
    inputs = keras.Input(shape=(NUM_FEATURES,))
    x = layers.Dense(32, activation="relu")(inputs)
    x = layers.Dense(16)(x)
    # unit-length embeddings (cosine-style head)
    x = layers.Lambda(lambda t: tf.nn.l2_normalize(t, axis=-1), name="l2_norm")(x)
    outputs = layers.Dense(NUM_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="embedding_classifier")

    loss = FocalLoss(gamma=2.0) if use_focal else smoothed_crossentropy
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss=loss,
        metrics=["accuracy", mean_confidence, CategoricalTruePositives()],
    )
    return model


def train(epochs=2):
    x = np.random.rand(128, NUM_FEATURES).astype("float32")
    y = keras.utils.to_categorical(np.random.randint(0, NUM_CLASSES, size=128), NUM_CLASSES)
    model = build_model(use_focal=True)
    model.fit(x, y, epochs=epochs, batch_size=16, validation_split=0.25)
    return model


if __name__ == "__main__":
    train()
