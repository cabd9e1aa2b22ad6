"""KM506: `K.get_value` / `K.set_value` and their batch forms."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.splice import text_with


def _learning_rate_text(site: CallSite, node: ast.expr) -> str:
    """``model.optimizer.lr`` -> ``model.optimizer.learning_rate`` (Keras 3 has no ``lr``)."""
    text = site.text(node)
    if isinstance(node, ast.Attribute) and node.attr == "lr":
        owner = node.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if "optim" in owner_name.lower() or owner_name == "opt":
            return f"{site.text(owner)}.learning_rate"
    return text


def _receiver_text(site: CallSite, node: ast.expr) -> str:
    text = _learning_rate_text(site, node)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return text
    return f"({text})"


def _get_value_text(site: CallSite, call: ast.Call) -> str:
    """What this rule writes for ``K.get_value(x)``, as text."""
    return f"{{name:keras.ops.convert_to_numpy}}({_learning_rate_text(site, call.args[0])})"


def _value_text(site: CallSite, value: ast.expr) -> str:
    """``value``'s text with the ``K.get_value(x)`` calls in it rewritten already
    (``K.set_value(lr, K.get_value(lr) * 0.1)`` is fixed in one round, not two)."""
    module = site.module
    calls = [
        node
        for node in ast.walk(value)
        if isinstance(node, ast.Call)
        and module.resolve(node.func) == "K.get_value"
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ]
    nested = any(
        inner is not outer and inner in ast.walk(outer) for outer in calls for inner in calls
    )
    if not calls or nested:  # nested reads: left to the next round, as written
        return site.text(value)
    found = [(module.span_of(call), _get_value_text(site, call)) for call in calls]
    return text_with(module, module.span_of(value), found)


class BackendVariableValue(Rule):
    id = "KM506"
    name = "backend-variable-value"
    summary = "`K.get_value` / `K.set_value` / `K.batch_get_value` / `K.batch_set_value`."
    rationale = (
        "Keras 3's `keras.backend` no longer reads or writes variables. A value is read "
        "with `keras.ops.convert_to_numpy(v)` and written with `v.assign(value)` on every "
        "backend. Optimizers have no `lr` attribute any more: it is `learning_rate`."
    )
    fix_safety = (
        "Exact: `K.get_value(x)` -> `ops.convert_to_numpy(x)`, `K.set_value(x, v)` -> "
        "`x.assign(v)` (both cast like Keras 2), `K.batch_get_value(xs)` -> a list "
        "comprehension; `optimizer.lr` becomes `optimizer.learning_rate`. "
        "`K.batch_set_value` is reported with the loop to write."
    )
    severity = Severity.ERROR
    call_symbols = frozenset(
        {"K.get_value", "K.set_value", "K.batch_get_value", "K.batch_set_value"}
    )
    examples = [
        Flagged(
            """
            from tensorflow.keras import backend as K

            def decay(model, factor):
                lr = K.get_value(model.optimizer.lr)
                K.set_value(model.optimizer.lr, lr * factor)
                return K.batch_get_value(model.weights)
            """,
            """
            from keras import ops

            def decay(model, factor):
                lr = ops.convert_to_numpy(model.optimizer.learning_rate)
                model.optimizer.learning_rate.assign(lr * factor)
                return [ops.convert_to_numpy(variable) for variable in model.weights]
            """,
        ),
        Flagged(
            """
            from tensorflow.keras import backend as K

            def restore(pairs):
                K.batch_set_value(pairs)
            """
        ),
        Clean(
            """
            from keras import ops

            def read(variable):
                return ops.convert_to_numpy(variable)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        name = site.symbol[2:]
        if site.has_star_args or site.keywords and name != "get_value":
            yield Report(site, f"`{site.symbol}` is gone in Keras 3 (manual: unusual arguments)")
            return
        if name == "get_value" and site.arg(0, "x") is not None:
            value = _learning_rate_text(site, site.arg(0, "x"))
            source = 0 if site.args else "x"
            edit = CallEdit(
                site.span, callee="keras.ops.convert_to_numpy", args=(ArgOut(source, value=value),)
            )
            yield Report(
                site,
                "`K.get_value` is gone in Keras 3: use `keras.ops.convert_to_numpy`",
                fix=EditPlan((edit,), "ops.convert_to_numpy"),
            )
        elif name == "set_value" and len(site.args) == 2:
            value = _value_text(site, site.args[1])
            text = f"{_receiver_text(site, site.args[0])}.assign({value})"
            yield Report(
                site,
                "`K.set_value` is gone in Keras 3: assign to the variable",
                fix=EditPlan((ReplaceNode(site.span, text),), ".assign"),
            )
        elif name == "batch_get_value" and len(site.args) == 1:
            text = (
                "[{name:keras.ops.convert_to_numpy}(variable) for variable in "
                f"{site.text(site.args[0])}]"
            )
            yield Report(
                site,
                "`K.batch_get_value` is gone in Keras 3: convert each variable",
                fix=EditPlan((ReplaceNode(site.span, text),), "ops.convert_to_numpy"),
            )
        else:
            what = site.text(site.args[0]) if site.args else "pairs"
            yield Report(
                site,
                f"`{site.symbol}` is gone in Keras 3 (manual: "
                f"`for variable, value in {what}: variable.assign(value)`)",
            )
