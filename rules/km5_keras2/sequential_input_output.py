"""KM529: ``model.input`` / ``model.output`` of a ``Sequential``, and its ``inputs`` read
before it is built: Keras 3's ``Sequential`` answers neither as Keras 2 did."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ModuleInfo, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import module_site
from kmigrate.rules.common.namespaces import in_keras_namespaces
from kmigrate.rules.common.scopes import own_nodes, scopes, single_assignment

SEQUENTIAL = in_keras_namespaces("Sequential", "models.Sequential")
INPUT = in_keras_namespaces("Input", "layers.Input", "layers.InputLayer")
# keras/src/models/sequential.py (3.15) defines `inputs`, `outputs`, `input_shape` and
# `output_shape` (from its inner functional model) but not `input` / `output`: those are
# `Layer`'s, read from the Sequential's own call history, which a Sequential built from
# its layers does not have (AttributeError "has never been called"). A Sequential has one
# input and one output, which Keras 2's `input` / `output` returned as one tensor.
SINGLE = {"input": "inputs", "output": "outputs"}
# What Keras 2 answered None (`inputs`, `outputs`) or raised for, and Keras 3 raises for,
# on a Sequential that does not know its input yet.
BEFORE_BUILD = frozenset({"inputs", "outputs", "input_shape", "output_shape"})
# Calls on the model that build it.
BUILDERS = frozenset(
    {"build", "fit", "predict", "evaluate", "train_on_batch", "predict_on_batch", "test_on_batch"}
)
INPUT_KEYWORDS = frozenset({"input_shape", "batch_input_shape", "input_dim", "batch_shape"})


def _knows_its_input(module: ModuleInfo, call: ast.Call) -> bool:
    """Whether ``Sequential([...])`` is built at once: its first layer is an ``Input`` or
    is given its input shape. Unknown (not a literal list) counts as known."""
    layers = call.args[0] if call.args else None
    if not isinstance(layers, (ast.List, ast.Tuple)):
        return layers is not None
    if not layers.elts:
        return False
    first = layers.elts[0]
    if not isinstance(first, ast.Call):
        return True
    if (module.resolve(first.func) or "") in INPUT:
        return True
    return any(k.arg in INPUT_KEYWORDS or k.arg is None for k in first.keywords)


def _built_before(scope: ast.AST, name: str, line: int) -> bool:
    """Whether the scope builds or calls the model ``name`` before ``line``, or adds to it
    (``add(Input(...))`` builds it, which is not worth telling apart)."""
    for node in own_nodes(scope):
        if not isinstance(node, ast.Call) or node.lineno >= line:
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == name:
            return True
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == name
            and (func.attr in BUILDERS or func.attr == "add")
        ):
            return True
    return False


class SequentialInputOutput(Rule):
    id = "KM529"
    name = "sequential-input-output"
    summary = (
        "`model.input` / `model.output` of a `Sequential`, or its `inputs` read before it is built."
    )
    rationale = (
        "Keras 3's `Sequential` has `inputs` and `outputs` but no `input` / `output` of its "
        "own: `model.input` raises AttributeError ('has never been called') even once the "
        "model is built, where Keras 2 returned its one input tensor. And before it knows "
        "its input shape, Keras 2's `model.inputs` / `outputs` were None where Keras 3's "
        "raise AttributeError."
    )
    fix_safety = (
        "`model.input` -> `model.inputs[0]` and `model.output` -> `model.outputs[0]` where "
        "`model` is assigned a `Sequential(...)` in the same function and nowhere else "
        "(a Sequential has exactly one input and one output). `inputs` / `outputs` / "
        "`input_shape` read on a Sequential with no `Input` or input shape before it is "
        "built or called are reported."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            from tensorflow import keras

            def features():
                model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
                return keras.Model(model.input, model.output)
            """,
            """
            from tensorflow import keras

            def features():
                model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
                return keras.Model(model.inputs[0], model.outputs[0])
            """,
        ),
        Flagged(
            """
            from tensorflow import keras

            def describe():
                model = keras.Sequential([keras.layers.Dense(4)])
                return model.inputs is None
            """
        ),
        Clean(
            """
            from tensorflow import keras

            def describe(x):
                model = keras.Sequential([keras.layers.Dense(4)])
                model.build((None, 8))
                inner = keras.Model(x, x)
                return model.inputs, inner.input
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        if "Sequential" not in module.text:
            return
        if not any(_asked(node) for node in module.nodes(ast.Attribute)):
            return  # no `name.input`-like read anywhere: no walk of the scopes
        for scope in scopes(module.tree):
            for node in own_nodes(scope):
                if not (isinstance(node, ast.Attribute) and _asked(node)):
                    continue
                value = single_assignment(scope, node.value.id)
                if not (
                    isinstance(value, ast.Call) and (module.resolve(value.func) or "") in SEQUENTIAL
                ):
                    continue
                yield from self._report(module, scope, node, value)

    def _report(
        self, module: ModuleInfo, scope: ast.AST, node: ast.Attribute, made: ast.Call
    ) -> Iterable[Report]:
        name = node.value.id  # type: ignore[attr-defined]
        site = module_site(module, node)
        if node.attr in SINGLE:
            text = f"{name}.{SINGLE[node.attr]}[0]"
            yield Report(
                site,
                f"Keras 3's `Sequential` has no `{node.attr}` of its own (AttributeError even "
                f"once built): `{name}.{node.attr}` becomes `{text}`, its one {node.attr}",
                fix=EditPlan((ReplaceNode(module.span_of(node), text),), text),
            )
        elif not _knows_its_input(module, made) and not _built_before(scope, name, node.lineno):
            yield Report(
                site,
                f"`{name}` is a `Sequential` that does not know its input yet here: Keras 2's "
                f"`{name}.{node.attr}` was None (or raised), Keras 3's raises AttributeError; "
                f"start it with `keras.Input(shape)` or call `{name}.build(input_shape)` "
                f"first, or test `{name}.built`",
            )


def _asked(node: ast.Attribute) -> bool:
    """``name.input`` (or another attribute a Sequential answers only once built), read."""
    return (
        isinstance(node.ctx, ast.Load)
        and (node.attr in SINGLE or node.attr in BEFORE_BUILD)
        and isinstance(node.value, ast.Name)
    )
