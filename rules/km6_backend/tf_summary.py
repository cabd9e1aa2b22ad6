"""KM606: `tf.summary` logging."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule


class TfSummary(Rule):
    id = "KM606"
    name = "tf-summary"
    summary = "`tf.summary` logging: TensorFlow-only; inside a model it breaks other backends."
    rationale = (
        "`tf.summary` writes TensorBoard events through TensorFlow ops. With `model.fit`, "
        "`keras.callbacks.TensorBoard` logs losses and metrics on every backend (it needs "
        "TensorFlow installed only to write files). Values computed inside a model belong "
        "in a metric (`keras.metrics.Mean` updated in `call`/`train_step`)."
    )
    fix_safety = "Never rewritten: logging is restructured around callbacks and metrics."
    severity = Severity.INFO
    call_prefixes = ("tf.summary.", "tf.compat.v1.summary.")
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Probe(tf.keras.layers.Layer):
                def call(self, x):
                    tf.summary.histogram("activations", x)
                    return x
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            writer = tf.summary.create_file_writer("logs")
            """
        ),
        Clean(
            """
            import keras

            callbacks = [keras.callbacks.TensorBoard("logs")]
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context == Context.DATA:
            return
        if site.context == Context.MODEL:
            yield Report(
                site,
                f"`{site.symbol}` inside model code runs only on TensorFlow: track the value "
                "with a `keras.metrics.Mean` and log it with `keras.callbacks.TensorBoard`",
                severity=Severity.ERROR,
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` is TensorFlow-only logging: with `model.fit`, "
            "`keras.callbacks.TensorBoard` works on every backend",
        )
