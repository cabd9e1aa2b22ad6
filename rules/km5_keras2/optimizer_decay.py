"""KM503: the optimizer `decay=` argument, which Keras 3 ignores with a warning."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import (
    CURRENT_OPTIMIZERS,
    LEGACY_OPTIMIZER_SYMBOLS,
    decay_suggestion,
    keywords_in_order,
    zero_decay,
)


class OptimizerDecay(Rule):
    id = "KM503"
    name = "optimizer-decay"
    summary = "Optimizer `decay=`: Keras 3 ignores it (with a warning) and trains differently."
    rationale = (
        "Keras 2 optimizers applied `lr / (1 + decay * iterations)`. Keras 3 drops the "
        "argument with only a warning, so training silently uses a constant rate. The same "
        "schedule is `keras.optimizers.schedules.InverseTimeDecay(lr, decay_steps=1, "
        "decay_rate=decay)`."
    )
    fix_safety = (
        "`decay=0` is dropped (exact). Any other value is reported with the equivalent "
        "`InverseTimeDecay` schedule to paste in; kmigrate does not rewrite learning-rate "
        "logic on its own."
    )
    severity = Severity.ERROR
    call_symbols = CURRENT_OPTIMIZERS | LEGACY_OPTIMIZER_SYMBOLS
    examples = [
        Flagged(
            """
            from tensorflow import keras

            optimizer = keras.optimizers.SGD(learning_rate=0.1, decay=1e-4)
            """
        ),
        Flagged(
            """
            import keras

            optimizer = keras.optimizers.SGD(learning_rate=0.1, decay=0.0)
            """,
            """
            import keras

            optimizer = keras.optimizers.SGD(learning_rate=0.1)
            """,
        ),
        Clean(
            """
            import keras

            schedule = keras.optimizers.schedules.InverseTimeDecay(0.1, 1, 1e-4)
            optimizer = keras.optimizers.SGD(learning_rate=schedule)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if "decay" not in site.keywords:
            return
        if zero_decay(site) and not site.has_star_args:
            args = [ArgOut(i) for i in range(len(site.args))]
            args += [ArgOut(k, keyword=k) for k in keywords_in_order(site) if k != "decay"]
            plan = EditPlan((CallEdit(site.span, args=tuple(args)),), "drop decay=0")
            yield Report(site, "`decay=0` does nothing; Keras 3 has no `decay=`", fix=plan)
            return
        yield Report(
            site,
            "Keras 3 ignores `decay=` and would train with a constant learning rate "
            f"(manual: use `{decay_suggestion(site)}`)",
        )
