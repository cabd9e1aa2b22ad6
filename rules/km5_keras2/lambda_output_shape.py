"""KM511: `Lambda` layers without `output_shape`, whose shape Keras 3 infers."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.namespaces import in_keras_namespaces


class LambdaOutputShape(Rule):
    id = "KM511"
    name = "lambda-output-shape"
    summary = "`Lambda` layer without `output_shape`; it is inferred and hard to reload."
    rationale = (
        "Keras 3 infers a `Lambda`'s output shape by tracing the function on a symbolic "
        "tensor, which fails if it calls TensorFlow ops (use `keras.ops`). A `.keras` file "
        "with a `Lambda` only reloads with `load_model(..., safe_mode=False)` because the "
        "function is stored as bytecode; a small custom layer avoids both issues."
    )
    fix_safety = "Informational; nothing to rewrite automatically."
    severity = Severity.INFO
    call_symbols = in_keras_namespaces("layers.Lambda", "layers.core.Lambda")
    examples = [
        Flagged(
            """
            from tensorflow import keras

            double = keras.layers.Lambda(lambda t: t * 2)
            """
        ),
        Clean(
            """
            import keras

            double = keras.layers.Lambda(lambda t: t * 2, output_shape=(8,))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.arg(1, "output_shape") is not None or site.has_star_args:
            return
        yield Report(
            site,
            "`Lambda` without `output_shape`: Keras 3 infers it by tracing the function "
            "(use `keras.ops` inside); reloading a `.keras` file with it needs "
            "`safe_mode=False`, a custom layer does not",
        )
