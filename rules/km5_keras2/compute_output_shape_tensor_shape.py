"""KM510: `compute_output_shape` building a `tf.TensorShape`; Keras 3 uses tuples."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import CallSite, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.shape_uses import as_list_call


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
        Flagged(
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    shape = tf.TensorShape(input_shape).as_list()
                    shape[-1] = self.units
                    return tf.TensorShape(shape)
            """,
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    shape = list(input_shape)
                    shape[-1] = self.units
                    return tuple(shape)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    shape = tf.TensorShape(input_shape)
                    return shape.concatenate([self.units])
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
        literal = isinstance(dims, (ast.List, ast.Tuple)) and not any(
            isinstance(e, ast.Starred) for e in dims.elts
        )
        items = [site.text(e) for e in dims.elts] if literal else []  # type: ignore[attr-defined]
        as_list = as_list_call(site)
        if as_list is not None:  # `tf.TensorShape(x).as_list()` is the list of x's dims
            text = f"[{', '.join(items)}]" if literal else f"list({site.text(dims)})"
            plan = EditPlan((ReplaceNode(site.module.span_of(as_list), text),), "list shape")
            yield Report(site, "`input_shape` is a tuple in Keras 3: take its list", fix=plan)
            return
        unsafe = _shape_use_beyond_tuples(site)
        if unsafe is not None:
            yield Report(
                site,
                f"return a tuple from `compute_output_shape` in Keras 3 (manual: {unsafe}; "
                "tuples have no `as_list`/`concatenate`/`rank`: use `list(shape)`, "
                "slicing and `+`)",
            )
            return
        if literal:
            text = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        else:
            text = f"tuple({site.text(dims)})"
        plan = EditPlan((ReplaceNode(site.span, text),), "tuple shape")
        yield Report(site, "return a tuple from `compute_output_shape` in Keras 3", fix=plan)


def _shape_use_beyond_tuples(site: CallSite) -> str | None:
    """Why a tuple in place of this ``tf.TensorShape`` might break the code that uses it,
    or None when it is returned, or bound to a name that is only returned, indexed or
    measured with ``len`` (a tuple does all of that as the shape did)."""
    parent = site.module.parent_of(site.node)
    if isinstance(parent, ast.Return):
        return None
    if not (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and site.scope.function_node is not None
    ):
        return "the shape is used beyond being returned"
    name = parent.targets[0].id
    function = site.scope.function_node
    for node in ast.walk(function):
        for child in ast.iter_child_nodes(node):
            if not (isinstance(child, ast.Name) and child.id == name) or child is parent.targets[0]:
                continue
            if isinstance(child.ctx, ast.Store):
                if isinstance(node, ast.Assign) and child in node.targets:
                    continue  # whatever it holds then, its reads decide (`if`/`else` shapes)
                return f"`{name}` is updated in place (`+=`, a loop or unpacking target)"
            fine = (
                isinstance(node, ast.Return)
                or (isinstance(node, ast.Subscript) and node.value is child)
                or (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "len"
                    and node.args == [child]
                )
            )
            if not fine:
                return f"`{name}` is used as a shape object"
    return None
