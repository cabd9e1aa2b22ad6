"""KM522: a custom metric whose ``result()`` returns one of its own state variables.

Found by `kmigrate parity` on the samples: the converted metric ran on TensorFlow and
torch and failed `fit` on JAX, because a traced JAX function cannot return a Keras
variable object.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ModuleInfo, ReplaceNode, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import keras_classes

# What creates a metric's state: Keras 2 and Keras 3 both have `add_weight`; Keras 2
# also `add_variable`; Keras 3 code may build a `keras.Variable` itself.
_STATE_FACTORIES = frozenset({"add_weight", "add_variable"})
_VARIABLE_SYMBOLS = frozenset({"keras.Variable", "keras.variables.Variable"})


def _state_variables(module: ModuleInfo, node: ast.ClassDef) -> set[str]:
    """Attributes the class assigns from ``self.add_weight(...)`` (or a variable it
    builds) anywhere in its methods."""
    found: set[str] = set()
    for stmt in code_walk(node):
        if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
            continue
        func = stmt.value.func
        creates = (
            isinstance(func, ast.Attribute)
            and func.attr in _STATE_FACTORIES
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ) or module.resolve(func) in _VARIABLE_SYMBOLS
        if not creates:
            continue
        for target in stmt.targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                found.add(target.attr)
    return found


def _returned_attributes(method: ast.FunctionDef) -> list[ast.Attribute]:
    """The ``self.x`` of every ``return self.x`` in ``method``."""
    found = []
    for stmt in code_walk(method):
        value = stmt.value if isinstance(stmt, ast.Return) else None
        if (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == "self"
        ):
            found.append(value)
    return found


class MetricResultReturnsVariable(Rule):
    id = "KM522"
    name = "metric-result-returns-variable"
    summary = "A custom metric's `result()` returns a state variable itself."
    rationale = (
        "Keras 3 compiles the training step on JAX, and a metric's `result()` runs inside "
        "it: a JAX-traced function cannot return a Keras variable object, so `fit` fails "
        "with a `__jax_array__` error while TensorFlow and PyTorch run. Keras 2 turned the "
        "variable into a tensor on return."
    )
    fix_safety = (
        "Exact: `keras.ops.convert_to_tensor(self.x)` reads the variable's current value "
        "(the traced value inside a compiled step), which is what Keras 2 returned."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import keras

            class Hits(keras.metrics.Metric):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.hits = self.add_weight(name="hits", initializer="zeros")

                def update_state(self, y_true, y_pred, sample_weight=None):
                    self.hits.assign_add(keras.ops.sum(y_pred))

                def result(self):
                    return self.hits
            """,
            """
            import keras

            class Hits(keras.metrics.Metric):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.hits = self.add_weight(name="hits", initializer="zeros")

                def update_state(self, y_true, y_pred, sample_weight=None):
                    self.hits.assign_add(keras.ops.sum(y_pred))

                def result(self):
                    return keras.ops.convert_to_tensor(self.hits)
            """,
        ),
        Clean(
            """
            import keras

            class Mean(keras.metrics.Metric):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.total = self.add_weight(name="total", initializer="zeros")
                    self.count = self.add_weight(name="count", initializer="zeros")

                def update_state(self, y_true, y_pred, sample_weight=None):
                    self.total.assign_add(keras.ops.sum(y_pred))
                    self.count.assign_add(1.0)

                def result(self):
                    return keras.ops.divide_no_nan(self.total, self.count)
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        for site, node in keras_classes(module):
            methods = {s.name: s for s in node.body if isinstance(s, ast.FunctionDef)}
            result = methods.get("result")
            if result is None or "update_state" not in methods:
                continue  # a metric is a class with both; other classes have no result()
            state = _state_variables(module, node)
            for returned in _returned_attributes(result):
                if returned.attr not in state:
                    continue
                span = module.span_of(returned)
                text = module.segment(span)
                yield Report(
                    site,
                    f"`{node.name}.result()` returns the variable `{text}`: JAX cannot "
                    f"return a variable from the compiled training step; return "
                    f"`keras.ops.convert_to_tensor({text})`",
                    fix=EditPlan(
                        (ReplaceNode(span, f"{{name:keras.ops.convert_to_tensor}}({text})"),),
                        f"keras.ops.convert_to_tensor({text})",
                    ),
                    span=span,
                    symbol="Metric.result",
                )
