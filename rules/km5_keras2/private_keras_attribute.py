"""KM509: private Keras 2 attributes and their public replacements."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import module_site

# Private Keras 2 attributes and what to use instead.
PRIVATE_ATTRIBUTES = {
    "_layers": "use `model.layers` (Keras 3 keeps `_layers` as an internal tracker list)",
    "_inbound_nodes": "use `layer.input` / `layer.output` or rebuild a functional model",
    "_outbound_nodes": "use `layer.input` / `layer.output` or rebuild a functional model",
    "_keras_history": (
        "Keras 3 keeps it as (operation, node_index, tensor_index), the layer named "
        "`operation` (KM527 renames `.layer`); the functional API is the public way"
    ),
    "_trainable_weights": "use `trainable_weights` (includes sub-layers)",
    "_non_trainable_weights": "use `non_trainable_weights` (includes sub-layers)",
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
}


class PrivateKerasAttribute(Rule):
    id = "KM509"
    name = "private-keras-attribute"
    summary = "Keras 2 private attribute (`model._layers`, `layer._inbound_nodes`, ...)."
    rationale = (
        "Keras 3 is a rewrite: private attributes of Keras 2 layers and models are gone or "
        "mean something else. Code that reaches into them breaks, often silently."
    )
    fix_safety = "Never rewritten: the public replacements are close but not identical."
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
        owned = {n.attr for n in nodes if isinstance(n.ctx, ast.Store)}
        for node in nodes:
            if isinstance(node.ctx, ast.Load) and node.attr not in owned:
                site = module_site(module, node)
                advice = PRIVATE_ATTRIBUTES[node.attr]
                yield Report(site, f"`{node.attr}` is Keras 2 internals: {advice}")
