"""KM604: `tf.py_function` / `tf.numpy_function` outside a data pipeline."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule


class TfPyFunction(Rule):
    id = "KM604"
    name = "tf-py-function"
    summary = "`tf.py_function` / `tf.numpy_function` outside a data pipeline."
    rationale = (
        "These wrap Python code as a TensorFlow op: fine inside a `tf.data` pipeline, but "
        "model code using them cannot be traced by JAX or PyTorch (nor exported). Inside a "
        "model, express the computation with `keras.ops`; otherwise move it to the input "
        "pipeline."
    )
    fix_safety = "Never rewritten: the wrapped Python function must be ported by hand."
    severity = Severity.ERROR
    call_symbols = frozenset(
        {"tf.py_function", "tf.numpy_function", "tf.py_func", "tf.compat.v1.py_func"}
    )
    examples = [
        Flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Median(tf.keras.layers.Layer):
                def call(self, x):
                    return tf.numpy_function(lambda a: np.median(a, axis=-1), [x], tf.float32)
            """
        ),
        Clean(
            """
            import tensorflow as tf

            def load(path):
                return tf.py_function(read_image, [path], tf.float32)

            dataset = tf.data.Dataset.list_files("*.png").map(load)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context == Context.DATA:
            return
        if site.context == Context.MODEL:
            yield Report(
                site,
                f"`{site.symbol}` in model code cannot run on JAX or PyTorch: rewrite the "
                "wrapped function with `keras.ops`, or do it in the input pipeline",
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` runs Python as a TensorFlow op: fine in a `tf.data` "
            "pipeline, TensorFlow-only elsewhere",
            severity=Severity.INFO,
        )
