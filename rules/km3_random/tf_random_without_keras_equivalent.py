"""KM304: TensorFlow random ops in model code with no exact `keras.random` rewrite."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.km3_random._table import (
    GENERATOR_PREFIXES,
    NOT_A_DRAW,
    SET_SEED,
    TF_RANDOM,
    TF_RANDOM_PREFIXES,
)

# Why a TF random function has no keras.random rewrite (first matching fragment wins).
_NO_EQUIVALENT: tuple[tuple[str, str], ...] = (
    (
        "stateless_",
        "a stateless op returns the same numbers for the same seed, and keras.random has no "
        "tensor seeds. If you want a fresh draw per call (the usual intent), use "
        "keras.random.{name}(..., seed=self.seed_generator) with a keras.random.SeedGenerator "
        "made in __init__; if the code relies on repeating the numbers, pass the same Python "
        "int seed instead",
    ),
    ("poisson", "keras.random has no Poisson sampler"),
    (
        "candidate_sampler",
        "candidate sampling has no Keras equivalent; keep it in TensorFlow-only code "
        "(a tf.data pipeline or a TensorFlow-backend-only loss)",
    ),
    (
        "split",
        "seed splitting is TensorFlow RNG plumbing: let a keras.random.SeedGenerator hand out "
        "the seeds",
    ),
    ("fold_in", "seed folding is TensorFlow RNG plumbing: use a keras.random.SeedGenerator"),
    (
        "index_shuffle",
        "no Keras equivalent: permute with ops.argsort(keras.random.uniform((n,), seed=...))",
    ),
    ("create_rng_state", "TensorFlow RNG state: use a keras.random.SeedGenerator"),
)


class TfRandomWithoutKerasEquivalent(Rule):
    id = "KM304"
    name = "tf-random-no-keras-equivalent"
    summary = "A TensorFlow random op in model code that has no exact `keras.random` rewrite."
    rationale = (
        "Stateless TF ops, Poisson sampling, candidate samplers and seed plumbing run only on "
        "the TensorFlow backend, and their semantics (tensor seeds, returning the same numbers "
        "for the same seed) do not map one-to-one onto keras.random."
    )
    fix_safety = "Never fixed: the message says what to use instead."
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL})
    call_prefixes = (*TF_RANDOM_PREFIXES, "tf.nn.experimental.stateless_dropout")
    examples = [
        Flagged(
            """
            import keras
            import tensorflow as tf


            class Noise(keras.layers.Layer):
                def call(self, x, seed):
                    return x + tf.random.stateless_normal(tf.shape(x), seed=seed)
            """
        ),
        Clean(
            """
            import tensorflow as tf

            counts = tf.random.poisson([10], lam=3.0)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        symbol = site.symbol
        if (
            symbol in TF_RANDOM
            or symbol in SET_SEED
            or symbol in NOT_A_DRAW
            or symbol.startswith(GENERATOR_PREFIXES)
        ):
            return
        reason = next(
            (why for fragment, why in _NO_EQUIVALENT if fragment in symbol),
            "it has no keras.random equivalent",
        ).format(name=symbol.rsplit("stateless_", 1)[-1])
        yield Report(site, f"`{symbol}` only runs on the TensorFlow backend: {reason}")
