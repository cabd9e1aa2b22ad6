"""KM301: `tf.random.*` / `tf.nn.dropout` in model code, rewritten to `keras.random.*`."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.km3_random._seed_generator import layer_report
from kmigrate.rules.km3_random._table import TF_RANDOM


class TfRandomInLayer(Rule):
    id = "KM301"
    name = "tf-random-in-layer"
    summary = (
        "`tf.random.*` / `tf.nn.dropout` in model code; Keras 3 uses `keras.random.*` with "
        "a SeedGenerator the layer owns."
    )
    rationale = (
        "TensorFlow's stateful random ops return TensorFlow tensors and keep their state in "
        "TensorFlow's global RNG, so a layer using them only runs on the TensorFlow backend. "
        "`keras.random` functions are stateless and take their state from a "
        "`keras.random.SeedGenerator`; as a layer attribute its state is tracked by the layer, "
        "which is what makes the draws change from call to call under `jax.jit`, and the "
        "layer's `seed` argument makes them reproducible and round-trips through `.keras`."
    )
    fix_safety = (
        "Exact in distribution, not in the numbers: TensorFlow's stateful RNG and the Keras "
        "stateless RNG are different generators, so the draws differ (as between two TF "
        "seeds); same seed -> same numbers, and every call draws anew. Checked against "
        "keras/src/backend/{tensorflow,jax,torch}/random.py: normal, uniform and dropout "
        "(which scales the kept units by 1/(1-rate), like tf.nn.dropout) are the same "
        "distributions; integer tf.random.uniform becomes random.randint; "
        'tf.random.categorical becomes random.categorical with dtype="int64" '
        "(Keras defaults to int32; JAX without x64 still returns int32); tf.random.shuffle(x) "
        "becomes ops.take(x, ops.argsort(random.uniform(ops.shape(x)[:1])), axis=0), the "
        "argsort-of-uniforms permutation Keras's TF and PyTorch backends use, because "
        "keras.random.shuffle on JAX shuffles each column of a 2-D tensor independently "
        "and cannot trace a None batch dimension; "
        "tf.random.gamma only with a scalar literal alpha and no beta (TF draws "
        "shape + alpha.shape samples); truncated_normal on PyTorch redraws at most 4 times, "
        "so about 4 in a million samples lie outside 2 stddev. Omitted dtypes follow "
        "keras.config.floatx() (float32 unless changed) where TF uses float32. An int op "
        "seed becomes the default of the layer's `seed` argument. Manual: tensor seeds, "
        "draws in a function reached from a layer and from a tf.data map (a warning), "
        "draws outside a layer, in lambdas or in nested functions the method passes on "
        "(a helper it only calls right there draws with the layer's generator), in "
        "Loss/Metric classes, "
        "gamma with beta or array alpha, shuffle of an expression."
    )
    severity = Severity.ERROR
    # Undecided code (reached from a layer and from a tf.data map) gets a manual warning:
    # the draw is right in the map and wrong in the layer, so a person splits it.
    contexts = frozenset({Context.MODEL, Context.UNDECIDED})
    call_symbols = frozenset(TF_RANDOM)
    examples = [
        Flagged(
            """
            import keras
            import tensorflow as tf
            from keras import ops


            class Sampling(keras.layers.Layer):
                \"\"\"z = mean + exp(log_var / 2) * eps.\"\"\"

                def call(self, inputs):
                    z_mean, z_log_var = inputs
                    epsilon = tf.random.normal(shape=ops.shape(z_mean))
                    return z_mean + ops.exp(0.5 * z_log_var) * epsilon
            """,
            """
            import keras
            from keras import ops


            class Sampling(keras.layers.Layer):
                \"\"\"z = mean + exp(log_var / 2) * eps.\"\"\"

                def __init__(self, seed=None, **kwargs):
                    super().__init__(**kwargs)
                    self.seed = seed
                    self.seed_generator = keras.random.SeedGenerator(seed)

                def call(self, inputs):
                    z_mean, z_log_var = inputs
                    epsilon = keras.random.normal(shape=ops.shape(z_mean), seed=self.seed_generator)
                    return z_mean + ops.exp(0.5 * z_log_var) * epsilon
            """,
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf
            from keras import ops


            class NoisyDropout(keras.layers.Layer):
                def __init__(self, rate, **kwargs):
                    super().__init__(**kwargs)
                    self.rate = rate

                def call(self, x, training=False):
                    if not training:
                        return x
                    noise = tf.random.uniform(ops.shape(x), -0.1, 0.1, dtype=tf.float32)
                    return tf.nn.dropout(x + noise, rate=self.rate)

                def get_config(self):
                    config = super().get_config()
                    config.update({"rate": self.rate})
                    return config
            """,
            """
            import keras
            from keras import ops


            class NoisyDropout(keras.layers.Layer):
                def __init__(self, rate, seed=None, **kwargs):
                    super().__init__(**kwargs)
                    self.seed = seed
                    self.seed_generator = keras.random.SeedGenerator(seed)
                    self.rate = rate

                def call(self, x, training=False):
                    if not training:
                        return x
                    noise = keras.random.uniform(ops.shape(x), -0.1, 0.1, dtype="float32", seed=self.seed_generator)
                    return keras.random.dropout(x + noise, rate=self.rate, seed=self.seed_generator)

                def get_config(self):
                    config = super().get_config()
                    config.update({"rate": self.rate})
                    return {**config, "seed": self.seed}
            """,  # noqa: E501
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf


            class Sampler(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.rng = keras.random.SeedGenerator(7)

                def call(self, logits, rows):
                    picks = tf.random.categorical(logits, 4, seed=3)
                    return picks, tf.random.shuffle(rows)
            """,
            """
            import keras


            class Sampler(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.rng = keras.random.SeedGenerator(7)

                def call(self, logits, rows):
                    picks = keras.random.categorical(logits, 4, dtype="int64", seed=self.rng)
                    return picks, keras.ops.take(rows, keras.ops.argsort(keras.random.uniform(keras.ops.shape(rows)[:1], seed=self.rng)), axis=0)
            """,  # noqa: E501
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf


            class Jitter(keras.layers.Layer):
                def call(self, x):
                    return x * tf.random.gamma([4], alpha=2.0, beta=0.5)
            """
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf


            def add_noise(x):
                return x + tf.random.normal(tf.shape(x))


            noise = keras.layers.Lambda(add_noise)
            """
        ),
        Flagged(
            """
            import keras
            import tensorflow as tf


            def jitter(x):
                return x + tf.random.normal(tf.shape(x), stddev=0.1)


            class Noisy(keras.layers.Layer):
                def call(self, x):
                    return jitter(x)


            dataset = tf.data.Dataset.range(8).map(lambda i: jitter(tf.cast(i, "float32")))
            """
        ),
        Clean(
            """
            import keras
            import tensorflow as tf


            class Noise(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.seed_generator = keras.random.SeedGenerator(1)

                def call(self, x):
                    return x + keras.random.normal(tf.shape(x), seed=self.seed_generator)


            dataset = tf.data.Dataset.range(8).map(lambda i: tf.random.uniform(()))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        report = layer_report(
            site, TF_RANDOM[site.symbol], "draws from TensorFlow's RNG (TensorFlow backend only)"
        )
        if site.context is Context.UNDECIDED:  # the analysis adds why, and keeps no fix
            report.severity = Severity.WARNING
        yield report
