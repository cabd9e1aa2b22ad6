"""KM535: ``.build(...)`` on a layer copied by ``layers.deserialize(layers.serialize(layer))``.

Keras 2's ``serialize`` kept only the class and its config, so the copy came back unbuilt
and the code built it. Keras 3's ``serialize`` also stores a built layer's
``build_config`` (its input shape), and ``deserialize`` builds the copy from it
(``keras/src/saving/serialization_lib.py``: ``build_from_config`` when the layer is not
built yet). A built Keras 3 layer's state is locked, so building it again raises
``ValueError: You cannot add new elements of state (variables or sub-layers) to a layer
that is already built`` on every backend. tensorflow/addons' ``WeightNormalization``
makes its data-init copy of the wrapped layer so in ``build``: the first error the
converted layer hits. Measured on Keras 3.15 (tensorflow, jax, torch) and tf_keras 2.21
(tests/rules/test_deserialized_layer_rebuilt_backends.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.local_names import bound_value
from kmigrate.rules.common.namespaces import in_keras_namespaces
from kmigrate.rules.common.scopes import own_nodes

_DESERIALIZE = in_keras_namespaces("layers.deserialize")
_SERIALIZE = in_keras_namespaces("layers.serialize")


def _same_self_attribute(target: ast.expr, receiver: ast.Attribute) -> bool:
    """Whether ``target`` is ``self.<name>`` as ``receiver`` is."""
    return (
        isinstance(target, ast.Attribute)
        and target.attr == receiver.attr
        and isinstance(target.value, ast.Name)
        and isinstance(receiver.value, ast.Name)
        and target.value.id == receiver.value.id == "self"
    )


def _only_value(scope: ast.AST, receiver: ast.Attribute) -> ast.expr | None:
    """The value of the one assignment to ``self.<name>`` (``receiver``) in the scope's
    own body, when nothing else stores it there (a tuple target, a loop: None)."""
    values: list[ast.expr] = []
    stores = 0
    for node in own_nodes(scope):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            stores += _same_self_attribute(node, receiver)
        elif isinstance(node, ast.Assign) and any(
            _same_self_attribute(t, receiver) for t in node.targets
        ):
            values.append(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            if _same_self_attribute(node.target, receiver):
                values.append(node.value)
    return values[0] if len(values) == 1 == stores else None


def _receiver_value(site: CallSite, receiver: ast.expr) -> ast.expr | None:
    """What ``receiver`` (``copy`` or ``self.copy``) was assigned: a name's one binding
    the call sees (``local_names.bound_value``); ``self.<name>``'s one assignment in the
    calling method, or else in the one method of the class that assigns it."""
    if isinstance(receiver, ast.Name):
        return bound_value(site.module, receiver)
    if not isinstance(receiver, ast.Attribute):
        return None
    function = site.scope.function_node
    value = _only_value(function, receiver) if function is not None else None
    class_node = site.scope.class_node
    if value is None and class_node is not None:
        found = [
            v
            for method in class_node.body
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
            for v in [_only_value(method, receiver)]
            if v is not None
        ]
        value = found[0] if len(found) == 1 else None
    return value


def _serialized_copy(site: CallSite, value: ast.expr | None) -> ast.Call | None:
    """The ``layers.deserialize(...)`` call when ``value`` is one and its config is a
    ``layers.serialize(...)`` call, inline or held in a name of the same function."""
    resolve = site.module.resolve
    if not (isinstance(value, ast.Call) and resolve(value.func) in _DESERIALIZE and value.args):
        return None
    config = value.args[0]
    if isinstance(config, ast.Name):  # edited in between (``config["trainable"] = False``)
        config = bound_value(site.module, config)
    if isinstance(config, ast.Call) and resolve(config.func) in _SERIALIZE:
        return value
    return None


def _guarded(function: ast.AST | None, call: ast.AST, receiver: ast.expr) -> bool:
    """Whether ``call`` sits in ``if not <receiver>.built:`` (what the finding asks for)."""
    wanted = ast.dump(receiver)
    for node in code_walk(function) if function is not None else ():
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp)):
            continue
        test = node.test
        if (
            isinstance(test.op, ast.Not)
            and isinstance(test.operand, ast.Attribute)
            and test.operand.attr == "built"
            and ast.dump(test.operand.value) == wanted
            and any(inner is call for stmt in node.body for inner in ast.walk(stmt))
        ):
            return True
    return False


class DeserializedLayerRebuilt(Rule):
    id = "KM535"
    name = "deserialized-layer-rebuilt"
    summary = (
        "`.build(...)` on a copy made with `layers.deserialize(layers.serialize(layer))`: "
        "Keras 3 returns a built layer's copy built, and building it again raises."
    )
    rationale = (
        "Keras 2's `layers.serialize` kept the class and the config, so the copy came back "
        "unbuilt and the code built it. Keras 3 also stores a built layer's `build_config` "
        "and `layers.deserialize` builds the copy from it; a built layer's state is locked, "
        "so `copy.build(shape)` raises `ValueError: You cannot add new elements of state "
        "(variables or sub-layers) to a layer that is already built` on every backend "
        "(tensorflow/addons' `WeightNormalization` copies the layer it wraps so in `build`)."
    )
    fix_safety = (
        "Reported: which fix keeps Keras 2's meaning depends on the shape the copy is built "
        "with. Build it only when it is not built (`if not copy.built:`; it then has the "
        "shape the original was built with), or copy with "
        "`type(layer).from_config(layer.get_config())`, which comes back unbuilt in Keras 2 "
        "and 3, and build that."
    )
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL, Context.UNDECIDED})
    method_names = frozenset({"build"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class WithCopy(tf.keras.layers.Wrapper):
                def build(self, input_shape):
                    if not self.layer.built:
                        self.layer.build(input_shape)
                    config = tf.keras.layers.serialize(self.layer)
                    config["config"]["trainable"] = False
                    self.copy = tf.keras.layers.deserialize(config)
                    self.copy.build(input_shape)
                    self.copy.set_weights(self.layer.get_weights())
                    self.built = True
            """
        ),
        Clean(
            """
            import keras

            class WithCopy(keras.layers.Wrapper):
                def build(self, input_shape):
                    if not self.layer.built:
                        self.layer.build(input_shape)
                    config = keras.layers.serialize(self.layer)
                    config["config"]["trainable"] = False
                    self.copy = keras.layers.deserialize(config)
                    if not self.copy.built:
                        self.copy.build(input_shape)
                    self.copy.set_weights(self.layer.get_weights())

            class WithFreshCopy(keras.layers.Wrapper):
                def build(self, input_shape):
                    config = self.layer.get_config()
                    config["trainable"] = False
                    self.copy = type(self.layer).from_config(config)
                    self.copy.build(input_shape)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        receiver = site.receiver
        if isinstance(receiver, ast.Call):  # layers.deserialize(...).build(shape)
            deserialize = _serialized_copy(site, receiver)
            copy = "copy"
        elif isinstance(receiver, (ast.Name, ast.Attribute)):
            deserialize = _serialized_copy(site, _receiver_value(site, receiver))
            copy = site.text(receiver)
            if _guarded(site.scope.function_node, site.node, receiver):
                return
        else:
            return
        if deserialize is None:
            return
        yield Report(
            site,
            f"`{site.text(deserialize.func)}` of a serialized layer makes `{copy}`: "
            "Keras 3 serializes a built layer's `build_config` and `deserialize` builds the "
            f"copy from it, so `{copy}.build(...)` raises `ValueError: You cannot add new "
            "elements of state (variables or sub-layers) to a layer that is already built` "
            f"on every backend (Keras 2 returned it unbuilt). Build it only when it is not "
            f"(`if not {copy}.built:`; it keeps the shape the original was built with), or "
            "make the copy with `type(layer).from_config(layer.get_config())`, unbuilt in "
            "Keras 2 and 3, and build that",
            symbol="keras.layers.deserialize",
        )
