"""KM501: Keras 2 `add_weight` calls (positional arguments, removed keywords)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import keywords_in_order


def _is_stringish(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and _is_stringish(node.left)


# tf_keras/src/engine/base_layer.py Layer.add_weight, positional order.
KERAS2_ADD_WEIGHT = (
    "name",
    "shape",
    "dtype",
    "initializer",
    "regularizer",
    "trainable",
    "constraint",
    "use_resource",
    "synchronization",
    "aggregation",
)
# keras/src/layers/layer.py Layer.add_weight keywords.
KERAS3_ADD_WEIGHT = frozenset(
    {
        "shape",
        "initializer",
        "dtype",
        "trainable",
        "autocast",
        "regularizer",
        "constraint",
        "aggregation",
        "overwrite_with_gradient",
        "name",
    }
)
_ADD_WEIGHT_DROPPED = frozenset({"use_resource", "partitioner"})  # no effect in TF2 Keras 2
_ADD_WEIGHT_MANUAL = {
    "getter": "custom variable getters do not exist in Keras 3",
    "caching_device": "`caching_device` does not exist in Keras 3",
    "collections": "variable collections do not exist in Keras 3",
    "layout": "use `keras.distribution.LayoutMap` for layouts",
    "experimental_enable_variable_lifting": "no equivalent in Keras 3",
}
_AGGREGATIONS = {
    "NONE": '"none"',
    "SUM": '"sum"',
    "MEAN": '"mean"',
    "ONLY_FIRST_REPLICA": '"only_first_replica"',
}


class AddWeightArguments(Rule):
    id = "KM501"
    name = "add-weight-arguments"
    summary = "`add_weight` called the Keras 2 way: `name` first, or TF-only arguments."
    rationale = (
        "Keras 2's `add_weight(name, shape, dtype, initializer, ...)` takes `name` first; "
        "Keras 3's takes `shape, initializer, dtype` positionally and `name` only by "
        "keyword (`add_weight('kernel', ...)` raises). `use_resource=`, "
        "`synchronization=` and `tf.VariableAggregation` values are TensorFlow-only."
    )
    fix_safety = (
        "Positional arguments become keywords by their Keras 2 names, so nothing moves. "
        "`use_resource=` (no effect in TF 2) is dropped, `experimental_autocast=` becomes "
        "`autocast=`, `trainable=None` (Keras 2: True) becomes `True`, and "
        "`tf.VariableAggregation.X` becomes its Keras 3 string. Not offered for `getter=`, "
        "`caching_device=`, a non-default `synchronization=`, or when the first positional "
        "argument may be a Keras 3 `shape`."
    )
    severity = Severity.ERROR
    method_names = frozenset({"add_weight"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.scale = self.add_weight(
                        "scale", (input_shape[-1],), use_resource=True, initializer="ones"
                    )
            """,
            """
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.scale = self.add_weight(
                        name="scale", shape=(input_shape[-1],), initializer="ones"
                    )
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Counter(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.count = self.add_weight(
                        name="count",
                        shape=(),
                        trainable=False,
                        aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
                    )
            """,
            """
            import tensorflow as tf

            class Counter(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.count = self.add_weight(
                        name="count",
                        shape=(),
                        trainable=False,
                        aggregation="only_first_replica",
                    )
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Odd(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.w = self.add_weight("w", (2,), getter=my_getter)
            """
        ),
        Clean(
            """
            import keras

            class Scale(keras.layers.Layer):
                def build(self, input_shape):
                    self.scale = self.add_weight((input_shape[-1],), "ones", name="scale")
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.has_star_args:
            return
        first = site.args[0] if site.args else None
        keras2_keywords = set(site.keywords) - KERAS3_ADD_WEIGHT
        aggregation = site.keywords.get("aggregation")
        tf_aggregation = aggregation is not None and (
            (site.module.resolve(aggregation) or "").startswith("tf.VariableAggregation.")
        )
        trainable_none = site.literal(None, "trainable") is None
        if first is not None and not _is_stringish(first):
            if "shape" not in site.keywords and not _name_like(first):
                if keras2_keywords or tf_aggregation or trainable_none:
                    yield from self._plan(site, keras2=False)
                return  # Keras 3 style add_weight(shape, initializer, dtype)
        if first is None and not (keras2_keywords or tf_aggregation or trainable_none):
            return
        yield from self._plan(site, keras2=first is not None)

    def _plan(self, site: CallSite, keras2: bool) -> Iterator[Report]:
        args: list[ArgOut] = []
        problems: list[str] = []
        if keras2:
            if len(site.args) > len(KERAS2_ADD_WEIGHT):
                problems.append("too many positional arguments")
            for index, _ in enumerate(site.args[: len(KERAS2_ADD_WEIGHT)]):
                args.append(ArgOut(index, keyword=KERAS2_ADD_WEIGHT[index]))
        else:
            args.extend(ArgOut(i) for i in range(len(site.args)))
        for keyword in keywords_in_order(site):
            args.append(ArgOut(keyword, keyword=keyword))
        fixed: list[ArgOut] = []
        for out in args:
            name = out.keyword or ""
            node = site.arg(out.source if isinstance(out.source, int) else None, out.source)
            if name in _ADD_WEIGHT_DROPPED:
                continue
            if name in _ADD_WEIGHT_MANUAL:
                problems.append(_ADD_WEIGHT_MANUAL[name])
            elif name == "experimental_autocast":
                out = ArgOut(out.source, keyword="autocast")
            elif name == "synchronization":
                if (site.module.resolve(node) or "") != "tf.VariableSynchronization.AUTO":
                    problems.append("Keras 3 has no `synchronization=`; use `aggregation=`")
                continue
            elif name == "aggregation" and node is not None:
                symbol = site.module.resolve(node) or ""
                if symbol.startswith("tf.VariableAggregation."):
                    value = _AGGREGATIONS.get(symbol.rsplit(".", 1)[1])
                    if value is None:
                        problems.append(f"`{symbol}` has no Keras 3 equivalent")
                    out = ArgOut(out.source, keyword="aggregation", value=value)
            elif name == "trainable" and node is not None and site.module.literal(node) is None:
                out = ArgOut(out.source, keyword="trainable", value="True")
            elif name not in KERAS3_ADD_WEIGHT:
                problems.append(f"`{name}=` does not exist in Keras 3")
            fixed.append(out)
        what = "takes `name` first in Keras 2 and `shape` first in Keras 3" if keras2 else ""
        what = what or "uses Keras 2 arguments Keras 3 does not accept"
        if problems:
            yield Report(site, f"`add_weight` {what} (manual: {'; '.join(problems)})")
            return
        plan = EditPlan((CallEdit(site.span, args=tuple(fixed)),), "keywords for add_weight")
        yield Report(site, f"`add_weight` {what}: pass the arguments by keyword", fix=plan)


def _name_like(node: ast.expr) -> bool:
    """A variable that holds a weight name (Keras 2 positional ``name``)."""
    text = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return "name" in text.lower()
