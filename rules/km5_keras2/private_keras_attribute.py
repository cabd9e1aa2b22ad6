"""KM509: private Keras 2 attributes and their public replacements."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import module_site

SHAPE_ADVICE = (
    "gone in Keras 3 (AttributeError on every backend): `tuple(x.shape)` is the static "
    "shape of a Keras tensor, a tuple of ints and None as it was"
)
# Private Keras 2 attributes and what to use instead.
PRIVATE_ATTRIBUTES = {
    "_layers": "use `model.layers` (Keras 3 keeps `_layers` as an internal tracker list)",
    "_inbound_nodes": "use `layer.input` / `layer.output` or rebuild a functional model",
    "_outbound_nodes": "use `layer.input` / `layer.output` or rebuild a functional model",
    "_keras_history": (
        "Keras 3 keeps it as (operation, node_index, tensor_index), the layer named "
        "`operation` (KM527 renames `.layer`); the functional API is the public way"
    ),
    "_trainable_weights": (
        "gone in Keras 3 (AttributeError on every backend): read `trainable_weights` "
        "(includes sub-layers); a layer kept as an attribute (`self.dense = Dense(...)`) "
        "is tracked on its own, so `self._trainable_weights += self.dense.trainable_weights` "
        "is deleted, not ported"
    ),
    "_non_trainable_weights": (
        "gone in Keras 3 (AttributeError on every backend): read `non_trainable_weights` "
        "(includes sub-layers); a layer kept as an attribute is tracked on its own"
    ),
    "_is_graph_network": "no Keras 3 equivalent; test `isinstance(model, keras.Functional)`",
    "_network_nodes": "no Keras 3 equivalent",
    "_input_layers": "use `model.inputs`",
    "_output_layers": "use `model.outputs`",
    "_self_tracked_trackables": "use `layer._flatten_layers()` or `layer.layers`",
    "_layer_call_argspecs": "no Keras 3 equivalent",
    "_feed_input_names": "use `[t.name for t in model.inputs]`",
    "_get_trainable_state": "no Keras 3 equivalent",
    "_set_trainable_state": "no Keras 3 equivalent",
    "_nodes_by_depth": "internal in Keras 3; walk `model.layers` instead",
    # TensorFlow's checkpoint tracking, which tf_keras layers inherit (tf.Module).
    "_track_trackable": (
        "TensorFlow's checkpoint tracking: a Keras 3 layer has it on the TensorFlow "
        "backend only (AttributeError on JAX and PyTorch); Keras 3 tracks a layer or "
        "variable held in an attribute (`self.layer = layer`) by itself, so delete the call "
        "where the object is also kept in an attribute"
    ),
    # Static shapes kept on a tensor by Keras 2.0-2.2 (``_keras_shape``) and TensorFlow
    # 2.0-2.3 (``_shape_val``, a TensorShape): neither tf_keras nor Keras 3 sets them.
    "_keras_shape": SHAPE_ADVICE,
    "_shape_val": SHAPE_ADVICE,
}
# Attributes no Keras 3 object has at all: reading one raises AttributeError on every
# backend, so the finding is an error, not a "may mean something else" warning.
GONE = frozenset({"_keras_shape", "_shape_val", "_trainable_weights", "_non_trainable_weights"})
# Attributes a Keras 3 object has on the TensorFlow backend only: an error too (the model
# does not run on JAX or PyTorch).
TENSORFLOW_ONLY = frozenset({"_track_trackable"})


class PrivateKerasAttribute(Rule):
    id = "KM509"
    name = "private-keras-attribute"
    summary = (
        "Keras 2 private attribute (`model._layers`, `layer._inbound_nodes`, "
        "`x._keras_shape`, ...), read directly or by `getattr(x, '_name')`."
    )
    rationale = (
        "Keras 3 is a rewrite: private attributes of Keras 2 layers and models are gone or "
        "mean something else. Code that reaches into them breaks, often silently. A "
        "tensor's `_keras_shape` (Keras 2.0-2.2) and `_shape_val` (TensorFlow 2.0-2.3) and "
        "a layer's `_trainable_weights` / `_non_trainable_weights` are gone outright: "
        "reading one (`+=` included) raises AttributeError (an error finding). "
        "`_track_trackable` (TensorFlow's checkpoint tracking) exists on the TensorFlow "
        "backend only: an error finding too."
    )
    fix_safety = (
        "Never rewritten: the public replacements are close but not identical. "
        "`getattr(x, '_name', default)` is not reported (it does not raise)."
    )
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import tensorflow as tf

            def freeze_all(model):
                for layer in model._layers:
                    layer.trainable = False
            """
        ),
        Flagged(
            """
            from tensorflow.keras import layers

            def squeeze(x, ratio):
                filters = getattr(x, "_shape_val")[-1]
                return layers.Dense(filters // ratio)(x)

            def width(x):
                return x._keras_shape[-1]
            """
        ),
        Clean(
            """
            import keras

            class Stack(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self._inbound_nodes = []  # its own attribute, not Keras's

                def count(self):
                    return len(self._inbound_nodes)

            def freeze_all(model):
                for layer in model.layers:
                    layer.trainable = False
            """
        ),
    ]

    def check_module(self, module) -> Iterable[Report]:
        # Cheap first: most modules never spell any of these names.
        if not any(name in module.text for name in PRIVATE_ATTRIBUTES):
            return
        nodes = [node for node in module.nodes(ast.Attribute) if node.attr in PRIVATE_ATTRIBUTES]
        # `x._name += ...` reads the attribute first: Keras 2's own, not the module's
        updated = {id(n.target) for n in module.nodes(ast.AugAssign)}
        owned = {n.attr for n in nodes if isinstance(n.ctx, ast.Store) and id(n) not in updated}
        owned |= set(_names_set_by_setattr(module))
        for node in nodes:
            read = isinstance(node.ctx, ast.Load) or id(node) in updated
            if read and node.attr not in owned:
                yield self._report(module, node, node.attr)
        for call, name in _getattr_reads(module):
            if name not in owned:
                yield self._report(module, call, name)

    def _report(self, module, node: ast.AST, name: str) -> Report:
        site = module_site(module, node)
        message = f"`{name}` is Keras 2 internals: {PRIVATE_ATTRIBUTES[name]}"
        raises = name in GONE or name in TENSORFLOW_ONLY
        return Report(site, message, severity=Severity.ERROR if raises else None)


def _string_argument(call: ast.Call, function: str, arity: int) -> str | None:
    """The attribute name ``call`` spells when it is ``function(obj, "name", ...)`` with
    exactly ``arity`` positional arguments and a private Keras 2 name."""
    if not (
        isinstance(call.func, ast.Name)
        and call.func.id == function
        and len(call.args) == arity
        and not call.keywords
    ):
        return None
    name = call.args[1]
    if isinstance(name, ast.Constant) and name.value in PRIVATE_ATTRIBUTES:
        return name.value
    return None


def _getattr_reads(module) -> Iterable[tuple[ast.Call, str]]:
    """``getattr(x, "_keras_shape")``: a read that raises when the attribute is gone (the
    three-argument form has a default and does not)."""
    for call in module.nodes(ast.Call):
        name = _string_argument(call, "getattr", 2)
        if name is not None:
            yield call, name


def _names_set_by_setattr(module) -> Iterable[str]:
    """Names the module sets itself with ``setattr(x, "_keras_shape", ...)``."""
    for call in module.nodes(ast.Call):
        name = _string_argument(call, "setattr", 3)
        if name is not None:
            yield name
