"""KM510: `compute_output_shape` building a `tf.TensorShape`; Keras 3 uses tuples."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import CallSite, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule


class ComputeOutputShapeTensorShape(Rule):
    id = "KM510"
    name = "compute-output-shape-tensorshape"
    summary = "`compute_output_shape` builds a `tf.TensorShape`; Keras 3 uses tuples."
    rationale = (
        "Keras 3 passes `input_shape` to `compute_output_shape` as a tuple and expects a "
        "tuple back on every backend; `tf.TensorShape` needs TensorFlow and its methods "
        "(`concatenate`, `as_list`, `merge_with`) do not exist on tuples."
    )
    fix_safety = (
        "`tf.TensorShape([a, b])` -> `(a, b)` and `tf.TensorShape(x)` -> `tuple(x)` are "
        "exact; `tf.TensorShape(None)` (unknown rank) and `.concatenate(...)` on a shape "
        "are reported (use tuple concatenation: `input_shape[:-1] + (self.units,)`)."
    )
    severity = Severity.ERROR
    call_symbols = frozenset({"tf.TensorShape", "tf.compat.v1.TensorShape"})
    method_names = frozenset({"concatenate", "merge_with"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    return tf.TensorShape([input_shape[0], self.units])
            """,
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    return (input_shape[0], self.units)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    return input_shape[:-1].concatenate([self.units])
            """
        ),
        Clean(
            """
            import keras

            class Project(keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    return input_shape[:-1] + (self.units,)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.scope.function_name != "compute_output_shape":
            return
        if site.symbol.startswith("<method>."):
            yield Report(
                site,
                "`input_shape` is a tuple in Keras 3 (manual: use tuple slicing and `+`, "
                "e.g. `input_shape[:-1] + (self.units,)`)",
            )
            return
        dims = site.arg(0, "dims")
        if (
            dims is None
            or site.module.literal(dims) is None
            or len(site.args) + len(site.keywords) != 1
        ):
            yield Report(site, "return a tuple of dimensions (manual: unknown rank or form)")
            return
        if isinstance(dims, (ast.List, ast.Tuple)) and not any(
            isinstance(e, ast.Starred) for e in dims.elts
        ):
            items = [site.text(e) for e in dims.elts]
            text = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        else:
            text = f"tuple({site.text(dims)})"
        plan = EditPlan((ReplaceNode(site.span, text),), "tuple shape")
        yield Report(site, "return a tuple from `compute_output_shape` in Keras 3", fix=plan)
