"""KM603: `tf.distribute` strategies and replica APIs."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule


class TfDistribute(Rule):
    id = "KM603"
    name = "tf-distribute"
    summary = "`tf.distribute` strategy or replica API: TensorFlow-only distribution."
    rationale = (
        "`tf.distribute` strategies only drive the TensorFlow backend. Keras 3's "
        "`keras.distribution` (`DataParallel`, `ModelParallel` with a `DeviceMesh` and "
        "`LayoutMap`) distributes `fit` on JAX; on PyTorch use `torch.distributed` (DDP). "
        "Model code that asks for the replica context breaks on the other backends."
    )
    fix_safety = "Never rewritten: the distribution setup is a design decision per backend."
    severity = Severity.WARNING
    call_prefixes = ("tf.distribute.", "tf.compat.v1.distribute.")
    examples = [
        Flagged(
            """
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = build_model()
            """
        ),
        Clean(
            """
            import keras

            keras.distribution.set_distribution(keras.distribution.DataParallel())
            model = build_model()
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        name = site.symbol.rsplit(".", 1)[-1]
        if site.context == Context.MODEL:
            yield Report(
                site,
                f"`{site.symbol}` in model code only works on TensorFlow: keep replica logic "
                "out of layers (Keras 3 aggregates metrics and variables itself)",
                severity=Severity.ERROR,
            )
        elif name.endswith("Strategy"):
            yield Report(
                site,
                f"`{site.symbol}` distributes only on TensorFlow: on JAX use "
                "`keras.distribution.set_distribution(keras.distribution.DataParallel())` "
                "(or `ModelParallel`), on PyTorch `torch.distributed`",
            )
        else:
            yield Report(
                site,
                f"`{site.symbol}` is part of TensorFlow's distribution API (TensorFlow-only; "
                "see `keras.distribution` for JAX)",
                severity=Severity.INFO,
            )
