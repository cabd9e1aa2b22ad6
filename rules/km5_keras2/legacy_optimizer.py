"""KM504: `optimizers.legacy.*`, which Keras 3 does not have."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, ReferenceSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import (
    KERAS3_SHARED_PREFIX,
    LEGACY_KWARGS,
    LEGACY_OPTIMIZER_SYMBOLS,
    LEGACY_OPTIMIZERS,
    decay_suggestion,
    keywords_in_order,
    optimizer_name,
    zero_decay,
)
from kmigrate.rules.common.namespaces import KERAS_NAMESPACES


class LegacyOptimizer(Rule):
    id = "KM504"
    name = "legacy-optimizer"
    summary = "`keras.optimizers.legacy.X`: gone in Keras 3 (constructing one raises)."
    rationale = (
        "Keras 3 keeps `keras.optimizers.legacy` only to raise an ImportError that points "
        "to TF-Keras. The current optimizers implement the same algorithms with the same "
        "defaults; their signatures differ after the shared leading arguments (Keras 3 has "
        "`weight_decay` where the legacy ones had `name`)."
    )
    fix_safety = (
        "The class becomes `keras.optimizers.X`; positional arguments past the shared "
        "prefix become keywords by their legacy names, `lr=` becomes `learning_rate=`. Not "
        "offered with `decay=` (Keras 3 would ignore it: see KM503) or unknown keywords. "
        "Subclasses of legacy optimizers are reported: Keras 3 optimizers implement "
        "`build`/`update_step` instead of `_resource_apply_dense`."
    )
    severity = Severity.ERROR
    call_symbols = LEGACY_OPTIMIZER_SYMBOLS
    reference_prefixes = tuple(ns + "optimizers.legacy" for ns in KERAS_NAMESPACES)
    examples = [
        Flagged(
            """
            import tensorflow as tf

            optimizer = tf.keras.optimizers.legacy.SGD(0.01, 0.9, True, "sgd", lr=0.02)
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            optimizer = tf.keras.optimizers.legacy.SGD(0.01, 0.9, True, "sgd", clipnorm=1.0)
            """,
            """
            import keras

            optimizer = keras.optimizers.SGD(0.01, 0.9, True, name="sgd", clipnorm=1.0)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class MyOptimizer(tf.keras.optimizers.legacy.Optimizer):
                pass
            """
        ),
        Clean(
            """
            import keras

            optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
            """
        ),
    ]

    def __init__(self) -> None:
        # Callee nodes of the module being walked (references to them are the calls).
        self._module: object | None = None
        self._callees: set[int] = set()

    def _callees_of(self, module: object) -> set[int]:
        if module is not self._module:
            self._module, self._callees = module, set()
        return self._callees

    def check_call(self, site: CallSite) -> Iterable[Report]:
        self._callees_of(site.module).add(id(site.node.func))  # type: ignore[attr-defined]
        name = optimizer_name(site.symbol)
        params = LEGACY_OPTIMIZERS[name]
        problems = []
        if site.has_star_args:
            problems.append("*args/**kwargs")
        if len(site.args) > len(params):
            problems.append("too many positional arguments")
        if "decay" in site.keywords and not zero_decay(site):
            problems.append(f"Keras 3 ignores `decay=`: use `{decay_suggestion(site)}`")
        if "lr" in site.keywords and site.arg(0, "learning_rate") is not None:
            problems.append("both `lr=` and `learning_rate=` given")
        unknown = set(site.keywords) - set(params) - LEGACY_KWARGS
        if unknown:
            problems.append(f"no Keras 3 equivalent for `{'=`, `'.join(sorted(unknown))}=`")
        target = f"keras.optimizers.{name}"
        if problems:
            yield Report(site, f"use `{target}` (manual: {'; '.join(problems)})")
            return
        shared = KERAS3_SHARED_PREFIX[name]
        args = [
            ArgOut(i) if i < shared else ArgOut(i, keyword=params[i]) for i in range(len(site.args))
        ]
        for keyword in keywords_in_order(site):
            if keyword == "decay":
                continue
            args.append(ArgOut(keyword, keyword="learning_rate" if keyword == "lr" else keyword))
        plan = EditPlan((CallEdit(site.span, callee=target, args=tuple(args)),), target)
        yield Report(site, f"legacy optimizers are gone in Keras 3: use `{target}`", fix=plan)

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        if id(site.node) in self._callees_of(site.module):
            return
        yield Report(
            site,
            f"`{site.symbol}` is gone in Keras 3; a custom optimizer subclasses "
            "`keras.optimizers.Optimizer` and implements `build(var_list)` and "
            "`update_step(gradient, variable, learning_rate)` (manual port)",
        )
