"""KM605: `tf.data` or `.numpy()` inside model code."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule


class EagerOnlyInModel(Rule):
    id = "KM605"
    name = "eager-only-in-model"
    summary = "`tf.data` or `.numpy()` inside model code (`call`, losses, metrics)."
    rationale = (
        "Model code runs on symbolic tensors while Keras builds the model and inside a "
        "compiled step during `fit`, on every backend: `.numpy()` needs a concrete eager "
        "tensor and `tf.data` builds input pipelines, not layer computations. Both belong "
        "outside the model: feed the model a dataset, and keep values as tensors with "
        "`keras.ops` inside it."
    )
    fix_safety = "Never rewritten: the computation has to move out of the model."
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL})
    call_prefixes = ("tf.data.",)
    method_names = frozenset({"numpy"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Threshold(tf.keras.layers.Layer):
                def call(self, x):
                    if x.numpy().max() > 1:
                        x = x / 255.0
                    return x
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            class Windows(tf.keras.layers.Layer):
                def call(self, x):
                    return tf.data.Dataset.from_tensor_slices(x).batch(4)
            """
        ),
        Clean(
            """
            import tensorflow as tf

            def make_dataset(images):
                return tf.data.Dataset.from_tensor_slices(images).batch(32)

            def report(model, x):
                print(model(x).numpy().mean())
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.symbol == "<method>.numpy":
            if site.args or site.keywords:
                return
            yield Report(
                site,
                "`.numpy()` in model code fails on symbolic tensors and inside compiled "
                "steps on every backend: keep the value a tensor and use `keras.ops`",
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` inside model code: `tf.data` builds input pipelines; build "
            "the dataset outside the model and pass it to `fit`",
        )
