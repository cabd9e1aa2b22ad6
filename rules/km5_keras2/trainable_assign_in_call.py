"""KM533: a layer's ``call`` assigns a trainable variable (``self.w.assign(...)``).

Keras 2 (and Keras 3 on TensorFlow and PyTorch) keep such an assignment in ``fit``: the
variable holds the assigned value and the optimizer's step applies to it. Keras 3 on JAX
trains statelessly: ``Layer.stateless_call`` runs ``call`` in a ``StatelessScope`` and
hands back only the non-trainable variables' new values
(``keras/src/layers/layer.py``), so the assignment to a trainable one is dropped and the
step applies to the old value. tensorflow/addons' ``SpectralNormalization`` (its kernel,
assigned in ``normalize_weights``) trains differently on JAX with no error.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ModuleInfo, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import class_methods, keras_classes, module_site

_ASSIGNS = frozenset({"assign", "assign_add", "assign_sub"})
# A sub-layer's weights that Keras creates trainable (``self.w = self.layer.kernel``).
_TRAINABLE_SUB_WEIGHTS = frozenset(
    {"kernel", "bias", "embeddings", "recurrent_kernel", "depthwise_kernel", "pointwise_kernel"}
)


def _self_attribute(node: ast.AST) -> str | None:
    """``name`` for ``self.name``."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return node.attr
    return None


def _trainable_source(value: ast.AST) -> bool:
    """Whether ``value`` makes a trainable variable: ``self.add_weight(...)`` without
    ``trainable=False``, or a sub-layer's kernel-like weight (``self.layer.kernel``)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr != "add_weight":
            return False
        for keyword in value.keywords:
            if keyword.arg == "trainable":
                return isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        return True
    return (
        isinstance(value, ast.Attribute)
        and value.attr in _TRAINABLE_SUB_WEIGHTS
        and _self_attribute(value.value) is not None
    )


def _trainable_attributes(node: ast.ClassDef) -> set[str]:
    """``self.<name>`` bound anywhere in the class to a trainable variable, and never to
    anything else (a name bound to something unknown is left alone)."""
    trainable: set[str] = set()
    other: set[str] = set()
    for statement in code_walk(node):
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        name = _self_attribute(statement.targets[0])
        if name is not None:
            (trainable if _trainable_source(statement.value) else other).add(name)
    return trainable - other


def _reached_from_call(node: ast.ClassDef) -> list[ast.FunctionDef]:
    """``call`` and the methods of the class it calls as ``self.<method>(...)``, at any depth."""
    methods = class_methods(node)
    todo = ["call"] if "call" in methods else []
    reached: list[ast.FunctionDef] = []
    while todo:
        method = methods[todo.pop()]
        if method in reached:
            continue
        reached.append(method)
        for inner in code_walk(method):
            if isinstance(inner, ast.Call):
                name = _self_attribute(inner.func)
                if name in methods and methods[name] not in reached:
                    todo.append(name)
    return reached


class TrainableAssignInCall(Rule):
    id = "KM533"
    name = "trainable-assign-in-call"
    summary = (
        "A layer's `call` assigns a trainable variable: Keras 3 on JAX drops the "
        "assignment in `fit`, so the model trains differently there."
    )
    rationale = (
        "On JAX, Keras 3 trains statelessly: `Layer.stateless_call` runs `call` in a "
        "`StatelessScope` and returns only the non-trainable variables' new values, so "
        "`self.w.assign(...)` on a trainable variable during `fit` is lost and the "
        "optimizer's step applies to the old value (TensorFlow and PyTorch keep it, as "
        "Keras 2 did). Inference is unchanged; the weights after a training step differ."
    )
    fix_safety = (
        "Reported: the remedy depends on what the assignment is for (a non-trainable "
        "weight holding the value, or the value computed in `call` and used there "
        "without assigning it)."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Shrink(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], 2))

                def call(self, x, training=None):
                    if training:
                        self.kernel.assign(self.kernel * 0.5)
                    return tf.matmul(x, self.kernel)
            """
        ),
        Clean(
            """
            import keras

            class Count(keras.layers.Layer):
                def build(self, input_shape):
                    self.seen = self.add_weight(shape=(), initializer="zeros", trainable=False)

                def call(self, x):
                    self.seen.assign_add(1.0)
                    return x
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        if ".assign" not in module.text:
            return
        for _, node in keras_classes(module):
            trainable = _trainable_attributes(node)
            if not trainable:
                continue
            for method in _reached_from_call(node):
                for inner in code_walk(method):
                    if not (
                        isinstance(inner, ast.Call)
                        and isinstance(inner.func, ast.Attribute)
                        and inner.func.attr in _ASSIGNS
                    ):
                        continue
                    name = _self_attribute(inner.func.value)
                    if name not in trainable:
                        continue
                    where = "" if method.name == "call" else f" (through `{method.name}`)"
                    yield Report(
                        module_site(module, inner),
                        f"`self.{name}.{inner.func.attr}(...)` in `{node.name}.call`{where} "
                        f"assigns a trainable variable: Keras 3 on JAX trains statelessly "
                        f"and keeps only non-trainable variables' new values, so in `fit` "
                        f"the assignment is lost and the step applies to the old value (the "
                        f"weights differ from Keras 2's after training; TensorFlow and "
                        f"PyTorch keep it). Keep the value in a non-trainable weight "
                        f"(`add_weight(..., trainable=False)`), or compute it in `call` and "
                        f"use it there without assigning",
                        span=module.span_of(inner),
                    )
