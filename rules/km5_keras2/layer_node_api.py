"""KM527: Keras 2's layer-node API (``get_output_at``, ``inbound_nodes``,
``tensor._keras_history.layer``...), gone or renamed in Keras 3."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ModuleInfo, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import module_site
from kmigrate.rules.common.namespaces import in_keras_namespaces
from kmigrate.rules.common.scopes import own_nodes, scopes, single_assignment
from kmigrate.rules.common.sub_layers import LAYER_NAMESPACES

# Keras 2 ``Layer`` methods (tf_keras/src/engine/base_layer.py) -> the Keras 3 property
# that reads the same node attribute at node 0 (keras/src/ops/operation.py: ``input`` and
# ``output`` are ``_get_node_attribute_at_index(0, "input_tensors"/"output_tensors")``,
# as Keras 2's ``get_input_at(0)`` / ``get_output_at(0)`` are), or None: no Keras 3 form.
NODE_METHODS: dict[str, str | None] = {
    "get_input_at": "input",
    "get_output_at": "output",
    "get_input_shape_at": None,
    "get_output_shape_at": None,
    "get_input_mask_at": None,
    "get_output_mask_at": None,
}
# What to write instead where no rewrite is exact.
ADVICE = {
    "get_input_shape_at": (
        "for node 0 write `tuple(layer.input.shape)` (one input) or `[tuple(t.shape) for t "
        "in layer.input]` (several)"
    ),
    "get_output_shape_at": (
        "for node 0 write `tuple(layer.output.shape)` (one output) or `[tuple(t.shape) for "
        "t in layer.output]` (several)"
    ),
    "get_input_mask_at": "Keras 3 keeps no per-node masks: pass the mask explicitly",
    "get_output_mask_at": "Keras 3 keeps no per-node masks: call `compute_mask` yourself",
    "get_input_at": "for node i > 0 read `layer._inbound_nodes[i].input_tensors`",
    "get_output_at": "for node i > 0 read `layer._inbound_nodes[i].output_tensors`",
    "inbound_nodes": (
        "use `layer.input` / `layer.output` (node 0); Keras 3 keeps the nodes in the private "
        "`layer._inbound_nodes`, whose `Node` has `operation`, `input_tensors`, "
        "`output_tensors` and `parent_nodes` (no `inbound_layers`)"
    ),
    "outbound_nodes": (
        "Keras 3 keeps them in the private `layer._outbound_nodes` (`Node.operation` is the "
        "layer that consumes the output); walking `model.layers` is the public way"
    ),
}
_PUBLIC_NODE_LISTS = frozenset({"inbound_nodes", "outbound_nodes"})
INPUT = in_keras_namespaces("Input", "layers.Input")


def _keras_tensor(module: ModuleInfo, value: ast.expr | None) -> bool:
    """Whether ``value`` makes a Keras tensor: ``Input(...)`` or a layer built and called
    at once (``Dense(4)(x)``)."""
    if not isinstance(value, ast.Call):
        return False
    if (module.resolve(value.func) or "") in INPUT:
        return True
    inner = value.func
    symbol = (module.resolve(inner.func) or "") if isinstance(inner, ast.Call) else ""
    return symbol.startswith(LAYER_NAMESPACES) and symbol.rpartition(".")[2][:1].isupper()


def _tensor_nodes(module: ModuleInfo) -> Iterable[Report]:
    """``x.node`` where ``x`` is a Keras tensor (tf_keras's ``KerasTensor.node``)."""
    if not any(node.attr == "node" for node in module.nodes(ast.Attribute)):
        return  # no `.node` anywhere: no walk of the scopes
    for scope in scopes(module.tree):
        for node in own_nodes(scope):
            if not (
                isinstance(node, ast.Attribute)
                and node.attr == "node"
                and isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and _keras_tensor(module, single_assignment(scope, node.value.id))
            ):
                continue
            name = node.value.id
            yield Report(
                module_site(module, node),
                f"Keras 3's KerasTensor has no `.node`: `{name}._keras_history.operation."
                f"_inbound_nodes[{name}._keras_history.node_index]` is the Keras 3 `Node` "
                "(private: `operation`, `input_tensors`, `output_tensors`, `parent_nodes`; "
                "no `layer`, `inbound_layers` or `call_args`)",
            )


def _node_index(call: ast.Call) -> ast.expr | None:
    if len(call.args) == 1 and not call.keywords:
        return call.args[0]
    if not call.args and [k.arg for k in call.keywords] == ["node_index"]:
        return call.keywords[0].value
    return None


class LayerNodeApi(Rule):
    id = "KM527"
    name = "layer-node-api"
    summary = (
        "Keras 2's node API: `layer.get_output_at(i)`, `get_input_shape_at(i)`, "
        "`layer.inbound_nodes`, `tensor._keras_history.layer`, `tensor.node`."
    )
    rationale = (
        "Keras 3's layers have no `get_input_at` / `get_output_at` / `get_*_shape_at` / "
        "`get_*_mask_at` methods and no public `inbound_nodes` / `outbound_nodes`; a Keras "
        "tensor has no `.node`, and its `_keras_history` names its layer `operation`, not "
        "`layer`. Each raises "
        "AttributeError under Keras 3 on every backend."
    )
    fix_safety = (
        "Rewritten where Keras 3 reads the same thing: `layer.get_input_at(0)` -> "
        "`layer.input`, `layer.get_output_at(0)` -> `layer.output` (both node 0, one tensor "
        "or a list, as in Keras 2; a layer never called raises AttributeError instead of "
        "RuntimeError), `t._keras_history.layer` -> `t._keras_history.operation` (the same "
        "namedtuple field). Other node indexes, shapes, masks, the node lists and "
        "`tensor.node` (where the tensor comes from `Input(...)` or `Layer(...)(x)` in "
        "the same scope; Keras 3's `Node` differs) are "
        "reported with what to write instead."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            from tensorflow import keras

            def features(model):
                dense = model.get_layer("dense")
                return keras.Model(model.input, dense.get_output_at(0))

            def producer(tensor):
                return tensor._keras_history.layer
            """,
            """
            from tensorflow import keras

            def features(model):
                dense = model.get_layer("dense")
                return keras.Model(model.input, dense.output)

            def producer(tensor):
                return tensor._keras_history.operation
            """,
        ),
        Flagged(
            """
            def widths(layer):
                return [layer.get_input_shape_at(i)[-1] for i in range(len(layer.inbound_nodes))]
            """
        ),
        Flagged(
            """
            from tensorflow import keras

            inputs = keras.Input((4,))
            hidden = keras.layers.Dense(3)(inputs)
            producer = hidden.node.layer
            """
        ),
        Clean(
            """
            def widths(layer):
                return [layer.input.shape[-1], layer.output.shape[-1]]

            class Graph:
                def __init__(self):
                    self.inbound_nodes = []

                def count(self):
                    return len(self.inbound_nodes)
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        if ".node" in module.text:
            yield from _tensor_nodes(module)
        if not any(name in module.text for name in (*NODE_METHODS, *_PUBLIC_NODE_LISTS)) and (
            "_keras_history" not in module.text
        ):
            return
        attributes = list(module.nodes(ast.Attribute))
        owned = {a.attr for a in attributes if isinstance(a.ctx, ast.Store)}
        calls = {id(c.func): c for c in module.nodes(ast.Call)}
        for node in attributes:
            if not isinstance(node.ctx, ast.Load) or node.attr in owned:
                continue
            if node.attr in NODE_METHODS and id(node) in calls:
                yield self._method_report(module, node, calls[id(node)])
            elif node.attr in _PUBLIC_NODE_LISTS:
                yield Report(
                    module_site(module, node),
                    f"`.{node.attr}` is gone from Keras 3's layers: {ADVICE[node.attr]}",
                )
            elif node.attr == "layer" and (
                isinstance(node.value, ast.Attribute) and node.value.attr == "_keras_history"
            ):
                text = f"{module.node_text(node.value)}.operation"
                yield Report(
                    module_site(module, node),
                    "Keras 3's `_keras_history` names the tensor's layer `operation`: "
                    "`._keras_history.layer` becomes `._keras_history.operation`",
                    fix=EditPlan((ReplaceNode(module.span_of(node), text),), text),
                )

    def _method_report(self, module: ModuleInfo, node: ast.Attribute, call: ast.Call) -> Report:
        site = module_site(module, call)
        method, target = node.attr, NODE_METHODS[node.attr]
        index = _node_index(call)
        if target is not None and index is not None and module.literal(index) == 0:
            text = f"{module.node_text(node.value)}.{target}"
            return Report(
                site,
                f"`{method}(0)` is gone from Keras 3's layers: `.{target}` reads the same "
                "node-0 tensors",
                fix=EditPlan((ReplaceNode(module.span_of(call), text),), text),
            )
        return Report(site, f"`{method}` is gone from Keras 3's layers: {ADVICE[method]}")
