"""KM107: `tf.losses.X`, `tf.metrics.X` or `tf.initializers.X` whose name TensorFlow 1
and Keras both have, with different meanings."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ReferenceSite
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras_api import keras3_reference
from kmigrate.rules.common.tf_keras_aliases import AMBIGUOUS_PREFIXES
from kmigrate.rules.ops_catalog import lookup

# What the TensorFlow 1 function of each module is, and how its port differs.
_TF1_MEANING = {
    "losses": (
        "TensorFlow 1's `tf.compat.v1.losses.{name}(labels, predictions, weights=1.0, ...)`, "
        "which returns one weighted scalar, not Keras's loss per sample"
    ),
    "metrics": (
        "TensorFlow 1's streaming `tf.compat.v1.metrics.{name}(labels, predictions, ...)`, "
        "which returns a (value, update_op) pair for a session"
    ),
    "initializers": (
        "TensorFlow 1's `tf.compat.v1.initializers.{name}`, whose constructor takes a "
        "`dtype` and whose defaults may differ from Keras's"
    ),
}
_TF1_CLASSES = {
    "losses.Reduction": (
        "TensorFlow 1's `tf.compat.v1.losses.Reduction` (whose default, "
        "SUM_BY_NONZERO_WEIGHTS, Keras never had)"
    ),
}


class Tf1OrKerasAlias(Rule):
    id = "KM107"
    name = "tf1-or-keras-alias"
    summary = (
        "`tf.losses.X`, `tf.metrics.X` or `tf.initializers.X` names a TensorFlow 1 function "
        "in TensorFlow 1 code and a Keras one in TensorFlow 2 code."
    )
    rationale = (
        "TensorFlow 2 made `tf.losses`, `tf.metrics` and `tf.initializers` aliases of "
        "`tf.keras.losses`, `tf.keras.metrics` and `tf.keras.initializers`; TensorFlow 1 "
        "had modules of the same names with other functions. A handful of names exist in "
        "both (`tf.losses.mean_squared_error`, `tf.metrics.mean_absolute_error`, "
        "`tf.initializers.glorot_uniform`...) and compute different things: TensorFlow 1's "
        "losses weight and reduce to a scalar, its metrics return update ops, its "
        "initializers have other defaults. Which one the code means depends on the "
        "TensorFlow it was written for, which the source does not say."
    )
    fix_safety = (
        "Never rewritten: the finding names the Keras 3 function that the TensorFlow 2 "
        "meaning maps to; a person decides. Names only Keras has (`tf.losses.Huber`) are "
        "`tf.keras.` names, rewritten by KM101; names only TensorFlow 1 has "
        "(`tf.losses.log_loss`) are `tf.compat.v1` functions."
    )
    reference_prefixes = AMBIGUOUS_PREFIXES
    examples = [
        Flagged(
            """
            import tensorflow as tf

            loss = tf.losses.mean_squared_error(labels, predictions)
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            dense = tf.keras.layers.Dense(4, kernel_initializer=tf.initializers.glorot_uniform())
            """
        ),
        Clean(
            """
            import tensorflow as tf

            loss = tf.compat.v2.losses.mean_squared_error(y_true, y_pred)  # KM101's
            """
        ),
        Clean(
            """
            import keras

            loss = keras.losses.mean_squared_error(y_true, y_pred)
            """
        ),
        Clean(
            """
            import tensorflow as tf

            loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)  # TF1's, named
            """
        ),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        _, module, rest = site.symbol.split(".", 2)
        name = rest.partition(".")[0]  # `tf.losses.Reduction.SUM`: the name is `Reduction`
        parent = site.module.parent_of(site.node)
        if isinstance(parent, ast.Call) and parent.func is site.node and lookup(site.symbol):
            return  # an ops catalog entry: KM201/KM202 report the call with its arguments
        tf1 = _TF1_CLASSES.get(f"{module}.{name}") or _TF1_MEANING[module].format(name=name)
        target = keras3_reference(f"{module}.{name}")
        tf2 = (
            f"`keras.{target}` in Keras 3"
            if target
            else f"`tf.keras.{module}.{name}`, which Keras 3 does not have (Keras 3 losses "
            'take `reduction` as a string: "sum_over_batch_size", "sum" or "none")'
        )
        yield Report(
            site,
            f"`{site.source}` means two things: in TensorFlow 2 code it is {tf2}; in "
            f"TensorFlow 1 code it is {tf1}. Port it for the TensorFlow this code was "
            "written for",
        )
