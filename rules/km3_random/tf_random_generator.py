"""KM306: `tf.random.Generator`, TensorFlow's RNG object."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.km3_random._table import GENERATOR_PREFIXES


class TfRandomGenerator(Rule):
    id = "KM306"
    name = "tf-random-generator"
    summary = "`tf.random.Generator` (TensorFlow's RNG object) in code that should be portable."
    rationale = (
        "A `tf.random.Generator` holds TensorFlow state and returns TensorFlow tensors. "
        "Its Keras 3 counterpart is `keras.random.SeedGenerator`, passed as `seed=` to the "
        "`keras.random` functions."
    )
    fix_safety = (
        "Never fixed: the generator's methods (`g.normal(shape)`) must each become "
        "`keras.random.normal(shape, seed=g)`, and `split`/`make_seeds` have no counterpart. "
        "Once the attribute is a keras.random.SeedGenerator, KM301 reuses it."
    )
    severity = Severity.WARNING
    contexts = frozenset({Context.MODEL, Context.TRAINING_LOOP, Context.OTHER})
    call_prefixes = GENERATOR_PREFIXES
    examples = [
        Flagged(
            """
            import keras
            import tensorflow as tf


            class Noise(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.rng = tf.random.Generator.from_seed(1)

                def call(self, x):
                    return x + self.rng.normal(tf.shape(x))
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            rng = tf.random.get_global_generator()
            """
        ),
        Clean(
            """
            import keras

            rng = keras.random.SeedGenerator(1)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context == Context.MODEL:
            yield Report(
                site,
                f"`{site.symbol}` is TensorFlow-only RNG state in model code: make it "
                "`keras.random.SeedGenerator(seed)` and call `keras.random.normal(shape, "
                "seed=<it>)` (etc.) instead of its methods",
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` keeps TensorFlow RNG state: fine in TensorFlow-only scripts; for a "
            "backend-agnostic script use keras.random.* with a keras.random.SeedGenerator",
            severity=Severity.INFO,
        )
