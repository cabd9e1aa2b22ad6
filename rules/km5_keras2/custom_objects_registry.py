"""KM512: the Keras 2 custom-objects registry."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.namespaces import in_keras_namespaces


class CustomObjectsRegistry(Rule):
    id = "KM512"
    name = "custom-objects-registry"
    summary = "`get_custom_objects()` registration; Keras 3 uses a decorator."
    rationale = (
        "Keras 3 serializes custom classes under a registered name "
        "(`package>ClassName`); `@keras.saving.register_keras_serializable()` registers "
        "a class at definition, so `.keras` files reload in any process without "
        "`custom_objects=`. Filling the global dict still works but is easy to miss."
    )
    fix_safety = "Reported with the decorator to add; the class is elsewhere, so no rewrite."
    severity = Severity.INFO
    call_symbols = in_keras_namespaces(
        "utils.get_custom_objects",
        "saving.get_custom_objects",
        "utils.generic_utils.get_custom_objects",
    )
    examples = [
        Flagged(
            """
            import tensorflow as tf

            tf.keras.utils.get_custom_objects().update({"Swish": Swish})
            """
        ),
        Clean(
            """
            import keras

            @keras.saving.register_keras_serializable(package="my_models")
            class Swish(keras.layers.Layer):
                pass
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        yield Report(
            site,
            "register custom classes with `@keras.saving.register_keras_serializable"
            "(package=...)` on the class instead of filling `get_custom_objects()`",
        )
