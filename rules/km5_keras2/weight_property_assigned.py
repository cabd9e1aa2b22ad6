"""KM526: ``self.kernel = ...`` in a subclass of ``Dense`` / ``Conv*`` / ``EinsumDense``,
``self.embeddings = ...`` in a subclass of ``Embedding``: read-only properties in Keras 3.
Also a layer setting another layer's (``self.layer.kernel = ...``, tensorflow/addons'
``WeightNormalization``): the same error when that layer is one of those classes."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ModuleInfo, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import keras_classes, module_site
from kmigrate.rules.common.namespaces import KERAS_NAMESPACES

# Keras 3.15 layers whose weight is a property without a setter (inspect: a `property`
# whose `fset` is None; keras/src/layers/core/dense.py, einsum_dense.py, embedding.py,
# convolutional/base_conv.py): the class -> the property and where the variable lives.
READ_ONLY_WEIGHTS: dict[str, tuple[str, str]] = {
    "Dense": ("kernel", "_kernel"),
    "EinsumDense": ("kernel", "_kernel"),
    "Conv1D": ("kernel", "_kernel"),
    "Conv2D": ("kernel", "_kernel"),
    "Conv3D": ("kernel", "_kernel"),
    "Convolution1D": ("kernel", "_kernel"),
    "Convolution2D": ("kernel", "_kernel"),
    "Convolution3D": ("kernel", "_kernel"),
    "Embedding": ("embeddings", "_embeddings"),
}
_LAYER_NAMESPACES = tuple(ns + "layers." for ns in KERAS_NAMESPACES)
# Which classes hold each read-only weight, for the message on another layer's.
_HOLDERS = {
    "kernel": "`Dense`, `Conv1D`/`Conv2D`/`Conv3D` and `EinsumDense`",
    "embeddings": "`Embedding`",
}


def _keras_base(module: ModuleInfo, base: ast.expr) -> str | None:
    """The Keras layer class ``base`` names when it is one with a read-only weight."""
    symbol = module.resolve(base) or ""
    leaf = symbol.rpartition(".")[2]
    return leaf if symbol.startswith(_LAYER_NAMESPACES) and leaf in READ_ONLY_WEIGHTS else None


def _subclasses(module: ModuleInfo) -> list[tuple[ast.ClassDef, str]]:
    """Module-level classes deriving (directly or through a class of this module) from a
    layer with a read-only weight, each with that layer's name."""
    found: dict[str, str] = {}
    result = []
    for node in module.tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            keras_base = _keras_base(module, base)
            if keras_base is None and isinstance(base, ast.Name):
                keras_base = found.get(base.id)
            if keras_base is not None:
                found[node.name] = keras_base
                result.append((node, keras_base))
                break
    return result


def _defines(node: ast.ClassDef, name: str) -> bool:
    """Whether the class body binds ``name`` itself (its own property, with a setter)."""
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            return True
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


class WeightPropertyAssigned(Rule):
    id = "KM526"
    name = "weight-property-assigned"
    summary = (
        "`self.kernel = ...` in a `Dense`/`Conv*` subclass, `self.embeddings = ...` in an "
        "`Embedding` subclass, or a layer setting another's (`self.layer.kernel = ...`): a "
        "read-only property in Keras 3."
    )
    rationale = (
        "Keras 2's `Dense`, `Conv2D` and `Embedding` keep their weights in plain attributes, "
        "so a subclass's own `build` could set `self.kernel`. Keras 3 stores them in "
        "`self._kernel` / `self._embeddings` and makes `kernel` / `embeddings` properties "
        "without a setter (they apply LoRA and quantization), so the assignment raises "
        "`AttributeError: property 'kernel' of 'MyDense' object has no setter` when the "
        "layer is built, on every backend. (`self.bias` stays a plain attribute.) A layer "
        "that sets the kernel of a layer it wraps (`self.layer.kernel = ...`, as "
        "tensorflow/addons' `WeightNormalization` does in `call`) raises the same way when "
        "the wrapped layer is one of those classes (`Conv*Transpose`, `DepthwiseConv*`, "
        "`SeparableConv*` and RNN cells keep plain attributes)."
    )
    fix_safety = (
        "Reported: store the variable as `self._kernel = self.add_weight(...)` (where "
        "Keras 3's own `build` puts it; `self.kernel` then reads it once the layer is "
        "built, not inside `build`), or under a name of your own that `call` reads. "
        "Another layer's kernel: compute that layer's output from the new kernel in this "
        "layer's `call` instead of assigning it."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            from tensorflow import keras

            class TiedDense(keras.layers.Dense):
                def build(self, input_shape):
                    self.kernel = self.add_weight(
                        name="kernel", shape=(input_shape[-1], self.units)
                    )
                    self.bias = self.add_weight(name="bias", shape=(self.units,))
                    self.built = True
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            class Normalized(tf.keras.layers.Wrapper):
                def call(self, x):
                    self.layer.kernel = tf.nn.l2_normalize(self.layer.kernel, axis=0)
                    return self.layer(x)
            """
        ),
        Clean(
            """
            import keras

            class TiedDense(keras.layers.Dense):
                def build(self, input_shape):
                    self._kernel = self.add_weight(
                        name="kernel", shape=(input_shape[-1], self.units)
                    )
                    self.bias = self.add_weight(name="bias", shape=(self.units,))

            class Recurrent(keras.layers.Wrapper):
                def call(self, x):
                    self.layer.cell.recurrent_kernel = self.layer.cell.recurrent_kernel * 0.5
                    return self.layer(x)

            class Projection(keras.layers.Layer):
                def build(self, input_shape):
                    self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], 4))
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        if "kernel" not in module.text and "embeddings" not in module.text:
            return
        yield from _other_layers_weights(module)
        for node, keras_base in _subclasses(module):
            prop, storage = READ_ONLY_WEIGHTS[keras_base]
            if _defines(node, prop):
                continue
            for inner in code_walk(node):
                if not (
                    isinstance(inner, ast.Attribute)
                    and isinstance(inner.ctx, ast.Store)
                    and inner.attr == prop
                    and isinstance(inner.value, ast.Name)
                    and inner.value.id == "self"
                ):
                    continue
                yield Report(
                    module_site(module, inner),
                    f"`self.{prop} = ...` in `{node.name}` (subclass of `{keras_base}`): Keras 3's "
                    f"`{keras_base}.{prop}` is a property without a setter, so this raises "
                    f"AttributeError when the layer is built; write `self.{storage} = ...` "
                    f"(where Keras 3's `{keras_base}.build` keeps it: `self.{prop}` reads it "
                    "once the layer is built) or use a name of your own",
                    symbol=f"keras.layers.{keras_base}.{prop}",
                )


def _other_layers_weights(module: ModuleInfo) -> Iterable[Report]:
    """``<layer>.kernel = ...`` / ``<layer>.embeddings = ...`` in a Keras class, on a
    layer other than ``self`` (``self.layer.kernel``): read-only when that layer is one
    of Keras 3's classes with the property; its class is not known here."""
    for _, node in keras_classes(module):
        for inner in code_walk(node):
            if not (
                isinstance(inner, ast.Attribute)
                and isinstance(inner.ctx, ast.Store)
                and inner.attr in _HOLDERS
                and not (isinstance(inner.value, ast.Name) and inner.value.id == "self")
            ):
                continue
            owner = module.node_text(inner.value)
            example = "Dense" if inner.attr == "kernel" else "Embedding"
            yield Report(
                module_site(module, inner),
                f"`{owner}.{inner.attr} = ...` in `{node.name}` sets another layer's "
                f"`{inner.attr}`: in Keras 3 {_HOLDERS[inner.attr]} keep it in "
                f"`_{inner.attr}` behind a property without a setter, so when `{owner}` is "
                f"one of them this raises `AttributeError: property '{inner.attr}' of "
                f"'{example}' object has no setter` on every backend (Keras 2 kept a plain "
                f"attribute). Compute `{owner}`'s output from the new {inner.attr} in "
                f"`{node.name}.call` instead of assigning it",
                severity=Severity.WARNING,
                symbol=f"keras.layers.{example}.{inner.attr}",
            )
