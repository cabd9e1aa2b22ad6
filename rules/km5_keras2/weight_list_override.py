"""KM528: a layer overrides ``trainable_weights`` / ``non_trainable_weights`` / ``weights``,
which Keras 3 no longer reads when it gathers a model's weights."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ModuleInfo, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import keras_classes, module_site
from kmigrate.rules.common.sub_layers import sub_layer_attributes

# Keras 2 gathered a model's weights through each layer's ``trainable_weights`` /
# ``non_trainable_weights`` (tf_keras/src/engine/base_layer.py), so a layer could hide
# some. Keras 3 (keras/src/layers/layer.py) builds ``weights`` and ``variables`` from
# ``self._trainable_variables``, ``self._non_trainable_variables`` and every tracked
# sub-layer's ``variables``; ``fit`` trains ``model.trainable_variables``; saving and
# ``load_weights`` walk the same tracked layers. An override is read only by whoever
# asks that one layer for it.
WEIGHT_LISTS = frozenset({"trainable_weights", "non_trainable_weights", "weights"})


def _is_property(method: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in method.decorator_list)


def _self_reads(node: ast.AST) -> set[str]:
    return {
        n.attr
        for n in code_walk(node)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    }


class WeightListOverride(Rule):
    id = "KM528"
    name = "weight-list-override"
    summary = (
        "A layer overrides `trainable_weights` / `non_trainable_weights` / `weights`: Keras 3 "
        "gathers a model's weights without it."
    )
    rationale = (
        "Keras 2 built a model's weight lists from each layer's `trainable_weights` and "
        "`non_trainable_weights`, so a wrapper could leave out a template layer it only "
        "copies (keras-multi-head's `MultiHead` lists its copies, not `self.layer`). "
        "Keras 3 builds `model.weights`, `model.trainable_variables` (what `fit` trains), "
        "saving and `load_weights` from every layer tracked on `self`, and never calls the "
        "override: a `MultiHead` of 4 `Dense` copies has 8 weights in Keras 2 and 10 in "
        "Keras 3 (the built template joins), and weight files saved by Keras 2 no longer "
        "line up."
    )
    fix_safety = (
        "Reported: a layer that must not count has to stay out of Keras 3's tracking or "
        "unbuilt (a wrapper that only copies `self.layer` ends its `build` with "
        "`self.built = True` instead of `super().build(input_shape)`, which builds "
        "`self.layer`), and the override can go."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            from tensorflow import keras

            class MultiHead(keras.layers.Wrapper):
                def __init__(self, layer, heads=4, **kwargs):
                    super().__init__(layer, **kwargs)
                    self.heads = heads

                def build(self, input_shape):
                    config = self.layer.get_config()
                    self.copies = [
                        self.layer.__class__.from_config(config) for _ in range(self.heads)
                    ]
                    for copy in self.copies:
                        copy.build(input_shape)
                    super().build(input_shape)

                @property
                def trainable_weights(self):
                    return [w for copy in self.copies for w in copy.trainable_weights]
            """
        ),
        Clean(
            """
            import keras

            class MultiHead(keras.layers.Wrapper):
                def build(self, input_shape):
                    config = self.layer.get_config()
                    self.copies = [self.layer.__class__.from_config(config) for _ in range(4)]
                    for copy in self.copies:
                        copy.build(input_shape)
                    self.built = True
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        if not any(name in module.text for name in WEIGHT_LISTS):
            return
        classes = keras_classes(module)
        local_layers = {node.name for _, node in classes}
        for _, node in classes:
            overrides = [
                s
                for s in node.body
                if isinstance(s, ast.FunctionDef) and s.name in WEIGHT_LISTS and _is_property(s)
            ]
            if not overrides:
                continue
            held = sub_layer_attributes(module, node, local_layers)
            for method in overrides:
                left_out = sorted(held - _self_reads(method))
                said = (
                    f"`{node.name}.{method.name}` is not read by Keras 3, which gathers "
                    "`model.weights`, the variables `fit` trains, saving and `load_weights` "
                    "from every layer tracked on `self`"
                )
                if left_out:
                    names = ", ".join(f"`self.{name}`" for name in left_out)
                    yield Report(
                        module_site(module, method),
                        f"{said}: {names}, left out here, count again once built (the model "
                        "gains its weights, Keras 2 weight files no longer line up); keep it "
                        "unbuilt (end `build` with `self.built = True`, not "
                        "`super().build(...)`) or untracked, then drop the override",
                    )
                else:
                    yield Report(
                        module_site(module, method),
                        f"{said}; check the model's weight count against Keras 2's and "
                        "drop the override",
                        severity=Severity.WARNING,
                    )
