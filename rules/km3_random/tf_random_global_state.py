"""KM307: TensorFlow's global-state random ops outside model code."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.km3_random._rewrite import short_symbol
from kmigrate.rules.km3_random._table import (
    GENERATOR_PREFIXES,
    NOT_A_DRAW,
    SET_SEED,
    TF_RANDOM,
    TF_RANDOM_PREFIXES,
)


class TfRandomGlobalState(Rule):
    id = "KM307"
    name = "tf-random-global-state"
    summary = "TensorFlow's global-state random ops outside model code (scripts, training loops)."
    rationale = (
        "Outside layers, `tf.random.*` works on any backend as long as TensorFlow is installed, "
        "but the numbers are TensorFlow tensors from TensorFlow's global RNG. A script meant to "
        "run without TensorFlow, or seeded only through Keras, should draw with keras.random "
        "(with a SeedGenerator) or NumPy. Inside tf.data pipelines tf.random is the right tool "
        "and is not reported."
    )
    fix_safety = "Never fixed (informational): the code works; it is a dependency on TensorFlow."
    severity = Severity.INFO
    contexts = frozenset({Context.TRAINING_LOOP, Context.OTHER})
    call_prefixes = TF_RANDOM_PREFIXES
    call_symbols = frozenset(s for s in TF_RANDOM if not s.startswith(TF_RANDOM_PREFIXES))
    examples = [
        Flagged(
            """
            import tensorflow as tf

            x_train = tf.random.normal((256, 8))
            """
        ),
        Clean(
            """
            import tensorflow as tf

            tf.random.set_seed(1)
            dataset = tf.data.Dataset.range(8).map(lambda i: tf.random.uniform(()))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        symbol = site.symbol
        if symbol in SET_SEED or symbol in NOT_A_DRAW or symbol.startswith(GENERATOR_PREFIXES):
            return
        mapping = TF_RANDOM.get(symbol)
        instead = f"keras.{short_symbol(mapping.target)}" if mapping else "keras.random / NumPy"
        yield Report(
            site,
            f"`{symbol}` draws from TensorFlow's global RNG: fine with TensorFlow installed; for "
            f"backend-agnostic code use {instead} with a keras.random.SeedGenerator, seeded via "
            "keras.utils.set_random_seed",
        )
