"""Generate the benchmark corpus: a deterministic tree of legacy TF 2.x / Keras 2 projects.

The files are built from code blocks in the styles legacy repositories mix: custom
layers full of raw ``tf.*`` ops, functional and subclassed models, losses and
metrics, ``GradientTape`` loops, ``tf.data`` pipelines, ``tf.random`` in layers,
``.h5`` saving, Keras 2 APIs (``lr=``, ``fit_generator``), a little ``tf.compat.v1``,
``tf.distribute``, tests, and plain Python modules without TensorFlow (which the
scanner's pre-filter skips). Import styles vary per file (``tf.keras``, standalone
``keras``, aliases, ``backend as K``), names and numbers vary per block.

The same seed always gives the same bytes, so benchmark runs compare like with like::

    python benchmarks/make_corpus.py            # -> benchmarks/corpus/ (git-ignored)
    python benchmarks/make_corpus.py --files 800 --seed 7 --out /tmp/corpus
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from string import Template

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "corpus"
DEFAULT_FILES = 700
DEFAULT_SEED = 20240611

# ---------------------------------------------------------------------------
# Vocabulary for names.
# ---------------------------------------------------------------------------

_ADJECTIVES = (
    "Gated Residual Sparse Dense Causal Local Global Shared Scaled Fused Dilated Masked Deep "
    "Light Wide Simple Stacked Adaptive Temporal Spatial Dual Multi Conditional Relative"
).split()
_NOUNS = (
    "Attention Block Encoder Decoder Projection Embedding Norm Mixer Pooling Conv Head Gate "
    "Router Expert Cell Unit Adapter Transformer Bottleneck Highway Tower Stem Fusion Sampler"
).split()
_VERBS = "build make create compute apply prepare load parse encode decode score rank fit".split()
_OBJECTS = (
    "features logits batch tokens images labels weights scores embeddings targets masks "
    "sequences patches boxes anchors frames spectrogram signal"
).split()
_PROJECTS = (
    "vision_lab speech_kit recsys nlp_toolkit forecasting anomaly_det ocr_engine "
    "segmentation ranker gan_zoo rl_agents tabular_ml"
).split()
_PACKAGES = ("models", "layers", "losses", "data", "training", "utils", "serving", "experiments")


@dataclass
class Names:
    rng: random.Random

    def cls(self, suffix: str = "") -> str:
        return self.rng.choice(_ADJECTIVES) + self.rng.choice(_NOUNS) + suffix

    def fn(self) -> str:
        return f"{self.rng.choice(_VERBS)}_{self.rng.choice(_OBJECTS)}"

    def obj(self) -> str:
        return self.rng.choice(_OBJECTS)


# ---------------------------------------------------------------------------
# Import headers: each defines tf, keras, layers, K and np in one legacy style.
# ---------------------------------------------------------------------------

HEADERS = (
    """
    import numpy as np
    import tensorflow as tf
    from tensorflow import keras
    from tensorflow.keras import layers
    from tensorflow.keras import backend as K
    """,
    """
    import numpy as np
    import tensorflow as tf
    import tensorflow.keras as keras
    import tensorflow.keras.backend as K
    from tensorflow.keras import layers
    """,
    """
    import numpy as np
    import tensorflow as tf
    import keras
    from keras import layers
    from keras import backend as K
    """,
    """
    import numpy as np
    import tensorflow as tf

    keras = tf.keras
    layers = tf.keras.layers
    K = tf.keras.backend
    """,
    """
    import numpy as np
    import tensorflow as tf
    from tensorflow.python import keras
    from tensorflow.keras import layers, backend as K
    """,
    """
    import numpy as np
    import tensorflow.compat.v2 as tf
    from tensorflow import keras
    from tensorflow.keras import layers
    from tensorflow.keras import backend as K
    """,
)

# ---------------------------------------------------------------------------
# Code blocks. $-placeholders are filled per block; every block parses on its own.
# ---------------------------------------------------------------------------

BLOCKS: dict[str, str] = {}

BLOCKS["norm_layer"] = '''
class $Name(layers.Layer):
    """$adjective normalisation over the last axis (no mean centering)."""

    def __init__(self, epsilon=$eps, **kwargs):
        super($Name, self).__init__(**kwargs)
        self.epsilon = epsilon

    def build(self, input_shape):
        dim = int(input_shape[-1])
        self.scale = self.add_weight("scale", (dim,), initializer="ones", trainable=True)
        self.bias = self.add_weight("bias", shape=(dim,), initializer="zeros")
        super($Name, self).build(input_shape)

    def call(self, inputs):
        mean_sq = tf.reduce_mean(tf.square(inputs), axis=-1, keep_dims=True)
        normed = inputs * tf.math.rsqrt(mean_sq + self.epsilon)
        return normed * self.scale + self.bias

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super($Name, self).get_config()
        config.update({"epsilon": self.epsilon})
        return config
'''

BLOCKS["attention_layer"] = """
class $Name(layers.Layer):
    def __init__(self, num_heads=$heads, key_dim=$units, dropout=$rate, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.dropout = dropout

    def build(self, input_shape):
        d_model = input_shape[-1]
        self.w_qkv = self.add_weight(
            name="w_qkv", shape=(d_model, 3 * self.num_heads * self.key_dim),
            initializer="glorot_uniform",
        )
        self.w_out = self.add_weight(
            name="w_out", shape=(self.num_heads * self.key_dim, d_model),
            initializer=tf.keras.initializers.GlorotUniform(),
        )

    def _split_heads(self, x, batch_size):
        x = tf.reshape(x, (batch_size, -1, self.num_heads, self.key_dim))
        return tf.transpose(x, perm=[0, 2, 1, 3])

    def call(self, x, mask=None, training=None):
        batch_size = tf.shape(x)[0]
        qkv = tf.matmul(x, self.w_qkv)
        q, k, v = tf.split(qkv, 3, axis=-1)
        q = self._split_heads(q, batch_size)
        k = self._split_heads(k, batch_size)
        v = self._split_heads(v, batch_size)
        scores = tf.matmul(q, k, transpose_b=True)
        scores = scores / tf.sqrt(tf.cast(self.key_dim, tf.float32))
        if mask is not None:
            scores += (1.0 - tf.cast(mask[:, tf.newaxis, tf.newaxis, :], tf.float32)) * -1e9
        weights = tf.nn.softmax(scores, axis=-1)
        if training:
            weights = tf.nn.dropout(weights, rate=self.dropout)
        out = tf.matmul(weights, v)
        out = tf.transpose(out, perm=[0, 2, 1, 3])
        out = tf.reshape(out, (batch_size, -1, self.num_heads * self.key_dim))
        return tf.einsum("bsd,de->bse", out, self.w_out)

    def get_config(self):
        base = super().get_config()
        return dict(base, num_heads=self.num_heads, key_dim=self.key_dim, dropout=self.dropout)
"""

BLOCKS["noise_layer"] = '''
class $Name(layers.Layer):
    """Adds noise and random masking during training ($adjective regulariser)."""

    def __init__(self, stddev=$std, drop_rate=$rate, **kwargs):
        super().__init__(**kwargs)
        self.stddev = stddev
        self.drop_rate = drop_rate

    def call(self, inputs, training=None):
        if not training:
            return inputs
        noise = tf.random.normal(tf.shape(inputs), mean=0.0, stddev=self.stddev)
        keep = tf.random.uniform(tf.shape(inputs)[:1], minval=0, maxval=1) > self.drop_rate
        keep = tf.cast(keep, inputs.dtype)
        shape = [-1] + [1] * (len(inputs.shape) - 1)
        return (inputs + noise) * tf.reshape(keep, shape) / (1.0 - self.drop_rate)
'''

BLOCKS["sampling_layer"] = '''
class $Name(layers.Layer):
    """Reparameterisation trick: z = mean + exp(log_var / 2) * eps."""

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = tf.shape(z_mean)[0]
        dim = tf.shape(z_mean)[1]
        epsilon = K.random_normal(shape=(batch, dim))
        kl = -0.5 * K.mean(1 + z_log_var - K.square(z_mean) - K.exp(z_log_var), axis=-1)
        self.add_loss(K.mean(kl))
        return z_mean + K.exp(0.5 * z_log_var) * epsilon
'''

BLOCKS["conv_block"] = """
class $Name(layers.Layer):
    def __init__(self, filters=$filters, kernel_size=$kernel, strides=1, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.kernel_size = kernel_size
        self.strides = strides

    def build(self, input_shape):
        channels = input_shape[-1]
        self.kernel = self.add_weight(
            "kernel", [self.kernel_size, self.kernel_size, channels, self.filters],
            initializer="he_normal",
        )
        self.gamma = self.add_weight("gamma", [self.filters], initializer="ones")
        self.beta = self.add_weight("beta", [self.filters], initializer="zeros")

    def call(self, x, training=False):
        y = tf.nn.conv2d(x, self.kernel, strides=self.strides, padding="SAME")
        mean, variance = tf.nn.moments(y, axes=[0, 1, 2], keepdims=True)
        y = tf.nn.batch_normalization(y, mean, variance, self.beta, self.gamma, 1e-3)
        y = tf.nn.relu(y)
        y = tf.pad(y, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
        return tf.nn.max_pool2d(y, ksize=2, strides=2, padding="VALID")
"""

BLOCKS["embedding_layer"] = """
class $Name(layers.Layer):
    def __init__(self, vocab_size=$vocab, embed_dim=$units, max_len=$seq, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.embed_dim = embed_dim
        self.max_len = max_len
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=max_len, output_dim=embed_dim)

    def call(self, x):
        maxlen = tf.shape(x)[-1]
        positions = tf.range(start=0, limit=maxlen, delta=1)
        positions = self.pos_emb(positions)
        tokens = self.token_emb(x)
        mask = tf.cast(tf.not_equal(x, 0), tf.float32)
        return (tokens + positions) * tf.expand_dims(mask, -1)

    def compute_mask(self, inputs, mask=None):
        return tf.math.not_equal(inputs, 0)
"""

BLOCKS["gated_unit"] = """
class $Name(keras.layers.Layer):
    def __init__(self, units=$units, activation="$act", **kwargs):
        super(keras.layers.Layer, self).__init__(**kwargs)
        self.units = units
        self.activation = keras.activations.get(activation)
        self.proj = keras.layers.Dense(2 * units)

    def call(self, inputs):
        hidden = self.proj(inputs)
        value, gate = tf.split(hidden, num_or_size_splits=2, axis=-1)
        gated = self.activation(value) * tf.sigmoid(gate)
        clipped = tf.clip_by_value(gated, -$clip, $clip)
        return tf.concat([clipped, tf.zeros_like(clipped[..., :1])], axis=-1)
"""

BLOCKS["functional_model"] = '''
def $fn(input_dim=$units, num_classes=$classes, dropout=$rate):
    """Functional $adjective classifier."""
    inputs = keras.Input(shape=(input_dim,), name="features")
    x = layers.Dense($units, activation="relu")(inputs)
    x = layers.Dropout(dropout)(x)
    x = layers.Dense($half, activation="relu", kernel_regularizer=keras.regularizers.l2(1e-4))(x)
    x = tf.nn.l2_normalize(x, axis=-1)
    logits = layers.Dense(num_classes)(x)
    probs = tf.nn.softmax(logits)
    model = keras.Model(inputs=inputs, outputs=probs, name="$name_lower")
    model.compile(
        optimizer=keras.optimizers.Adam(lr=$lr, decay=1e-6),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model
'''

BLOCKS["sequential_model"] = """
def $fn(input_shape=($seq, $seq, 3), num_classes=$classes):
    model = keras.Sequential()
    model.add(layers.Conv2D($filters, ($kernel, $kernel), padding="same", input_shape=input_shape))
    model.add(layers.BatchNormalization())
    model.add(layers.Activation("relu"))
    model.add(layers.MaxPooling2D(pool_size=(2, 2)))
    model.add(layers.Conv2D($filters2, ($kernel, $kernel), padding="same", activation="relu"))
    model.add(layers.GlobalAveragePooling2D())
    model.add(layers.Dense($units, activation="relu"))
    model.add(layers.Dropout($rate))
    model.add(layers.Dense(num_classes, activation="softmax"))
    sgd = keras.optimizers.SGD(lr=$lr, momentum=0.9, nesterov=True)
    model.compile(loss="categorical_crossentropy", optimizer=sgd, metrics=["acc"])
    return model
"""

BLOCKS["subclassed_model"] = """
class $Name(keras.Model):
    def __init__(self, hidden=$units, num_classes=$classes, **kwargs):
        super($Name, self).__init__(**kwargs)
        self.hidden = hidden
        self.dense1 = layers.Dense(hidden, activation="relu")
        self.dense2 = layers.Dense(hidden // 2, activation=tf.nn.gelu)
        self.out = layers.Dense(num_classes)

    def call(self, inputs, training=False):
        x = self.dense1(inputs)
        x = tf.nn.dropout(x, rate=$rate) if training else x
        x = self.dense2(x)
        x = x + tf.reduce_mean(x, axis=1, keepdims=True)
        return self.out(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}
"""

BLOCKS["loss_fn"] = '''
def $fn(y_true, y_pred, gamma=$gamma, alpha=$alpha):
    """Focal loss ($adjective variant) for imbalanced labels."""
    y_true = tf.cast(y_true, tf.float32)
    y_pred = tf.clip_by_value(y_pred, K.epsilon(), 1.0 - K.epsilon())
    cross_entropy = -y_true * tf.math.log(y_pred)
    weight = alpha * y_true * tf.pow(1.0 - y_pred, gamma)
    loss = weight * cross_entropy
    return tf.reduce_sum(loss, axis=-1)


def ${fn}_smooth(y_true, y_pred):
    diff = K.abs(y_true - y_pred)
    less_than_one = K.cast(K.less(diff, 1.0), "float32")
    loss = less_than_one * 0.5 * diff ** 2 + (1 - less_than_one) * (diff - 0.5)
    return K.mean(loss, axis=-1)
'''

BLOCKS["loss_class"] = """
class $Name(keras.losses.Loss):
    def __init__(self, margin=$clip, reduction=keras.losses.Reduction.AUTO, name="$name_lower"):
        super().__init__(reduction=reduction, name=name)
        self.margin = margin

    def call(self, y_true, y_pred):
        y_true = tf.cast(y_true, y_pred.dtype)
        square_pred = tf.square(y_pred)
        margin_square = tf.square(tf.maximum(self.margin - y_pred, 0))
        return tf.reduce_mean(y_true * square_pred + (1 - y_true) * margin_square, axis=-1)

    def get_config(self):
        return {**super().get_config(), "margin": self.margin}
"""

BLOCKS["metric_class"] = """
class $Name(keras.metrics.Metric):
    def __init__(self, name="$name_lower", threshold=0.5, **kwargs):
        super().__init__(name=name, **kwargs)
        self.threshold = threshold
        self.tp = self.add_weight(name="tp", initializer="zeros")
        self.fp = self.add_weight(name="fp", initializer="zeros")
        self.fn = self.add_weight(name="fn", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.cast(y_pred > self.threshold, tf.float32)
        y_true = tf.cast(y_true, tf.float32)
        self.tp.assign_add(tf.reduce_sum(y_true * y_pred))
        self.fp.assign_add(tf.reduce_sum((1 - y_true) * y_pred))
        self.fn.assign_add(tf.reduce_sum(y_true * (1 - y_pred)))

    def result(self):
        precision = tf.math.divide_no_nan(self.tp, self.tp + self.fp)
        recall = tf.math.divide_no_nan(self.tp, self.tp + self.fn)
        return tf.math.divide_no_nan(2 * precision * recall, precision + recall)

    def reset_states(self):
        for variable in self.variables:
            K.set_value(variable, 0.0)
"""

BLOCKS["training_loop"] = """
@tf.function
def ${fn}_step(model, optimizer, loss_fn, x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
        loss += tf.add_n(model.losses) if model.losses else 0.0
    grads = tape.gradient(loss, model.trainable_weights)
    grads, _ = tf.clip_by_global_norm(grads, $clip)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    return loss


def $fn(model, dataset, epochs=$epochs, lr=$lr):
    optimizer = tf.keras.optimizers.Adam(learning_rate=lr)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc = tf.keras.metrics.SparseCategoricalAccuracy()
    summary_writer = tf.summary.create_file_writer("logs/$name_lower")
    for epoch in range(epochs):
        for step, (x, y) in enumerate(dataset):
            loss = ${fn}_step(model, optimizer, loss_fn, x, y)
            train_acc.update_state(y, model(x, training=False))
            if step % 100 == 0:
                with summary_writer.as_default():
                    tf.summary.scalar("loss", loss, step=optimizer.iterations)
                print("epoch %d step %d loss %.4f" % (epoch, step, float(loss)))
        print("accuracy", train_acc.result().numpy())
        train_acc.reset_states()
    return model
"""

BLOCKS["data_pipeline"] = """
def _${fn}_parse(record):
    features = {
        "image": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64),
    }
    parsed = tf.io.parse_single_example(record, features)
    image = tf.image.decode_jpeg(parsed["image"], channels=3)
    image = tf.image.resize(image, [$seq, $seq])
    image = tf.image.random_flip_left_right(image)
    image = tf.cast(image, tf.float32) / 255.0
    return image, tf.cast(parsed["label"], tf.int32)


def $fn(pattern, batch_size=$batch, shuffle=True):
    files = tf.data.Dataset.list_files(pattern, shuffle=shuffle)
    dataset = files.interleave(tf.data.TFRecordDataset, cycle_length=4,
                               num_parallel_calls=tf.data.experimental.AUTOTUNE)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=$buffer)
    dataset = dataset.map(_${fn}_parse, num_parallel_calls=tf.data.experimental.AUTOTUNE)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    return dataset.prefetch(tf.data.experimental.AUTOTUNE)
"""

BLOCKS["generator_fit"] = """
class ${Name}Sequence(keras.utils.Sequence):
    def __init__(self, x, y, batch_size=$batch):
        self.x, self.y, self.batch_size = x, y, batch_size

    def __len__(self):
        return int(np.ceil(len(self.x) / float(self.batch_size)))

    def __getitem__(self, idx):
        sl = slice(idx * self.batch_size, (idx + 1) * self.batch_size)
        return np.array(self.x[sl]), np.array(self.y[sl])


def $fn(model, x_train, y_train, x_val, y_val, epochs=$epochs):
    callbacks = [
        keras.callbacks.ModelCheckpoint("checkpoints/$name_lower.h5", save_best_only=True),
        keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=3),
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=$patience),
    ]
    history = model.fit_generator(
        ${Name}Sequence(x_train, y_train),
        steps_per_epoch=len(x_train) // $batch,
        validation_data=${Name}Sequence(x_val, y_val),
        epochs=epochs,
        callbacks=callbacks,
        workers=4,
        use_multiprocessing=True,
    )
    score = model.evaluate_generator(${Name}Sequence(x_val, y_val))
    K.set_value(model.optimizer.lr, K.get_value(model.optimizer.lr) * 0.1)
    return history, score
"""

BLOCKS["saving"] = """
def save_$obj(model, out_dir="exports/$name_lower"):
    model.save(out_dir + "/model.h5")
    model.save_weights(out_dir + "/weights.h5")
    tf.saved_model.save(model, out_dir + "/saved_model")
    with open(out_dir + "/architecture.json", "w") as handle:
        handle.write(model.to_json())
    return out_dir


def load_$obj(path, custom_objects=None):
    model = keras.models.load_model(path, custom_objects=custom_objects, compile=False)
    model.load_weights(path.replace("model.h5", "weights.h5"))
    return model
"""

BLOCKS["compat_v1"] = """
def ${fn}_graph(batch_size=$batch, dim=$units):
    graph = tf.compat.v1.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[batch_size, dim], name="x")
        w = tf.compat.v1.get_variable("w", shape=[dim, 1],
                                      initializer=tf.compat.v1.glorot_uniform_initializer())
        y = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(y))
        train_op = tf.compat.v1.train.AdamOptimizer($lr).minimize(loss)
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range($epochs):
            value, _ = sess.run([loss, train_op], feed_dict={x: np.zeros((batch_size, dim))})
    return value
"""

BLOCKS["distribute"] = """
def ${fn}_distributed(build_fn, dataset, epochs=$epochs):
    strategy = tf.distribute.MirroredStrategy()
    print("replicas:", strategy.num_replicas_in_sync)
    with strategy.scope():
        model = build_fn()
        model.compile(optimizer=keras.optimizers.RMSprop(lr=$lr), loss="mse")
    dist_dataset = strategy.experimental_distribute_dataset(dataset)
    model.fit(dist_dataset, epochs=epochs, verbose=2)
    return model
"""

BLOCKS["py_function"] = """
def _${fn}_numpy(values):
    return np.sort(values, axis=-1).astype(np.float32)


def ${fn}_tf(values):
    result = tf.py_function(_${fn}_numpy, [values], Tout=tf.float32)
    result.set_shape(values.shape)
    return tf.stop_gradient(result)
"""

BLOCKS["math_utils"] = """
def ${fn}_cosine(a, b, axis=-1):
    a = tf.nn.l2_normalize(a, axis=axis)
    b = tf.nn.l2_normalize(b, axis=axis)
    return tf.reduce_sum(a * b, axis=axis)


def ${fn}_topk(scores, k=$heads):
    values, indices = tf.math.top_k(scores, k=k, sorted=True)
    one_hot = tf.one_hot(indices, depth=tf.shape(scores)[-1])
    return values, tf.reduce_max(one_hot, axis=-2)


def ${fn}_masked_mean(x, mask):
    mask = tf.cast(mask, x.dtype)
    total = tf.reduce_sum(x * tf.expand_dims(mask, -1), axis=1)
    count = tf.maximum(tf.reduce_sum(mask, axis=1, keepdims=True), 1.0)
    return total / count


def ${fn}_gather(params, idx):
    flat = tf.reshape(params, [-1, tf.shape(params)[-1]])
    return tf.gather(flat, idx, axis=0)
"""

BLOCKS["lambda_model"] = """
def $fn(seq_len=$seq, vocab=$vocab, units=$units):
    tokens = keras.layers.Input(shape=(seq_len,), dtype="int32")
    x = layers.Embedding(vocab, units, mask_zero=True)(tokens)
    x = layers.Bidirectional(layers.LSTM(units // 2, return_sequences=True))(x)
    x = layers.Lambda(lambda t: tf.reduce_max(t, axis=1))(x)
    x = layers.Lambda(lambda t: K.l2_normalize(t, axis=-1))(x)
    scale = tf.sqrt(tf.cast(units, tf.float32))
    x = x * scale
    out = layers.Dense(1, activation="sigmoid")(x)
    model = keras.models.Model(tokens, out)
    model.compile(keras.optimizers.Adam(lr=$lr), loss=keras.losses.binary_crossentropy)
    return model
"""

BLOCKS["tf_test"] = """
class ${Name}Test(tf.test.TestCase):
    def setUp(self):
        super().setUp()
        tf.random.set_seed($seed)
        np.random.seed($seed)

    def test_shapes(self):
        x = tf.random.normal((2, $seq, $units))
        y = tf.reduce_sum(x, axis=-1)
        self.assertEqual(y.shape, (2, $seq))

    def test_values(self):
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        self.assertAllClose(tf.reduce_mean(x), 2.5)
        self.assertAllEqual(tf.argmax(x, axis=1), [1, 1])
"""

BLOCKS["keras2_misc"] = """
def ${fn}_legacy(model, x):
    lr = K.get_value(model.optimizer.lr)
    K.set_value(model.optimizer.lr, lr * $rate)
    get_features = K.function([model.input, K.learning_phase()], [model.layers[-2].output])
    features = get_features([x, 0])[0]
    tf.keras.backend.clear_session()
    config = model.get_config()
    clone = keras.models.model_from_config(config)
    clone.set_weights(model.get_weights())
    return features, clone
"""

BLOCKS["variables_in_layer"] = """
class $Name(layers.Layer):
    def __init__(self, units=$units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.counter = tf.Variable(0, trainable=False, dtype=tf.int64)
        self.table = tf.constant(np.arange($vocab, dtype=np.float32))

    def build(self, input_shape):
        self.w = tf.Variable(
            tf.random.truncated_normal([int(input_shape[-1]), self.units], stddev=0.02),
            name="w",
        )
        self.b = tf.Variable(tf.zeros([self.units]), name="b")

    def call(self, inputs):
        self.counter.assign_add(1)
        return tf.nn.bias_add(tf.matmul(inputs, self.w), self.b)
"""

BLOCKS["estimator_style"] = """
def ${fn}_input_fn(features, labels, batch_size=$batch, training=True):
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    if training:
        dataset = dataset.shuffle($buffer).repeat()
    return dataset.batch(batch_size)


def ${fn}_feature_columns(numeric_keys, bucket_key=None):
    columns = [tf.feature_column.numeric_column(key) for key in numeric_keys]
    if bucket_key is not None:
        column = tf.feature_column.numeric_column(bucket_key)
        columns.append(tf.feature_column.bucketized_column(column, boundaries=[0, 10, 100]))
    return columns
"""

PLAIN_BLOCKS: dict[str, str] = {}

PLAIN_BLOCKS["config"] = '''
DEFAULTS_$upper = {
    "batch_size": $batch,
    "learning_rate": $lr,
    "epochs": $epochs,
    "hidden_units": [$units, $half],
    "dropout": $rate,
}


def ${fn}_config(path=None, overrides=None):
    """Read a JSON config, falling back to the defaults."""
    import json

    config = dict(DEFAULTS_$upper)
    if path is not None:
        with open(path) as handle:
            config.update(json.load(handle))
    for key, value in (overrides or {}).items():
        if key not in config:
            raise KeyError("unknown config key: %s" % key)
        config[key] = value
    return config
'''

PLAIN_BLOCKS["cli"] = """
def ${fn}_parser():
    import argparse

    parser = argparse.ArgumentParser(description="$adjective experiment runner")
    parser.add_argument("--data-dir", default="data/")
    parser.add_argument("--epochs", type=int, default=$epochs)
    parser.add_argument("--batch-size", type=int, default=$batch)
    parser.add_argument("--seed", type=int, default=$seed)
    parser.add_argument("--verbose", action="store_true")
    return parser


def ${fn}_main(argv=None):
    args = ${fn}_parser().parse_args(argv)
    if args.verbose:
        print("running with", vars(args))
    return 0
"""

PLAIN_BLOCKS["metrics_np"] = '''
class ${Name}Tracker:
    """Running averages of named values, in plain Python."""

    def __init__(self):
        self.totals = {}
        self.counts = {}

    def update(self, name, value, n=1):
        self.totals[name] = self.totals.get(name, 0.0) + value * n
        self.counts[name] = self.counts.get(name, 0) + n

    def result(self, name):
        count = self.counts.get(name, 0)
        return self.totals.get(name, 0.0) / count if count else float("nan")

    def summary(self):
        return {name: self.result(name) for name in sorted(self.totals)}
'''

# Block mixes per package folder: which blocks a file in that folder draws from.
PACKAGE_BLOCKS: dict[str, tuple[str, ...]] = {
    "models": (
        "functional_model",
        "sequential_model",
        "subclassed_model",
        "lambda_model",
        "attention_layer",
        "saving",
    ),
    "layers": (
        "norm_layer",
        "attention_layer",
        "noise_layer",
        "sampling_layer",
        "conv_block",
        "embedding_layer",
        "gated_unit",
        "variables_in_layer",
    ),
    "losses": ("loss_fn", "loss_class", "metric_class", "math_utils"),
    "data": ("data_pipeline", "estimator_style", "py_function", "math_utils"),
    "training": ("training_loop", "generator_fit", "distribute", "keras2_misc", "compat_v1"),
    "utils": ("math_utils", "py_function", "keras2_misc", "saving"),
    "serving": ("saving", "compat_v1", "functional_model"),
    "experiments": tuple(BLOCKS),
}


def _values(rng: random.Random, names: Names) -> dict[str, str]:
    name = names.cls()
    units = rng.choice((32, 64, 128, 256, 512))
    return {
        "Name": name,
        "name_lower": "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_"),
        "upper": names.obj().upper(),
        "adjective": rng.choice(_ADJECTIVES).lower(),
        "fn": names.fn(),
        "obj": names.obj(),
        "units": str(units),
        "half": str(units // 2),
        "heads": str(rng.choice((2, 4, 8))),
        "rate": str(rng.choice((0.1, 0.2, 0.25, 0.3, 0.5))),
        "eps": rng.choice(("1e-6", "1e-5", "1e-3")),
        "std": str(rng.choice((0.01, 0.05, 0.1))),
        "filters": str(rng.choice((16, 32, 64))),
        "filters2": str(rng.choice((64, 128))),
        "kernel": str(rng.choice((3, 5))),
        "vocab": str(rng.choice((1000, 5000, 20000))),
        "seq": str(rng.choice((16, 32, 64, 128, 224))),
        "classes": str(rng.choice((2, 10, 100, 1000))),
        "act": rng.choice(("relu", "gelu", "swish", "tanh")),
        "clip": str(rng.choice((1.0, 5.0, 10.0))),
        "lr": rng.choice(("1e-3", "3e-4", "0.01", "0.001")),
        "gamma": str(rng.choice((1.0, 2.0))),
        "alpha": str(rng.choice((0.25, 0.5))),
        "epochs": str(rng.choice((5, 10, 20, 50))),
        "batch": str(rng.choice((16, 32, 64, 128))),
        "buffer": str(rng.choice((1000, 10000))),
        "patience": str(rng.choice((3, 5, 10))),
        "seed": str(rng.randrange(1000)),
    }


def _fill(template: str, values: dict[str, str]) -> str:
    return Template(textwrap.dedent(template).strip("\n")).substitute(values) + "\n"


def make_module(rng: random.Random, package: str, index: int, plain: bool) -> str:
    names = Names(rng)
    docstring = (
        f'"""{rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS).lower()} utilities '
        f'({package}, module {index}).\n\nGenerated benchmark code in legacy TF 2.x style.\n"""'
    )
    parts = [docstring, "from __future__ import absolute_import, division, print_function", ""]
    if plain:
        parts += ["import math", "import os", ""]
        pool = tuple(PLAIN_BLOCKS.values())
        count = rng.randint(3, 8)
    else:
        parts.append(textwrap.dedent(rng.choice(HEADERS)).strip("\n"))
        parts.append("")
        pool = tuple(BLOCKS[name] for name in PACKAGE_BLOCKS[package])
        # Most modules are small; a few are the long ones every repository has.
        count = (
            rng.choice((3, 4, 5, 6, 6, 7, 8, 10, 12))
            if rng.random() > 0.05
            else rng.randint(20, 36)
        )
    for _ in range(count):
        parts.append("")
        parts.append(_fill(rng.choice(pool), _values(rng, names)))
    if not plain and rng.random() < 0.3:
        parts += ["", 'if __name__ == "__main__":', "    tf.compat.v1.enable_eager_execution()"]
    return "\n".join(parts).rstrip("\n") + "\n"


def generate(out: Path, files: int, seed: int) -> dict[str, object]:
    """Write ``files`` modules under ``out`` (replacing it); return a manifest."""
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    written: list[tuple[str, str]] = []
    per_project = max(1, files // len(_PROJECTS))
    index = 0
    while index < files:
        project = _PROJECTS[(index // per_project) % len(_PROJECTS)]
        project_index = index // (per_project * len(_PROJECTS))
        root = f"{project}_{project_index}" if project_index else project
        package = rng.choice(_PACKAGES)
        plain = rng.random() < 0.12
        relative = f"{root}/{package}/{Names(rng).fn()}_{index:04d}.py"
        written.append((relative, make_module(rng, package, index, plain)))
        index += 1
    lines = 0
    digest = hashlib.sha256()
    for relative, text in written:
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        init = path.parent / "__init__.py"
        if not init.exists():
            init.write_text("")
            (path.parent.parent / "__init__.py").write_text("")
        path.write_text(text, encoding="utf-8")
        lines += text.count("\n")
        digest.update(relative.encode() + b"\0" + text.encode())
    manifest = {
        "generator": generator_version(),
        "seed": seed,
        "files": len(written),
        "lines": lines,
        "bytes": sum(len(t.encode()) for _, t in written),
        "sha256": digest.hexdigest(),
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    # The corpus is a project of its own: scans from anywhere use its root, not kmigrate's.
    (out / "pyproject.toml").write_text('[project]\nname = "legacy-corpus"\n\n[tool.kmigrate]\n')
    return manifest


def generator_version() -> str:
    """A digest of this script: a corpus made by another version is regenerated."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def check_parses(out: Path) -> list[str]:
    """Paths of generated files that do not parse (should be none)."""
    bad = []
    for path in sorted(out.rglob("*.py")):
        try:
            ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError as error:
            bad.append(f"{path}: {error}")
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="[benchmarks/corpus]")
    parser.add_argument("--files", type=int, default=DEFAULT_FILES, help="modules to write")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed")
    parser.add_argument("--check", action="store_true", help="verify every file parses")
    args = parser.parse_args(argv)
    manifest = generate(args.out, args.files, args.seed)
    print(
        f"wrote {manifest['files']} files, {manifest['lines']} lines, "
        f"{manifest['bytes'] / 1e6:.1f} MB to {args.out} (sha256 {str(manifest['sha256'])[:12]})"
    )
    if args.check:
        bad = check_parses(args.out)
        for line in bad:
            print(line, file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
