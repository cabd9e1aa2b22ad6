"""KM532: a layer with its own ``compute_output_shape`` creates a sub-layer in ``build``
and never builds it there.

Keras 2 traced ``call`` while a functional model was put together, so a sub-layer made
in ``build`` was called, and built, at once. Keras 3 asks ``compute_output_shape`` for
the output instead when a layer defines it, and runs ``call`` only on real data: the
sub-layer stays unbuilt, with no weights, until the first batch goes through.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ModuleInfo, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import class_methods, keras_classes
from kmigrate.rules.common.layer_weights import NO_WEIGHTS_FROM_BUILD
from kmigrate.rules.common.sub_layers import layer_class, self_targets


def _built_in(build: ast.FunctionDef, name: str) -> bool:
    """Whether ``build`` builds or calls ``self.<name>`` (``self.dense.build(shape)``,
    ``self.dense(x)``), which creates its weights there."""
    for node in code_walk(build):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "build":
            func = func.value
        if (
            isinstance(func, ast.Attribute)
            and func.attr == name
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            return True
    return False


class UnbuiltSubLayer(Rule):
    id = "KM532"
    name = "unbuilt-sub-layer"
    summary = (
        "A layer that defines `compute_output_shape` creates a sub-layer in `build` "
        "without building it."
    )
    rationale = (
        "Keras 2 ran `call` while a functional model was put together, which built a "
        "sub-layer created in `build`. Keras 3 asks the layer's own `compute_output_shape` "
        "instead and runs `call` only on data, so the sub-layer has no weights when the "
        "model is made: `model.weights` and `summary()` leave them out, and Keras 2 weights "
        "loaded (`load_weights`, `set_weights`) before the first batch do not fit."
    )
    fix_safety = (
        "Reported: build the sub-layer in `build` with the shape it receives "
        "(`self.dense.build(input_shape)`), which a person knows and the code may not say."
    )
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import keras

            class Block(keras.layers.Layer):
                def build(self, input_shape):
                    self.dense = keras.layers.Dense(4)
                    super().build(input_shape)

                def call(self, x):
                    return self.dense(x)

                def compute_output_shape(self, input_shape):
                    return input_shape[:-1] + (4,)
            """
        ),
        Clean(
            """
            import keras

            class Block(keras.layers.Layer):
                def build(self, input_shape):
                    self.dense = keras.layers.Dense(4)
                    self.dense.build(input_shape)

                def call(self, x):
                    return self.dense(x)

                def compute_output_shape(self, input_shape):
                    return input_shape[:-1] + (4,)
            """
        ),
        Clean(  # no compute_output_shape: Keras 3 runs `call` on symbolic inputs
            """
            import keras

            class Block(keras.layers.Layer):
                def build(self, input_shape):
                    self.dense = keras.layers.Dense(4)

                def call(self, x):
                    return self.dense(x)
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        classes = keras_classes(module)
        local_layers = {node.name for _, node in classes}
        for site, node in classes:
            methods = class_methods(node)
            build = methods.get("build")
            if build is None or "compute_output_shape" not in methods:
                continue
            for stmt in code_walk(build):
                if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
                    continue
                built = layer_class(module, stmt.value, local_layers)
                if built is None or built in NO_WEIGHTS_FROM_BUILD or built == "InputSpec":
                    continue
                for name in self_targets(stmt):
                    if _built_in(build, name):
                        continue
                    yield Report(
                        site,
                        f"`{node.name}.build` creates `self.{name}` ({built}) and does not build "
                        f"it, and `{node.name}` defines `compute_output_shape`: Keras 3 takes the "
                        "output shape from it instead of running `call` while the model is "
                        f"made, so `self.{name}` has no weights until the first batch "
                        "(`model.weights` and `summary()` leave them out, Keras 2 weights "
                        f"loaded before then do not fit); build it there: "
                        f"`self.{name}.build(<its input shape>)`",
                        span=module.span_of(stmt),
                    )
