"""KM514: `metric.reset_states()`; Keras 3 metrics only have `reset_state()`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from kmigrate.engine import CallSite, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import class_methods
from kmigrate.rules.common.scopes import own_nodes, single_assignment


class MetricResetStates(Rule):
    id = "KM514"
    name = "metric-reset-states"
    summary = "`metric.reset_states()`; Keras 3 metrics only have `reset_state()`."
    rationale = (
        "Keras 2 kept `reset_states()` as an alias on metrics; Keras 3 metrics only define "
        "`reset_state()`, so the call raises AttributeError. Keras 3 models have no "
        "`reset_states()` at all (reset stateful RNN layers with `layer.reset_state()`)."
    )
    fix_safety = (
        "Renamed when the receiver is known to be a metric: assigned from a "
        "`keras.metrics.*` constructor (in the function, or on `self` in `__init__`), or a "
        "loop variable over `model.metrics`. Other receivers are reported."
    )
    severity = Severity.ERROR
    method_names = frozenset({"reset_states"})
    examples = [
        Flagged(
            """
            from tensorflow import keras

            def evaluate(model, batches):
                accuracy = keras.metrics.SparseCategoricalAccuracy()
                for x, y in batches:
                    accuracy.update_state(y, model(x))
                result = accuracy.result()
                accuracy.reset_states()
                for metric in model.metrics:
                    metric.reset_states()
                return result
            """,
            """
            from tensorflow import keras

            def evaluate(model, batches):
                accuracy = keras.metrics.SparseCategoricalAccuracy()
                for x, y in batches:
                    accuracy.update_state(y, model(x))
                result = accuracy.result()
                accuracy.reset_state()
                for metric in model.metrics:
                    metric.reset_state()
                return result
            """,
        ),
        Flagged(
            """
            def new_sequence(model):
                model.reset_states()
            """
        ),
        Clean(
            """
            from tensorflow import keras

            def new_sequence():
                lstm = keras.layers.LSTM(4, stateful=True)
                lstm.reset_states()  # RNN layers keep reset_states() in Keras 3
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        kind = self._receiver_kind(site)
        if kind == "layer":
            return
        func = site.node.func  # type: ignore[attr-defined]
        if kind == "metric":
            rename = ReplaceNode(site.module.span_of(func), f"{site.text(func.value)}.reset_state")
            yield Report(
                site,
                "Keras 3 metrics have `reset_state()`, not `reset_states()`",
                fix=EditPlan((rename,), "reset_state()"),
            )
            return
        yield Report(
            site,
            "`reset_states()` is gone from Keras 3 metrics and models (manual: a metric "
            "uses `reset_state()`; for a stateful RNN call `reset_state()` on its layers)",
            severity=Severity.WARNING,
        )

    def _receiver_kind(self, site: CallSite) -> str | None:
        receiver = site.receiver
        value: ast.expr | None = None
        if isinstance(receiver, ast.Name):
            scope = site.scope.function_node or site.module.tree
            loop_over = _loop_iterable(scope, receiver.id)
            if isinstance(loop_over, ast.Attribute) and loop_over.attr == "metrics":
                return "metric"
            value = single_assignment(scope, receiver.id)
        elif (
            isinstance(receiver, ast.Attribute)
            and isinstance(receiver.value, ast.Name)
            and receiver.value.id == "self"
            and site.scope.class_node is not None
        ):
            value = _self_attribute_value(site.scope.class_node, receiver.attr)
        if isinstance(value, ast.Call):
            symbol = site.module.resolve(value.func) or ""
            if re.match(r"(tf\.keras|keras|tf_keras)\.metrics\.", symbol):
                return "metric"
            if re.match(r"(tf\.keras|keras|tf_keras)\.layers\.", symbol):
                return "layer"
        return None


def _loop_iterable(scope: ast.AST, name: str) -> ast.expr | None:
    for node in own_nodes(scope):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
            if node.target.id == name:
                return node.iter
    return None


def _self_attribute_value(class_node: ast.ClassDef, attr: str) -> ast.expr | None:
    init = class_methods(class_node).get("__init__")
    if init is None:
        return None
    values = [
        node.value
        for node in ast.walk(init)
        if isinstance(node, ast.Assign)
        and any(
            isinstance(t, ast.Attribute)
            and t.attr == attr
            and isinstance(t.value, ast.Name)
            and t.value.id == "self"
            for t in node.targets
        )
    ]
    return values[0] if len(values) == 1 else None
