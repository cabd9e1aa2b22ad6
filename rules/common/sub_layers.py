"""Which attributes of a Keras class hold sub-layers (torch modules on the torch backend,
tracked weights on every backend), read from the class's own code: what KM516 and KM528
need to know about a layer's sub-layers."""

from __future__ import annotations

import ast

from kmigrate.engine import ModuleInfo, code_walk
from kmigrate.rules.common.keras_api import keras3_api
from kmigrate.rules.common.keras_star_imports import star_imports
from kmigrate.rules.common.namespaces import KERAS_NAMESPACES, in_keras_namespaces
from kmigrate.rules.context_spec import CONTEXT_SPEC

LAYER_NAMESPACES = tuple(ns + "layers." for ns in KERAS_NAMESPACES)
WRAPPER_BASES = in_keras_namespaces("layers.Wrapper")
# What only a layer answers: ``self.x.build(...)``, ``self.x.trainable_weights``...
_LAYER_MEMBERS = frozenset(
    {
        "build",
        "built",
        "compute_output_shape",
        "trainable_weights",
        "non_trainable_weights",
        "get_weights",
        "set_weights",
        "input_spec",
        "kernel",
    }
)


def self_targets(stmt: ast.stmt) -> list[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return [
        t.attr
        for t in targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    ]


def layer_class(module: ModuleInfo, call: ast.AST, local_layers: set[str]) -> str | None:
    """The class name when ``call`` builds a layer (a torch module on the torch backend):
    a Keras layer class, a layer class of this module, or a class named like one."""
    if not isinstance(call, ast.Call):
        return None
    symbol = module.resolve(call.func) or ""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if symbol.startswith(LAYER_NAMESPACES):
        return name if symbol.rpartition(".")[2][:1].isupper() else None
    if name in local_layers or (
        not symbol.startswith(("keras.", "tf.", "tf_keras."))
        and name.endswith(CONTEXT_SPEC.model_name_suffixes)
    ):
        return name
    if not symbol and isinstance(func, ast.Name) and _star_imported_layer(module, name):
        return name
    return None


def _star_imported_layer(module: ModuleInfo, name: str) -> bool:
    """Whether a bare ``Dense`` that no import of the module names is a layer class of
    Keras 3's ``keras.layers``, star-imported (``from keras.layers import *`` or
    ``tensorflow.keras.layers``)."""
    if not name[:1].isupper() or f"keras.layers.{name}" not in keras3_api():
        return False
    return any(star.keras_path == "layers" for star in star_imports(module))


def used_as_layers(node: ast.ClassDef) -> set[str]:
    """Attributes of ``self`` the class treats as a layer: ``self.x.build(...)``,
    ``self.x.trainable_weights``..."""
    used = set()
    for inner in code_walk(node):
        if (
            isinstance(inner, ast.Attribute)
            and inner.attr in _LAYER_MEMBERS
            and isinstance(inner.value, ast.Attribute)
            and isinstance(inner.value.value, ast.Name)
            and inner.value.value.id == "self"
        ):
            used.add(inner.value.attr)
    return used


def is_wrapper(module: ModuleInfo, node: ast.ClassDef) -> bool:
    return any((module.resolve(b) or "") in WRAPPER_BASES for b in node.bases)


def receives_layer(
    module: ModuleInfo, node: ast.ClassDef, init: ast.FunctionDef, stmt: ast.stmt
) -> bool:
    """``self.x = x`` (or ``x[0]``) where the constructor argument ``x`` is a layer: a wrapper's
    ``layer``, a parameter named like one, or an attribute the class uses as a layer."""
    value = getattr(stmt, "value", None)
    while isinstance(value, ast.Subscript):  # one layer taken from a list argument
        value = value.value
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)}
    if not (isinstance(value, ast.Name) and value.id in params):
        return False
    targets = self_targets(stmt)
    if value.id.lower().endswith("layer") or set(targets) & used_as_layers(node):
        return True
    return is_wrapper(module, node) and "layer" in targets


def sub_layer_attributes(
    module: ModuleInfo, node: ast.ClassDef, local_layers: set[str]
) -> set[str]:
    """The attributes of ``self`` the class assigns a layer to anywhere (a wrapper's
    ``layer`` always: ``Wrapper.__init__`` sets it)."""
    init = next(
        (s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    found = {"layer"} if is_wrapper(module, node) else set()
    for stmt in code_walk(node):
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue
        if layer_class(module, stmt.value, local_layers) or (
            init is not None and receives_layer(module, node, init, stmt)
        ):
            found.update(self_targets(stmt))
    return found
