"""KM205: a TensorFlow or Keras 2 backend call in model code that the ops catalog does
not know and no other rule reports."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Fallback, Flagged, Report, Rule
from kmigrate.rules.common.keras_api import keras3_reference
from kmigrate.rules.ops_catalog import lookup

# Keras 2 under TensorFlow's other names (``tensorflow.python.keras`` is its private
# copy): Keras classes, not TensorFlow ops, with a Keras 3 form this rule's message would
# deny. ``tf.losses.X`` is canonically ``tf.keras.losses.X``; what keeps the ``tf.losses.``
# spelling is a name TF1 shares with Keras, which KM107 reports.
_KERAS_ALIASES = (
    "tf.python.keras.",
    "tf.compat.v1.keras.",
    "tf.losses.",
    "tf.initializers.",
    "tf.metrics.",
)


class TfOpNotInCatalog(Rule):
    id = "KM205"
    name = "tf-op-not-in-catalog"
    summary = (
        "A TensorFlow or Keras 2 backend call in model code that kmigrate's ops catalog "
        "does not know."
    )
    rationale = (
        "Model code must run on every backend after the migration, and a TensorFlow call "
        "kmigrate has no entry for (tf.compat.v1 image ops, rarely used tf.* functions, "
        "backend functions a library added to K) stays as it is: without a finding, the "
        "report would count the model as portable while it still needs TensorFlow."
    )
    fix_safety = (
        "Never rewritten: kmigrate knows no exact Keras 3 form for it. Port it by hand "
        "(keras.ops, or move it out of the model), or add it to the catalog with a "
        "differential test."
    )
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL, Context.UNDECIDED})
    call_prefixes = ("tf.", "K.")
    # A call another rule reports, in any context, is one kmigrate knows (KM3 random
    # draws, KM203 variables, KM6 summaries...): "no Keras 3 form" would be false of it.
    fallback = Fallback.ANY_CONTEXT
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Glimpse(keras.layers.Layer):
                def call(self, x, offsets):
                    return tf.image.extract_glimpse(x, (8, 8), offsets)
            """
        ),
        Clean(
            """
            import tensorflow as tf


            def load(path):
                return tf.image.extract_glimpse(tf.io.decode_png(path)[None], (8, 8), [[0.0, 0.0]])
            """
        ),
        Clean(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Mean(keras.layers.Layer):
                def call(self, x):
                    return tf.reduce_mean(x, axis=-1)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        symbol = site.symbol
        if lookup(symbol) is not None or _in_keras3(symbol):
            return
        family = "Keras 2 backend" if symbol.startswith("K.") else "TensorFlow"
        undecided = site.context is Context.UNDECIDED  # the analysis says why
        yield Report(
            site,
            f"`{symbol}` is a {family} call kmigrate has no Keras 3 form for (it is not "
            "in the ops catalog), so it is not rewritten and keeps this model on "
            "TensorFlow: port it by hand (keras.ops, or move it out of the model)",
            severity=Severity.WARNING if undecided else None,
        )


def _in_keras3(symbol: str) -> bool:
    """Keras 2 spellings of Keras classes, and backend functions Keras 3's
    ``keras.backend`` still has (``K.clear_session``)."""
    if symbol.startswith(_KERAS_ALIASES):
        return True
    return symbol.startswith("K.") and keras3_reference("backend." + symbol[2:]) is not None
