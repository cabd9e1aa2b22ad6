"""KM105: The Keras 2 `backend` module is passed on as a value (keras_applications style)."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import ReferenceSite
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras_paths import PORT_CALLS
from kmigrate.rules.common.module_escapes import escaping_reference


class BackendModuleEscapes(Rule):
    id = "KM105"
    name = "backend-module-escapes"
    summary = "The Keras 2 `backend` module is passed on as a value (keras_applications style)."
    rationale = (
        "Keras 3's `keras.backend` keeps a handful of functions (`floatx`, "
        "`image_data_format`, `epsilon`...); the Keras 2 math (`sigmoid`, `mean`, `dot`...) "
        "moved to `keras.ops` and `keras.activations`. Code that receives the module as an "
        "argument (`build(backend=keras.backend)`) and calls `backend.sigmoid(x)` fails on "
        "every backend, and the call is made through a name no import resolves."
    )
    fix_safety = (
        "Reported: the calls made through the receiving name have to move to `keras.ops` / "
        "`keras.activations`; kmigrate names those it can follow in the same file."
    )
    reference_prefixes = ("K",)
    examples = [
        Flagged(
            """
            import keras

            def swish(x, backend):
                return x * backend.sigmoid(x)

            y = swish(keras.Input((4,)), keras.backend)
            """
        ),
        Clean(
            """
            import keras

            def build(backend=keras.backend):
                return backend.floatx()
            """
        ),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        if site.symbol != "K":
            return
        qualified = site.module.resolver.resolve(site.node) or ""
        if qualified != "keras.backend":
            return  # through TensorFlow: KM102 keeps that import and says why
        escape = escaping_reference(site.module, site.node, "backend")
        if escape:
            yield Report(
                site,
                f"`{site.source}` (Keras's backend module) is passed on: {escape.sentence()}. "
                f"{PORT_CALLS}",
            )
