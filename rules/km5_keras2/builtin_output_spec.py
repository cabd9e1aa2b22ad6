"""KM523: a subclass of a built-in layer that computes its own output spec in Keras 3
(``keras.layers.Embedding``, the merging and attention layers, ``Reshape``...), whose
``call`` or ``compute_output_shape`` override Keras 3 then never consults when it builds a
functional model.

Keras 2's functional API ran a layer's ``call`` on symbolic tensors to learn what it
returns. Keras 3 asks ``layer.compute_output_spec(...)``: ``keras.layers.Layer``'s version
uses the layer's own ``compute_output_shape``, else traces ``call``, but the classes of
``OWN_OUTPUT_SPEC`` replace it with one that describes their own ``call``
(``Embedding``'s reads ``inputs.shape``): a subclass taking ``[ids, memory]`` raises
``AttributeError: 'list' object has no attribute 'shape'``, and one returning another
shape gets its parent's shape, silently.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ClassEdit, EditPlan, ModuleInfo, Severity, Span
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import module_site
from kmigrate.rules.common.namespaces import KERAS_NAMESPACES
from kmigrate.rules.common.traced_output_spec import (
    SPEC,
    class_names,
    trace_method,
    why_tracing_is_not_exact,
)

# Every public class of Keras 3.15's ``keras.layers`` whose ``compute_output_spec`` is not
# ``keras.layers.Layer.compute_output_spec``, with the Keras 3 class that defines the one
# it has, and whether tracing its ``call`` on every backend stands in for it (the
# preprocessing layers run TensorFlow ops or need their own spec off TensorFlow).
# tests/rules/test_builtin_output_spec_backends.py compares this table with the installed Keras.
OWN_OUTPUT_SPEC: dict[str, tuple[str, bool]] = {
    "Add": ("Merge", True),
    "AdditiveAttention": ("Attention", True),
    "Attention": ("Attention", True),
    "Average": ("Merge", True),
    "CategoryEncoding": ("CategoryEncoding", False),
    "Concatenate": ("Merge", True),
    "Discretization": ("Discretization", False),
    "Dot": ("Merge", True),
    "Embedding": ("Embedding", True),
    "Equalization": ("Equalization", False),
    "Flatten": ("Flatten", True),
    "GroupQueryAttention": ("GroupedQueryAttention", True),
    "Hashing": ("Hashing", False),
    "Identity": ("Identity", True),
    "IntegerLookup": ("IndexLookup", False),
    "Maximum": ("Merge", True),
    "Minimum": ("Merge", True),
    "MultiHeadAttention": ("MultiHeadAttention", True),
    "Multiply": ("Merge", True),
    "Permute": ("Permute", True),
    "RandomGrayscale": ("RandomGrayscale", False),
    "Reshape": ("Reshape", True),
    "ReversibleEmbedding": ("ReversibleEmbedding", True),
    "StringLookup": ("IndexLookup", False),
    "Subtract": ("Merge", True),
    "TextVectorization": ("TextVectorization", False),
}

_LAYER_NAMESPACES = tuple(ns + "layers." for ns in KERAS_NAMESPACES)
_OVERRIDES = ("call", "compute_output_shape")
TRACE_COMMENT = "Keras 2 traced `call`; {parent}'s own spec describes {parent}'s call"


def _builtin_parent(
    module: ModuleInfo, node: ast.ClassDef, local: dict[str, ast.ClassDef], seen: set[str]
) -> str | None:
    """The ``OWN_OUTPUT_SPEC`` layer ``node`` inherits its ``compute_output_spec`` from,
    through the module's own classes; None when a class on the way defines one, or
    overrides ``call`` or ``compute_output_shape`` (its own finding, and its fix, cover
    its subclasses)."""
    for base in node.bases:
        symbol = module.resolve(base) or ""
        tail = symbol.rpartition(".")[2]
        if symbol.startswith(_LAYER_NAMESPACES) and tail in OWN_OUTPUT_SPEC:
            return tail
        if isinstance(base, ast.Name) and base.id in local and base.id not in seen:
            inner = local[base.id]
            if class_names(inner) & {SPEC, *_OVERRIDES}:
                return None
            found = _builtin_parent(module, inner, local, seen | {base.id})
            if found:
                return found
    return None


def _not_exact(module: ModuleInfo, node: ast.ClassDef, parent: str) -> str:
    """Why adding the tracing ``compute_output_spec`` would not be exact ("" if it is)."""
    if not OWN_OUTPUT_SPEC[parent][1]:
        return (
            f"`{parent}` is a preprocessing layer, whose `call` Keras 3 does not trace on "
            "every backend: write `compute_output_spec` returning a `keras.KerasTensor`"
        )
    return why_tracing_is_not_exact(module, node)


class BuiltinLayerOutputSpec(Rule):
    id = "KM523"
    name = "builtin-layer-output-spec"
    summary = (
        "A subclass of a layer with its own `compute_output_spec` in Keras 3 (`Embedding`, "
        "`Concatenate`, `Reshape`, attention...) overrides `call` or `compute_output_shape`."
    )
    rationale = (
        "Keras 2 built a functional model by running each layer's `call` on symbolic "
        "tensors. Keras 3 asks `layer.compute_output_spec(...)` instead, and some built-in "
        "layers define their own, written for their own `call`: `Embedding`'s calls "
        "`compute_output_shape(inputs.shape)`. A subclass whose `call` takes a list "
        "(`[segment_ids, memory]`) raises `'list' object has no attribute 'shape'` when the "
        "model is built, on every backend; one whose `call` returns another shape or several "
        "tensors gets the parent's shape, silently, and the layers after it are built for it."
    )
    fix_safety = (
        "The fix adds `compute_output_spec` returning "
        "`keras.Operation.compute_output_spec(self, *args, **kwargs)`: Keras 3's tracing of "
        "`call`, which is what Keras 2's functional API did, so every output gets the shape "
        "and dtype `call` gives it (`keras.layers.Layer.compute_output_spec` would not do: it "
        "answers from the parent's `compute_output_shape` when the subclass has none, and "
        "gives every output the layer's compute dtype). Only symbolic specs change, no "
        "numbers. Reported without a fix when the parent is a preprocessing layer (Keras 3 "
        "does not trace those on every backend), when the class has several bases, a "
        "metaclass, a class decorator other than `register_keras_serializable`, defines "
        "`__call__`, `symbolic_call` or `__getattr__`, mentions `compute_output_spec` "
        "itself, passes `dynamic=` (Keras 2 then used `compute_output_shape`), or returns "
        "an attribute of `self` from `call` (`[output, self.embeddings]`: a variable among "
        "the outputs, which JAX cannot trace, so the model would not build on jax). Only "
        "module-level classes are checked, and bases in other modules of the project are "
        "not followed (a fixed base covers its subclasses)."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import keras


            class PairEmbedding(keras.layers.Embedding):
                def call(self, inputs):
                    ids, memory = inputs
                    return [super().call(ids), memory * 2.0]

                def compute_output_shape(self, input_shape):
                    ids_shape, memory_shape = input_shape
                    return [(*ids_shape, self.output_dim), memory_shape]
            """,
            """
            import keras


            class PairEmbedding(keras.layers.Embedding):
                def call(self, inputs):
                    ids, memory = inputs
                    return [super().call(ids), memory * 2.0]

                def compute_output_shape(self, input_shape):
                    ids_shape, memory_shape = input_shape
                    return [(*ids_shape, self.output_dim), memory_shape]

                def compute_output_spec(self, *args, **kwargs):
                    # Keras 2 traced `call`; Embedding's own spec describes Embedding's call
                    return keras.Operation.compute_output_spec(self, *args, **kwargs)
            """,
        ),
        Flagged(
            """
            from keras.layers import StringLookup


            class Lowered(StringLookup):
                def call(self, inputs):
                    return super().call(inputs) - 1
            """
        ),
        Flagged(  # not rewritten: JAX cannot trace a variable returned as an output
            """
            import keras


            class TiedEmbedding(keras.layers.Embedding):
                def call(self, inputs):
                    return [super().call(inputs), self.embeddings]
            """
        ),
        Clean(
            """
            import keras


            class Scaled(keras.layers.Embedding):
                def __init__(self, scale, **kwargs):
                    super().__init__(**kwargs)
                    self.scale = scale


            class Summed(keras.layers.Dense):
                def call(self, inputs):
                    return keras.ops.sum(super().call(inputs), axis=-1)
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        classes = [c for c in module.tree.body if isinstance(c, ast.ClassDef)]
        local = {c.name: c for c in classes}
        for node in classes:
            names = class_names(node)
            overrides = [m for m in _OVERRIDES if m in names]
            if not overrides or SPEC in names:
                continue
            parent = _builtin_parent(module, node, local, {node.name})
            if parent is not None:
                yield self._report(module, node, parent, overrides)

    def _report(
        self, module: ModuleInfo, node: ast.ClassDef, parent: str, overrides: list[str]
    ) -> Report:
        span = module.span_of(node)
        span = Span(span.line, span.column, span.line, span.column + len(f"class {node.name}"))
        what = " and ".join(f"`{m}`" for m in overrides)
        message = (
            f"`{node.name}` overrides {what} of `keras.layers.{parent}`, which computes its "
            f"own output spec in Keras 3 (`{parent}.compute_output_spec`, for {parent}'s "
            "own call): a functional model built on it gets that spec, or fails, where "
            "Keras 2 traced this `call`"
        )
        # only `compute_output_shape`: Keras 3 still calls it, if with the parent's arguments
        severity = None if "call" in overrides else Severity.WARNING
        why_not = _not_exact(module, node, parent)
        if why_not:
            return Report(
                module_site(module, node),
                f"{message}; define `compute_output_spec` for it (not rewritten: {why_not})",
                span=span,
                severity=severity,
            )
        method = trace_method(TRACE_COMMENT.format(parent=parent))
        plan = EditPlan(
            (ClassEdit(module.span_of(node), methods=(method,)),),
            "trace call in compute_output_spec",
        )
        return Report(
            module_site(module, node),
            f"{message}; add `def compute_output_spec(self, *args, **kwargs): return "
            "keras.Operation.compute_output_spec(self, *args, **kwargs)` to trace it again",
            fix=plan,
            span=span,
            severity=severity,
        )
