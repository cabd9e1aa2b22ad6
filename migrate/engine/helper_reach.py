"""What model code reaches beyond plain calls of project functions: the values of a
name registry, the methods of helper objects a class holds and of the classes mixed
into a layer, the classes whose objects are handed to Keras.

Real projects keep their activations in ``ACTIVATIONS = {"relu6": relu6}`` and return
them from ``get(name)``, keep a ``self.helper = Decomposer()`` in a layer and call
``self.helper.bound(x)``, mix a ``DropoutMixin`` (not a Layer) into a cell, and pass
``loss=ScaledError(2.0)``. Each of those runs on the model's tensors, so their bodies
are model code. The call graph's nodes are ``(module key, "function")`` and
``(module key, "Class.method")``; what is followed here only reads the entries'
shape (:func:`~kmigrate.engine.project_entry.entry_shape`: registries, classes'
bases, method names and held helpers), so local facts stay valid as long as the other
modules' shape does.
"""

from __future__ import annotations

from typing import Any, Protocol

# the project index's types, spelled here as it spells them (it imports this module)
ModuleRecord = Any
Node = tuple[str, str]
Target = tuple


class Resolution(Protocol):
    """The part of :class:`~kmigrate.engine.project_index.ProjectIndex` followed here."""

    def resolve(self, record: ModuleRecord, dotted: str) -> Target: ...

    def is_model_class(self, record: ModuleRecord, name: str) -> bool: ...


MAX_HOPS = 8  # base-class and registry chains longer than this are not followed


class HelperReach:
    """Nodes of the call graph one resolution step away, for :class:`ProjectIndex`."""

    def __init__(self, index: Resolution) -> None:
        self.index = index

    def target_nodes(self, target: Target, depth: int = 0) -> set[Node]:
        """What running ``target`` as model code may run: a function; every method
        of a class (and of its project bases); every value of a registry."""
        if depth > MAX_HOPS:
            return set()
        kind = target[0]
        if kind == "function":
            return {(target[1].key, target[2])}
        if kind == "class":
            return self.class_nodes(target[1], target[2], depth + 1)
        if kind == "registry":
            return self.registry_nodes(target[1], target[2], depth + 1)
        return set()

    def registry_nodes(self, record: ModuleRecord, name: str, depth: int = 0) -> set[Node]:
        """The functions and classes' methods a registry of ``record`` holds."""
        found: set[Node] = set()
        for ref in record.entry["registries"].get(name, ()):
            found |= self.target_nodes(self.index.resolve(record, ref), depth + 1)
        return found

    def class_nodes(self, record: ModuleRecord, name: str, depth: int = 0) -> set[Node]:
        """Every method of class ``name`` of ``record`` and of its bases in the project."""
        if depth > MAX_HOPS:
            return set()
        info = record.entry["classes"].get(name)
        if info is None:
            return set()
        found = {(record.key, f"{name}.{method}") for method in info["methods"]}
        for base in self.project_bases(record, name):
            found |= self.class_nodes(base[1], base[2], depth + 1)
        return found

    def project_bases(self, record: ModuleRecord, name: str) -> list[Target]:
        """The bases of class ``name`` that are classes of the project."""
        info = record.entry["classes"].get(name, {})
        found = []
        for base in info.get("bases", ()):
            if base:
                target = self.index.resolve(record, base)
                if target[0] == "class":
                    found.append(target)
        return found

    def mixed_in(self, record: ModuleRecord, name: str) -> set[Node]:
        """The methods of the project classes mixed into model class ``name`` that are
        not model classes themselves (``class Cell(Layer, DropoutMixin)``)."""
        found: set[Node] = set()
        for base in self.project_bases(record, name):
            if not self.index.is_model_class(base[1], base[2]):
                found |= self.class_nodes(base[1], base[2])
        return found

    def method_node(
        self, record: ModuleRecord, cname: str, method: str, depth: int = 0
    ) -> Node | None:
        """Where ``self.method`` of class ``cname`` is defined: the class or the first
        of its project bases that defines it (None: not in the project)."""
        if depth > MAX_HOPS:
            return None
        info = record.entry["classes"].get(cname)
        if info is None:
            return None
        if method in info["methods"]:
            return (record.key, f"{cname}.{method}")
        for base in self.project_bases(record, cname):
            found = self.method_node(base[1], base[2], method, depth + 1)
            if found is not None:
                return found
        return None

    def self_call(self, record: ModuleRecord, cname: str, callee: str) -> set[Node]:
        """What ``self.m(...)`` or ``self.helper.m(...)`` in a method of ``cname`` runs:
        the method, through the class's project bases, or the method of the helper
        object the class holds in that attribute (``self.helper = Decomposer()``)."""
        parts = callee.split(".")[1:]
        if len(parts) == 1:
            node = self.method_node(record, cname, parts[0])
            return {node} if node is not None else {(record.key, f"{cname}.{parts[0]}")}
        if len(parts) != 2:
            return set()
        held = self.held(record, cname, parts[0])
        if held is None:
            return set()
        target = self.index.resolve(record, held)
        if target[0] != "class":
            return set()
        node = self.method_node(target[1], target[2], parts[1])
        return {node} if node is not None else set()

    def held(self, record: ModuleRecord, cname: str, attr: str) -> str | None:
        """The callee, as written in ``record``, that made the object class ``cname``
        holds in ``self.attr`` (``self.helper = Decomposer()``); None when its own
        methods assign none."""
        return record.entry["classes"].get(cname, {}).get("held", {}).get(attr)

    def ref_nodes(self, record: ModuleRecord, ref: str) -> set[Node]:
        """What a reference handed to Keras (``loss=``, ``custom_objects=``, a
        custom-object registration) runs: a function, a registry's values, or for
        ``Name()`` (an object made there) the methods of class ``Name``."""
        if ref.endswith("()"):
            target = self.index.resolve(record, ref[:-2])
            return self.target_nodes(target) if target[0] == "class" else set()
        target = self.index.resolve(record, ref)
        if target[0] == "class":  # a class handed over is Keras's to build: a layer's job
            return set()
        return self.target_nodes(target)
