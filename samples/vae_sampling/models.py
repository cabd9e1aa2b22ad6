"""Small dense VAE, following the Keras "Variational AutoEncoder" example (TF2 era).

Input is a flattened 8x8 image (64 features) in [0, 1].
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

INPUT_DIM = 64
LATENT_DIM = 4


class Sampling(layers.Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

    def call(self, inputs, training=None):
        z_mean, z_log_var = inputs
        if not training:
            # deterministic reconstructions at inference: use the posterior mean
            return z_mean
        epsilon = tf.random.normal(shape=tf.shape(z_mean))
        return z_mean + tf.exp(0.5 * z_log_var) * epsilon


class NoisyDropout(layers.Layer):
    """Uniform input noise + dropout, only while training (like GaussianNoise)."""

    def __init__(self, stddev=0.05, rate=0.1, **kwargs):
        super(NoisyDropout, self).__init__(**kwargs)
        self.stddev = stddev
        self.rate = rate

    def call(self, x, training=None):
        if training:
            noise = tf.random.uniform(tf.shape(x), minval=-self.stddev, maxval=self.stddev)
            x = tf.nn.dropout(x + noise, rate=self.rate)
        return x

    def get_config(self):
        config = super(NoisyDropout, self).get_config()
        config.update({"stddev": self.stddev, "rate": self.rate})
        return config


class KLDivergence(layers.Layer):
    """Identity on z_mean/z_log_var; adds the KL term as a layer loss."""

    def call(self, inputs):
        z_mean, z_log_var = inputs
        kl = -0.5 * tf.reduce_mean(
            tf.reduce_sum(1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var), axis=1))
        self.add_loss(kl)
        return inputs


def build_encoder():
    inputs = keras.Input(shape=(INPUT_DIM,))
    x = NoisyDropout()(inputs)
    x = layers.Dense(32, activation="relu")(x)
    x = layers.Dense(16, activation="relu")(x)
    z_mean = layers.Dense(LATENT_DIM, name="z_mean")(x)
    z_log_var = layers.Dense(LATENT_DIM, name="z_log_var")(x)
    z_mean, z_log_var = KLDivergence()([z_mean, z_log_var])
    z = Sampling()([z_mean, z_log_var])
    return keras.Model(inputs, [z_mean, z_log_var, z], name="encoder")


def build_decoder():
    latent_inputs = keras.Input(shape=(LATENT_DIM,))
    x = layers.Dense(16, activation="relu")(latent_inputs)
    x = layers.Dense(32, activation="relu")(x)
    outputs = layers.Dense(INPUT_DIM, activation="sigmoid")(x)
    return keras.Model(latent_inputs, outputs, name="decoder")


def build_model():
    encoder = build_encoder()
    decoder = build_decoder()
    inputs = keras.Input(shape=(INPUT_DIM,))
    _, _, z = encoder(inputs)
    reconstruction = decoder(z)
    vae = keras.Model(inputs, reconstruction, name="vae")
    # reconstruction loss via compile, KL via add_loss above
    vae.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3), loss="binary_crossentropy")
    return vae


def train(epochs=2):
    x = np.random.rand(256, INPUT_DIM).astype("float32")
    vae = build_model()
    vae.fit(x, x, epochs=epochs, batch_size=32)
    return vae


if __name__ == "__main__":
    train()
