"""Custom layers for a small sequence encoder (TF 2.x / tf.keras style).

Adapted from our internal "tiny transformer" block. All layers use raw TF ops
inside `call`, the way most tf.keras tutorials wrote them.
"""
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
from tensorflow.keras import backend as K

SEQ_LEN = 16
D_MODEL = 32


class RMSNorm(layers.Layer):
    """Root-mean-square norm (no mean centering), as in T5 / LLaMA."""

    def __init__(self, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.epsilon = epsilon

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(input_shape[-1],), initializer="ones")
        super().build(input_shape)

    def call(self, x):
        ms = tf.reduce_mean(tf.square(x), axis=-1, keepdims=True)
        return x * tf.math.rsqrt(ms + self.epsilon) * self.scale

    def get_config(self):
        config = super().get_config()
        config.update({"epsilon": self.epsilon})
        return config


class SimpleLayerNorm(layers.Layer):
    """Plain layer norm written with the Keras backend helpers."""

    def build(self, input_shape):
        dim = input_shape[-1]
        self.gamma = self.add_weight(name="gamma", shape=(dim,), initializer="ones")
        self.beta = self.add_weight(name="beta", shape=(dim,), initializer="zeros")

    def call(self, x):
        mean = K.mean(x, axis=-1, keepdims=True)
        var = tf.reduce_mean(tf.square(x - mean), axis=-1, keepdims=True)
        return self.gamma * (x - mean) / tf.sqrt(var + K.epsilon()) + self.beta


class MultiHeadSelfAttention(layers.Layer):
    def __init__(self, num_heads=4, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads

    def build(self, input_shape):
        d = input_shape[-1]
        self.depth = d // self.num_heads
        # fused q/k/v projection, split later with tf.split
        self.w_qkv = self.add_weight(name="w_qkv", shape=(d, 3 * d), initializer="glorot_uniform")
        self.w_out = self.add_weight(name="w_out", shape=(d, d), initializer="glorot_uniform")

    def split_heads(self, x, batch_size):
        # (batch, seq, d) -> (batch, heads, seq, depth)
        x = tf.reshape(x, (batch_size, -1, self.num_heads, self.depth))
        return tf.transpose(x, perm=[0, 2, 1, 3])

    def call(self, x):
        batch_size = tf.shape(x)[0]
        qkv = tf.matmul(x, self.w_qkv)
        q, k, v = tf.split(qkv, 3, axis=-1)
        q = self.split_heads(q, batch_size)
        k = self.split_heads(k, batch_size)
        v = self.split_heads(v, batch_size)
        scores = tf.matmul(q, k, transpose_b=True)
        scores = scores / tf.sqrt(tf.cast(self.depth, tf.float32))
        weights = tf.nn.softmax(scores, axis=-1)
        out = tf.matmul(weights, v)
        out = tf.transpose(out, perm=[0, 2, 1, 3])
        out = tf.reshape(out, (batch_size, -1, self.num_heads * self.depth))
        return tf.einsum("bsd,de->bse", out, self.w_out)


class GELU(layers.Layer):
    """Exact (erf) GELU, like BERT's original implementation."""

    def call(self, x):
        return tf.nn.gelu(x)


class SwishRelu6(layers.Layer):
    """Half the channels get swish, the other half relu6 (MobileNet-ish)."""

    def call(self, x):
        # uneven split: sizes, not indices
        a, b = tf.split(x, [8, 24], axis=-1)
        return tf.concat([tf.nn.swish(a), tf.nn.relu6(b)], axis=-1)


class AttentionPooling(layers.Layer):
    """Learned query attends over the sequence -> one vector per example."""

    def build(self, input_shape):
        self.query = self.add_weight(name="query", shape=(input_shape[-1],),
                                     initializer="random_normal")

    def call(self, x):
        logits = tf.squeeze(tf.matmul(x, tf.expand_dims(self.query, -1)), axis=-1)
        logits = tf.clip_by_value(logits, -10.0, 10.0)
        alpha = tf.nn.softmax(logits, axis=-1)
        return tf.reduce_sum(x * tf.expand_dims(alpha, -1), axis=1)


def encoder_block(x, num_heads=4):
    h = RMSNorm()(x)
    x = layers.Add()([x, MultiHeadSelfAttention(num_heads)(h)])
    h = SimpleLayerNorm()(x)
    h = layers.Dense(2 * D_MODEL)(h)
    h = GELU()(h)
    h = layers.Dense(D_MODEL)(h)
    h = SwishRelu6()(h)
    return layers.Add()([x, h])


def build_model(num_classes=5):
    inputs = keras.Input(shape=(SEQ_LEN, D_MODEL))
    x = encoder_block(inputs)
    x = AttentionPooling()(x)
    outputs = layers.Dense(num_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="tiny_encoder")


if __name__ == "__main__":
    model = build_model()
    model.summary()
