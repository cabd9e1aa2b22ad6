"""KM520: ``model.add_loss(tensor)`` on a functional model.

Keras 2 let a functional model take an extra loss built from its symbolic tensors
(``model.add_loss(K.mean(z_log_var))``, the classic VAE). Keras 3 functional models have
no symbolic losses: the call raises, on every backend.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import CallSite, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule

_MODEL_SUFFIXES = (".Model", ".models.Model", ".training.Model", ".engine.Model")


def _functional_assignment(site: CallSite, name: str) -> ast.Call | None:
    """The ``name = Model(inputs, outputs)`` that binds ``name`` in the enclosing
    function (or module), if any."""
    scope = site.scope.function_node or site.module.tree
    for node in code_walk(scope):
        if not (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.Call)
        ):
            continue
        call = node.value
        symbol = site.module.resolve(call.func) or ""
        if not (symbol.endswith(_MODEL_SUFFIXES) or symbol == "Model"):
            continue
        keywords = {k.arg for k in call.keywords}
        if (
            len(call.args) >= 2
            or {"inputs", "outputs"} <= keywords
            or (call.args and "outputs" in keywords)
        ):
            return call
    return None


class FunctionalAddLoss(Rule):
    id = "KM520"
    name = "functional-add-loss"
    summary = "`model.add_loss(...)` on a functional `Model(inputs, outputs)`."
    rationale = (
        "Keras 3 functional models do not take symbolic losses: `add_loss` with a tensor "
        "built from the model's inputs raises. The loss has to be computed where tensors "
        "are real: in a layer's `call` (`self.add_loss(...)`) or in `compute_loss` of a "
        "`Model` subclass."
    )
    fix_safety = (
        "Reported: move the loss into a small layer that calls `self.add_loss(...)` in "
        "`call` and returns its input, placed where the tensors are."
    )
    severity = Severity.ERROR
    method_names = frozenset({"add_loss"})
    examples = [
        Flagged(
            """
            import keras

            inputs = keras.Input((4,))
            z = keras.layers.Dense(2)(inputs)
            vae = keras.Model(inputs, z)
            vae.add_loss(keras.ops.mean(z))
            """
        ),
        Clean(
            """
            import keras

            class Penalty(keras.layers.Layer):
                def call(self, z):
                    self.add_loss(keras.ops.mean(z))
                    return z
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        receiver = site.receiver
        if not isinstance(receiver, ast.Name) or receiver.id == "self":
            return
        if _functional_assignment(site, receiver.id) is None:
            return
        yield Report(
            site,
            f"`{receiver.id}` is a functional model: Keras 3 raises on `add_loss` with a "
            "symbolic tensor; compute the loss in a layer (`self.add_loss(...)` in its "
            "`call`) placed in the graph, or in `compute_loss` of a Model subclass",
        )
