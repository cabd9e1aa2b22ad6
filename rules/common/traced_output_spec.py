"""Giving a Keras 3 layer back Keras 2's way of learning what it returns: tracing ``call``.

Keras 2's functional API ran every layer's ``call`` on symbolic tensors while a model was
put together. Keras 3 asks ``layer.compute_output_spec(...)``, which answers from the
layer's (or its parent's) ``compute_output_shape`` when there is one, without running
``call``. A ``compute_output_spec`` returning ``keras.Operation.compute_output_spec(self,
...)`` (Keras 3's own tracing of ``call``, what ``keras.layers.Layer`` does for a layer
with no ``compute_output_shape``) restores the Keras 2 behaviour: KM523 adds it to
subclasses of layers with their own spec, KM532 to layers whose sub-layers are built only
by running ``call``. Here is what decides whether that addition is exact.
"""

from __future__ import annotations

import ast

from kmigrate.engine import ModuleInfo, code_walk

SPEC = "compute_output_spec"
# What a class may define that changes how Keras 3 reaches ``compute_output_spec``.
CALL_PATHS = frozenset({"__call__", "symbolic_call", "__getattr__", "__getattribute__"})


def trace_method(comment: str) -> str:
    """The method to add (a ``ClassEdit`` method text): ``comment`` says why."""
    return (
        "def compute_output_spec(self, *args, **kwargs):\n"
        f"    # {comment}\n"
        "    return {name:keras.Operation.compute_output_spec}(self, *args, **kwargs)\n"
    )


def class_names(node: ast.ClassDef) -> set[str]:
    """The names the class body binds (methods, nested classes, assignments)."""
    names = set()
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def returned_self_attribute(node: ast.ClassDef) -> str:
    """The attribute of ``self`` that ``call`` returns as it is, alone or in a returned
    list or tuple (``[output, self.embeddings]``), or "". Keras 3's tracing on JAX
    (``jax.eval_shape``) refuses a variable among the outputs; a tensor is fine."""
    for method in node.body:
        if not (isinstance(method, ast.FunctionDef) and method.name == "call"):
            continue
        for inner in code_walk(method):
            if not isinstance(inner, ast.Return) or inner.value is None:
                continue
            values = (
                inner.value.elts
                if isinstance(inner.value, (ast.List, ast.Tuple))
                else [inner.value]
            )
            for value in values:
                if (
                    isinstance(value, ast.Attribute)
                    and isinstance(value.value, ast.Name)
                    and value.value.id == "self"
                ):
                    return value.attr
    return ""


def why_tracing_is_not_exact(module: ModuleInfo, node: ast.ClassDef) -> str:
    """Why adding the tracing ``compute_output_spec`` to ``node`` would not be exact, from
    the class's own code ("" if nothing speaks against it)."""
    if len(node.bases) != 1 or node.keywords:
        return "the class has more bases or a metaclass, which may define the spec"
    decorators = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
    if any(
        not (module.resolve(d) or "").endswith(".register_keras_serializable") for d in decorators
    ):
        return "a class decorator may change the class"
    returned = returned_self_attribute(node)
    if returned:
        return (
            f"`call` returns `self.{returned}`, which may be a weight: JAX cannot trace a "
            "variable returned as an output, so the model would not build on jax; return "
            f"`keras.ops.convert_to_tensor(self.{returned})` and add the method"
        )
    paths = sorted(class_names(node) & CALL_PATHS)
    if paths:
        return f"it defines `{paths[0]}`, so Keras 3 may not reach `compute_output_spec` as usual"
    for inner in code_walk(node):
        if (isinstance(inner, ast.Attribute) and inner.attr == SPEC) or (
            isinstance(inner, ast.Constant) and inner.value == SPEC
        ):
            return f"the class uses `{SPEC}` itself (line {inner.lineno})"
        if isinstance(inner, ast.keyword) and inner.arg == "dynamic":
            return "`dynamic=` makes Keras 2 use `compute_output_shape` instead of tracing"
    return ""
