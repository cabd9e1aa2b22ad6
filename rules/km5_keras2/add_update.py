"""KM508: `Layer.add_update`, gone in Keras 3."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import CallSite, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule

_ASSIGN_METHODS = ("assign", "assign_add", "assign_sub")


class AddUpdate(Rule):
    id = "KM508"
    name = "add-update"
    summary = "`self.add_update(...)`: gone in Keras 3; assign the variable directly."
    rationale = (
        "Keras 3 layers update state by assigning to their variables inside `call` (as "
        "`BatchNormalization` does); Keras tracks the assignment on every backend, including "
        "inside `jax.jit`. `add_update` no longer exists."
    )
    fix_safety = (
        "In TF 2 the wrapped `v.assign(...)` already ran when `add_update` received its "
        "result, so `self.add_update(v.assign(x))` -> `v.assign(x)` is exact. Lists of "
        "updates, callables and `inputs=` are reported."
    )
    severity = Severity.ERROR
    method_names = frozenset({"add_update"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Running(tf.keras.layers.Layer):
                def call(self, x, training=None):
                    if training:
                        self.add_update(self.total.assign_add(tf.reduce_sum(x)))
                    return x
            """,
            """
            import tensorflow as tf

            class Running(tf.keras.layers.Layer):
                def call(self, x, training=None):
                    if training:
                        self.total.assign_add(tf.reduce_sum(x))
                    return x
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Running(tf.keras.layers.Layer):
                def call(self, x):
                    self.add_update([self.a.assign(x), self.b.assign(x)])
                    return x
            """
        ),
        Clean(
            """
            import keras

            class Running(keras.layers.Layer):
                def call(self, x):
                    self.total.assign_add(keras.ops.sum(x))
                    return x
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        update = site.arg(0, "updates")
        single = (
            update is not None
            and len(site.args) + len(site.keywords) == 1
            and isinstance(update, ast.Call)
            and (
                (isinstance(update.func, ast.Attribute) and update.func.attr in _ASSIGN_METHODS)
                or (site.module.resolve(update.func) or "")
                in ("K.update", "K.update_add", "K.update_sub")
            )
        )
        if single:
            plan = EditPlan((ReplaceNode(site.span, site.text(update)),), "assign directly")
            yield Report(
                site, "`add_update` is gone in Keras 3: the assignment is enough", fix=plan
            )
            return
        yield Report(
            site,
            "`add_update` is gone in Keras 3 (manual: call `variable.assign(...)` for each "
            "update inside `call`)",
        )
