"""KM101: `tf.keras.X` used through the TensorFlow namespace; Keras 3 is `keras.X`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ReferenceSite, ReplaceNode, Severity
from kmigrate.rules.base import Claim, Clean, Flagged, Report, Rule
from kmigrate.rules.common.call_differences import KERAS_2, SAFETY_NOTE, call_difference
from kmigrate.rules.common.keras_api import keras3_reference, removal_note
from kmigrate.rules.common.keras_paths import (
    LEFT_TO_OTHER_RULES,
    PORT_ADVICE,
    TF_KERAS,
    keras_name,
    legacy_path,
)
from kmigrate.rules.common.module_escapes import escaping_reference


class TfKerasNamespace(Rule):
    id = "KM101"
    name = "tf-keras-namespace"
    summary = "`tf.keras.X` used through the TensorFlow namespace; Keras 3 is `keras.X`."
    rationale = (
        "`tf.keras` ties model code to TensorFlow: it is only an alias of Keras on the "
        "TensorFlow backend, and on TensorFlow < 2.16 it is Keras 2. Importing `keras` "
        "directly gives the same classes on every backend."
    )
    fix_safety = (
        "Exact when the name exists in Keras 3 (checked against the public Keras 3 API, "
        "including moved namespaces such as `layers.experimental.preprocessing`); otherwise "
        "reported for a manual port with what replaces it. " + SAFETY_NOTE
    )
    reference_prefixes = ("tf.keras",)  # `tf.losses` and the other aliases included

    @classmethod
    def claims(cls) -> tuple[Claim, ...]:
        """A call `tf.keras.layers.Dense(...)`: this rule reports its callee."""
        return (Claim(prefixes=("tf.keras.",)),)

    examples = [
        Flagged(
            """
            import tensorflow as tf

            dense = tf.keras.layers.Dense(4)  # a comment that stays
            """,
            """
            import keras

            dense = keras.layers.Dense(4)  # a comment that stays
            """,
        ),
        Flagged(
            """
            import tensorflow as tfx

            class Block(tfx.keras.layers.Layer):
                def call(self, x):
                    return tfx.keras.activations.relu(x)
            """,
            """
            import keras

            class Block(keras.layers.Layer):
                def call(self, x):
                    return keras.activations.relu(x)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            scale = tf.keras.layers.experimental.preprocessing.Rescaling(1 / 255)
            """,
            """
            import keras

            scale = keras.layers.Rescaling(1 / 255)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            rnn = tf.keras.layers.CuDNNLSTM(8)
            """
        ),
        Flagged(  # TensorFlow 2's own names of four tf.keras modules
            """
            import tensorflow as tf

            model.compile(
                optimizer=tf.optimizers.Adam(1e-3),
                loss=tf.losses.MeanSquaredError(),
                metrics=[tf.metrics.MeanAbsoluteError()],
            )
            init = tf.compat.v2.initializers.GlorotUniform(seed=1)
            """,
            """
            import keras

            model.compile(
                optimizer=keras.optimizers.Adam(1e-3),
                loss=keras.losses.MeanSquaredError(),
                metrics=[keras.metrics.MeanAbsoluteError()],
            )
            init = keras.initializers.GlorotUniform(seed=1)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            reduction = tf.losses.Reduction.SUM  # TF1's too: KM107's
            kld = tf.metrics.kld  # not in Keras 3
            """
        ),
        Flagged(  # Keras 3's Lion trains at another rate by default
            """
            import tensorflow as tf

            optimizer = tf.keras.optimizers.Lion()
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            optimizer = tf.optimizers.Lion(learning_rate=1e-4)
            loss = tf.keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True, axis=1)
            """,
            """
            import keras

            optimizer = keras.optimizers.Lion(learning_rate=1e-4)
            loss = keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True, axis=1)
            """,
        ),
        Flagged(  # `keras.Input` would be tf_keras's, or unbound on TensorFlow 2.15
            """
            import tensorflow as tf

            if tf.__version__ >= "2.16":
                import tf_keras as keras
            inputs = tf.keras.Input((4,))
            """
        ),
        Clean(
            """
            import tensorflow as tf

            loss = tf.losses.log_loss(labels, predictions)  # TensorFlow 1's own function
            """
        ),
        Clean(
            """
            import keras

            dense = keras.layers.Dense(4)
            """
        ),
        Clean(
            """
            def build(tf):
                return tf.keras.layers.Dense(4)  # `tf` is a parameter, not TensorFlow
            """
        ),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        root_name = site.node
        while isinstance(root_name, ast.Attribute):
            root_name = root_name.value
        assert isinstance(root_name, ast.Name)
        root_target = site.module.resolver.qualified_name(root_name.id) or ""
        qualified = site.module.resolver.resolve(site.node) or ""
        # `tf.losses.X` and `tf.compat.v2.keras.X` are spelled `tf.keras.` only canonically
        legacy = legacy_path(qualified, TF_KERAS)
        shown = f"`{site.symbol}`"
        if legacy is None:
            legacy = legacy_path(site.symbol, "tf.keras")
            if not qualified.startswith("tensorflow.compat.v2.keras"):
                shown = f"`{site.source}` (TensorFlow 2's name of `{site.symbol}`)"
        if legacy is None or legacy.startswith(LEFT_TO_OTHER_RULES):
            return
        through_tensorflow = root_target in ("tensorflow", "tensorflow.compat.v2")
        target = keras3_reference(legacy)
        if target is None:
            yield Report(
                site,
                f"{shown} does not exist in Keras 3: {removal_note(legacy)}",
                severity=Severity.ERROR,
            )
            return
        if not through_tensorflow and target == legacy:
            return  # e.g. `layers.Dense` after `from tensorflow.keras import layers`: KM102
        new = keras_name(target)
        difference = call_difference(site.module, site.node, target, KERAS_2)
        if difference:
            yield Report(site, f"{shown} is `{new}` in Keras 3, but {difference}")
            return
        escape = escaping_reference(site.module, site.node, target, legacy=KERAS_2)
        if escape:
            yield Report(
                site, f"{shown} was not renamed to `{new}`: {escape.sentence(PORT_ADVICE)}"
            )
            return
        yield Report(
            site,
            f"{shown} is `{new}` in Keras 3",
            fix=EditPlan((ReplaceNode(site.span, f"{{name:{new}}}"),), f"use {new}"),
        )
