"""KM305: `tf.random.set_seed`, which seeds only TensorFlow."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallEdit, CallSite, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.km3_random._rewrite import is_none
from kmigrate.rules.km3_random._table import SET_SEED


class TfSetSeed(Rule):
    id = "KM305"
    name = "tf-set-seed"
    summary = "`tf.random.set_seed` seeds only TensorFlow; use `keras.utils.set_random_seed`."
    rationale = (
        "On the JAX or PyTorch backend `tf.random.set_seed` leaves keras.random, NumPy and "
        "Python's `random` unseeded, so runs are not reproducible. "
        "`keras.utils.set_random_seed(n)` seeds Python, NumPy, TensorFlow (when installed), "
        "PyTorch on the torch backend, and Keras's global SeedGenerator."
    )
    fix_safety = (
        "A superset of the original: it still calls tf.random.set_seed(n) when TensorFlow is "
        "installed (keras/src/utils/rng_utils.py) and also seeds Python, NumPy and the backend. "
        "keras.utils.set_random_seed needs an int: a literal None is reported instead, and a "
        "non-int variable raises ValueError at run time (loudly)."
    )
    severity = Severity.WARNING
    call_symbols = SET_SEED
    examples = [
        Flagged(
            """
            import tensorflow as tf

            tf.random.set_seed(42)
            """,
            """
            import keras

            keras.utils.set_random_seed(42)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            tf.random.set_seed(None)
            """
        ),
        Clean(
            """
            import keras

            keras.utils.set_random_seed(42)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        seed = site.arg(0, "seed")
        message = f"`{site.symbol}` seeds only TensorFlow, not the Keras backend, NumPy or Python"
        if site.has_star_args or seed is None or is_none(seed):
            yield Report(
                site,
                f"{message}; keras.utils.set_random_seed needs an int seed (use it, or drop "
                "the call to keep unseeded runs)",
            )
            return
        yield Report(
            site,
            f"{message}: use `keras.utils.set_random_seed`",
            fix=EditPlan(
                (CallEdit(site.span, "keras.utils.set_random_seed"),),
                "use keras.utils.set_random_seed",
            ),
        )
