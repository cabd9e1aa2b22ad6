"""KM534: `BatchNormalization` trains its moving variance differently in Keras 3."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import NOT_LITERAL, CallSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.namespaces import in_keras_namespaces

# Keras 2 (tf_keras/src/layers/normalization/batch_normalization.py) runs the fused kernel
# on 4-D and 5-D inputs unless one of these arguments rules it out; the position is the
# argument's place in that constructor's signature.
_UNFUSED_WHEN_GIVEN = {"renorm": 13, "virtual_batch_size": 18, "adjustment": 19}
_FUSED_POSITION = 16


class BatchNormMovingVariance(Rule):
    id = "KM534"
    name = "batch-norm-moving-variance"
    summary = (
        "`BatchNormalization` in training: Keras 3 updates the moving variance with the "
        "biased batch variance, Keras 2's fused kernel with the unbiased one."
    )
    rationale = (
        "On 4-D and 5-D inputs Keras 2 runs `BatchNormalization` through TensorFlow's fused "
        "kernel (the default, `fused=None`), which hands the moving average the batch "
        "variance with Bessel's correction: times n/(n-1), n = batch x height x width (x "
        "depth). Keras 3 averages the biased variance on every backend, as Keras 2 itself "
        "does on other ranks. Outputs in inference, and of a model loaded with trained "
        "weights, are unchanged; a model trained on under Keras 3 keeps a moving variance "
        "smaller by that factor (0.4% at n = 256, 0.02% at n = 4,096), and `kmigrate parity`'s "
        "training check on a small batch can see it. Keras 3 has no option for Keras 2's "
        "update: a note, not a port."
    )
    fix_safety = "A note: there is nothing to rewrite (no Keras 3 argument gives the old update)."
    severity = Severity.INFO
    call_symbols = in_keras_namespaces(
        "layers.BatchNormalization",
        "layers.normalization.batch_normalization.BatchNormalization",
    )
    examples = [
        Flagged(
            """
            from tensorflow import keras

            def block(x):
                x = keras.layers.Conv2D(16, 3)(x)
                return keras.layers.BatchNormalization(momentum=0.9)(x)
            """
        ),
        Clean(
            """
            from tensorflow import keras

            def block(x):
                x = keras.layers.BatchNormalization(fused=False)(x)
                return keras.layers.BatchNormalization(renorm=True)(x)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.literal(_FUSED_POSITION, "fused") is False or any(
            _rules_out_fused(site, keyword, position)
            for keyword, position in _UNFUSED_WHEN_GIVEN.items()
        ):
            return  # Keras 2 ran the unfused path: the biased variance, as Keras 3 does
        yield Report(
            site,
            "in training, Keras 3 updates `moving_variance` with the biased batch variance; "
            "Keras 2's fused kernel (4-D and 5-D inputs) used the unbiased one, n/(n-1) "
            "larger (n = batch x spatial positions): inference and loaded weights are "
            "unchanged, further training drifts by that factor (no Keras 3 option restores it)",
        )


def _rules_out_fused(site: CallSite, keyword: str, position: int) -> bool:
    """Whether the argument certainly keeps Keras 2 off the fused kernel (`renorm=True`,
    a `virtual_batch_size` or `adjustment` written and not None); a value not written as
    a literal may be either, so the note stays."""
    if site.arg(position, keyword) is None:
        return False
    value = site.literal(position, keyword)
    if keyword == "renorm":
        return value is True
    return value is not None and value is not NOT_LITERAL
