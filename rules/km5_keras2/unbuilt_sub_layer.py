"""KM532: a layer with its own ``compute_output_shape`` creates a sub-layer in ``build``
and never builds it there.

Keras 2 traced ``call`` while a functional model was put together, so a sub-layer made
in ``build`` was called, and built, at once. Keras 3 asks ``compute_output_shape`` for
the output instead when a layer defines it, and runs ``call`` only on real data: the
sub-layer stays unbuilt, with no weights, until the first batch goes through. The fix
gives the layer Keras 2's way back (``compute_output_spec`` tracing ``call``,
rules/common/traced_output_spec.py), which builds what ``call`` uses, with the shapes it
gives, including sub-layers applied to intermediate values, whose shapes ``build``
cannot know from its ``input_shape``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ClassEdit, EditPlan, ModuleInfo, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import class_methods, keras_classes
from kmigrate.rules.common.layer_weights import NO_WEIGHTS_FROM_BUILD
from kmigrate.rules.common.namespaces import in_keras_namespaces
from kmigrate.rules.common.sub_layers import layer_class, self_targets
from kmigrate.rules.common.traced_output_spec import (
    CALL_PATHS,
    SPEC,
    class_names,
    trace_method,
    why_tracing_is_not_exact,
)

TRACE_COMMENT = "Keras 2 traced `call` while the model was made: it builds the sub-layers"
_KERAS_LAYER = in_keras_namespaces("layers.Layer", "Layer", "engine.base_layer.Layer")


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


def _unbuilt(
    module: ModuleInfo, build: ast.FunctionDef, local_layers: set[str]
) -> list[tuple[ast.stmt, str, str]]:
    """``(statement, attribute, layer class)`` for each sub-layer with weights that
    ``build`` creates and neither builds nor calls, in the order ``build`` creates them."""
    found = []
    for stmt in code_walk(build):
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        built = layer_class(module, stmt.value, local_layers)
        if built is None or built in NO_WEIGHTS_FROM_BUILD or built == "InputSpec":
            continue
        found.extend(
            (stmt, name, built) for name in self_targets(stmt) if not _built_in(build, name)
        )
    return sorted(found, key=lambda one: (one[0].lineno, one[0].col_offset))


def _traces_call(module: ModuleInfo, method: ast.FunctionDef | None) -> bool:
    """Whether the class's ``compute_output_spec`` is the fix's: it returns
    ``keras.Operation.compute_output_spec(self, ...)``, Keras 3's tracing of ``call``."""
    return method is not None and any(
        isinstance(node, ast.Return)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == SPEC
        and module.resolve(node.value.func.value) == "keras.Operation"
        for node in code_walk(method)
    )


def _module_classes(module: ModuleInfo) -> dict[str, list[ast.ClassDef]]:
    """The classes defined outside functions and classes, also under ``if`` / ``try``
    (bert4keras defines its ``Layer`` base once for each Keras version), by name."""
    found: dict[str, list[ast.ClassDef]] = {}
    pending: list[ast.AST] = [module.tree]
    while pending:
        for child in ast.iter_child_nodes(pending.pop()):
            if isinstance(child, ast.ClassDef):
                found.setdefault(child.name, []).append(child)
            elif isinstance(child, ast.stmt) and not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef)
            ):
                pending.append(child)
            elif isinstance(child, ast.excepthandler):
                pending.append(child)
    return found


def _base_problem(
    module: ModuleInfo,
    node: ast.ClassDef,
    classes: dict[str, list[ast.ClassDef]],
    seen: frozenset[str],
) -> str:
    """Why a base of ``node`` may answer ``compute_output_spec`` itself, or change how
    Keras 3 reaches it ("" when every base is ``Layer`` or a class of this module that
    leaves both alone, down to ``Layer``)."""
    for base in node.bases:
        name = base.id if isinstance(base, ast.Name) else ""
        if name in classes and name not in seen:
            for inner in classes[name]:
                own = sorted(class_names(inner) & {SPEC, *CALL_PATHS})
                if own:
                    return f"its base `{name}` defines `{own[0]}`"
                found = _base_problem(module, inner, classes, seen | {name})
                if found:
                    return found
            continue
        if (module.resolve(base) or "") not in _KERAS_LAYER:
            return (
                f"its base `{ast.unparse(base)}` is not `keras.layers.Layer` nor a class of "
                "this module, and may have its own `compute_output_spec`"
            )
    return ""


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
        "The fix adds `compute_output_spec` returning "
        "`keras.Operation.compute_output_spec(self, *args, **kwargs)` (public Keras 3 API: "
        "its tracing of `call`, what `keras.layers.Layer` does for a layer without "
        "`compute_output_shape`): the model is made by running `call` on symbolic tensors, "
        "as Keras 2 did, which builds exactly the sub-layers `call` uses, with the shapes "
        "it gives them, and every output gets the shape and dtype `call` gives it, as in "
        "Keras 2 (`compute_output_shape` stays, for code that calls it). The weights are "
        "Keras 2's, in Keras 2's order (the order the sub-layers are assigned in), so "
        "Keras 2 weights load: shown on tensorflow, jax and torch for a layer whose "
        "`Dense` and `LayerNormalization` sub-layers are applied to its inputs, to values "
        "unpacked from them and to intermediate values. A `call` that Keras 3 cannot trace "
        "on a backend then stops the model when it is made there rather than at its first "
        "batch. Reported without a "
        "fix when the class has several bases, a metaclass or a class decorator, a base "
        "other than `keras.layers.Layer` or a class of the module that leaves "
        "`compute_output_spec` and `__call__` alone, defines `__call__`, `symbolic_call` or "
        "`__getattr__`, mentions `compute_output_spec` itself, passes `dynamic=` (Keras 2 "
        "then did not trace), or returns an attribute of `self` from `call` (JAX cannot "
        "trace a variable among the outputs): then build each sub-layer in `build` with the "
        "shape it receives (`self.dense.build(input_shape)`)."
    )
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import keras

            class Attend(keras.layers.Layer):
                def build(self, input_shape):
                    self.query = keras.layers.Dense(4)
                    self.out = keras.layers.Dense(2)

                def call(self, inputs):
                    query, values = inputs
                    weights = keras.ops.softmax(self.query(query), axis=1)
                    return self.out(weights * values)

                def compute_output_shape(self, input_shape):
                    return input_shape[0][:-1] + (2,)
            """,
            """
            import keras

            class Attend(keras.layers.Layer):
                def build(self, input_shape):
                    self.query = keras.layers.Dense(4)
                    self.out = keras.layers.Dense(2)

                def call(self, inputs):
                    query, values = inputs
                    weights = keras.ops.softmax(self.query(query), axis=1)
                    return self.out(weights * values)

                def compute_output_shape(self, input_shape):
                    return input_shape[0][:-1] + (2,)

                def compute_output_spec(self, *args, **kwargs):
                    # Keras 2 traced `call` while the model was made: it builds the sub-layers
                    return keras.Operation.compute_output_spec(self, *args, **kwargs)
            """,
        ),
        Flagged(  # not rewritten: the other base may define `__call__` or the spec
            """
            import keras
            from tools import LoggingMixin

            class Projected(LoggingMixin, keras.layers.Layer):
                def build(self, input_shape):
                    self.dense = keras.layers.Dense(4)

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
        module_classes = _module_classes(module)
        for site, node in classes:
            methods = class_methods(node)
            build = methods.get("build")
            if build is None or "compute_output_shape" not in methods:
                continue
            if _traces_call(module, methods.get(SPEC)):
                continue  # fixed: Keras 3 runs `call` while the model is made
            unbuilt = _unbuilt(module, build, local_layers)
            if not unbuilt:
                continue
            names = ", ".join(f"`self.{name}` ({built})" for _, name, built in unbuilt)
            them = "it" if len(unbuilt) == 1 else "them"
            message = (
                f"`{node.name}.build` creates {names} and does not build {them}, and "
                f"`{node.name}` defines `compute_output_shape`: Keras 3 takes the output "
                "shape from it instead of running `call` while the model is made, so "
                f"{'it has' if them == 'it' else 'they have'} no weights until the first "
                "batch (`model.weights` and `summary()` leave them out, Keras 2 weights "
                "loaded before then do not fit)"
            )
            span = module.span_of(unbuilt[0][0])
            why_not = (
                f"the class defines `{SPEC}`, which Keras 3 asks instead; it must build them"
                if SPEC in methods
                else ""
            )
            why_not = (
                why_not
                or why_tracing_is_not_exact(module, node)
                or _base_problem(module, node, module_classes, frozenset({node.name}))
            )
            if why_not:
                yield Report(
                    site,
                    f"{message}; build {them} there (`self.{unbuilt[0][1]}.build(<its input "
                    f"shape>)`), or trace `call` in `{SPEC}` (not rewritten: {why_not})",
                    span=span,
                )
                continue
            plan = EditPlan(
                (ClassEdit(module.span_of(node), methods=(trace_method(TRACE_COMMENT),)),),
                "trace call in compute_output_spec",
            )
            yield Report(
                site,
                f"{message}; add `def {SPEC}(self, *args, **kwargs): return "
                f"keras.Operation.{SPEC}(self, *args, **kwargs)` to trace `call` as Keras 2 did",
                fix=plan,
                span=span,
            )
