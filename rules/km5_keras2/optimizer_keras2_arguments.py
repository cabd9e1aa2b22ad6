"""KM502: optimizers built with `lr=` or `jit_compile=`, which Keras 3 rejects."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import (
    CURRENT_OPTIMIZERS,
    keywords_in_order,
    optimizer_name,
)


class OptimizerKeras2Arguments(Rule):
    id = "KM502"
    name = "optimizer-keras2-arguments"
    summary = "Optimizer built with `lr=` or `jit_compile=`; Keras 3 rejects both."
    rationale = (
        "Keras 3 optimizers raise `ValueError: Argument(s) not recognized` for `lr=` and "
        "`jit_compile=`. Note that TF-Keras >= 2.11 (non-legacy optimizers) silently "
        "ignored `lr=` and trained with the default rate: the rewrite restores the rate "
        "the code asks for, as on Keras <= 2.10."
    )
    fix_safety = (
        "`lr=` becomes `learning_rate=` (not offered when both are given, nor for Lion, "
        "which came after Keras 2.10: every Keras 2 Lion ignored `lr=` and trained at "
        "1e-4); `jit_compile=` is dropped (Keras 3 compiles the whole train step: "
        "`model.compile(jit_compile=)`)."
    )
    severity = Severity.ERROR
    call_symbols = CURRENT_OPTIMIZERS
    examples = [
        Flagged(
            """
            from tensorflow import keras

            optimizer = keras.optimizers.Adam(lr=3e-4, jit_compile=False)
            """,
            """
            from tensorflow import keras

            optimizer = keras.optimizers.Adam(learning_rate=3e-4)
            """,
        ),
        Flagged(
            """
            import keras

            optimizer = keras.optimizers.SGD(0.1, lr=0.2)
            """
        ),
        Flagged(  # Keras 2's Lion never read `lr=`: it trained at 1e-4
            """
            import tf_keras as keras

            optimizer = keras.optimizers.Lion(lr=3e-4)
            """
        ),
        Clean(
            """
            import keras

            optimizer = keras.optimizers.Adam(learning_rate=3e-4)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if not {"lr", "jit_compile"} & set(site.keywords):
            return
        if site.has_star_args:
            yield Report(site, "`lr=`/`jit_compile=` are not Keras 3 arguments (manual: **kwargs)")
            return
        if "lr" in site.keywords and site.arg(0, "learning_rate") is not None:
            yield Report(site, "both `lr=` and `learning_rate=` given (manual: keep one)")
            return
        if "lr" in site.keywords and optimizer_name(site.symbol) == "Lion":
            yield Report(
                site,
                "`lr=` raises in Keras 3 optimizers, and Keras 2's Lion ignored it and trained "
                "at learning_rate=1e-4: write `learning_rate=` with the rate you mean (1e-4 "
                "keeps this code's numbers)",
            )
            return
        args = [ArgOut(i) for i in range(len(site.args))]
        for keyword in keywords_in_order(site):
            if keyword == "jit_compile":
                continue
            args.append(ArgOut(keyword, keyword="learning_rate" if keyword == "lr" else keyword))
        plan = EditPlan((CallEdit(site.span, args=tuple(args)),), "learning_rate=")
        wrong = " and ".join(f"`{k}=`" for k in ("lr", "jit_compile") if k in site.keywords)
        verb = "raise" if " and " in wrong else "raises"
        yield Report(site, f"{wrong} {verb} in Keras 3 optimizers", fix=plan)
