"""Where a Keras *module object* (``tfkeras.backend``, ``tf.keras.layers``) escapes.

Renaming ``import tensorflow.keras as tfkeras`` to ``import keras as tfkeras`` is exact
only if everything later done with the module exists in Keras 3. Uses written through
the import itself (``tfkeras.backend.sigmoid``) can be checked against the Keras 3 API.
Once the module object is passed on (``build(backend=tfkeras.backend)``, keras_applications
style), stored, or returned, the attributes taken from it are read through another name.
This module follows the cases it can read in the same file (an assignment to a name, a
parameter default, a keyword argument of a function defined here) and says which uses it
cannot follow, so the import rules report instead of silently renaming into broken code.
Asked for the Keras the import came from, it also says which uses exist in Keras 3 but
would compute something else there (``rules/common/call_differences.py``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kmigrate.engine import ModuleInfo, dotted_parts
from kmigrate.rules.common.call_differences import call_difference
from kmigrate.rules.common.keras_api import is_module, keras3_reference

_MAX_DEPTH = 3  # name -> name -> name: beyond that, report rather than follow


@dataclass
class EscapeCheck:
    """What renaming a Keras module import would break: uses with no Keras 3 name
    (``backend.sigmoid``), module objects passed where they cannot be followed, and uses
    whose Keras 3 call computes something else (``optimizers.Lion()``; by line and text,
    the Keras 3 name and why)."""

    missing: set[str] = field(default_factory=set)
    unfollowed: set[str] = field(default_factory=set)
    differs: dict[tuple[int, str], tuple[str, str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.missing or self.unfollowed or self.differs)

    def sentence(self, port_advice: str = "") -> str:
        """What breaks, then ``port_advice`` if a use has to be ported (a use that
        differs says itself what to write)."""
        parts = []
        if self.missing:
            shown = ", ".join(f"`{m}`" for m in sorted(self.missing)[:4])
            parts.append(
                f"{shown} {'does' if len(self.missing) == 1 else 'do'} not exist in Keras 3"
            )
        if self.unfollowed:
            shown = ", ".join(f"`{u}`" for u in sorted(self.unfollowed)[:3])
            parts.append(
                f"the module object escapes ({shown}), so what is called on it elsewhere "
                "cannot be checked against Keras 3"
            )
        if self.differs:
            (line, text), (target, why) = min(self.differs.items())
            more = len(self.differs) - 1
            parts.append(
                f"`{text}` (line {line}{_more_uses(more)}) "
                f"would then be Keras 3's `keras.{target}`, but {why}"
            )
        if port_advice and (self.missing or self.unfollowed):
            return "; ".join(parts) + f". {port_advice}"
        return "; ".join(parts)


def _more_uses(count: int) -> str:
    return f", and {count} more such use{'s' if count > 1 else ''}" if count else ""


def _defined_functions(module: ModuleInfo) -> dict[str, ast.AST]:
    return module.memo(
        ("module-escapes-functions",),
        lambda: {n.name: n for n in module.nodes(ast.FunctionDef, ast.AsyncFunctionDef)},
    )


def _outer_chain(module: ModuleInfo, name: ast.Name) -> tuple[ast.expr, list[str]]:
    """The longest dotted chain that starts with ``name`` and its parts."""
    node: ast.expr = name
    parent = module.parent_of(node)
    while isinstance(parent, ast.Attribute) and parent.value is node:
        node = parent
        parent = module.parent_of(node)
    return node, dotted_parts(node) or [name.id]


def _receiver(module: ModuleInfo, value: ast.expr) -> str | None:
    """The name a module object is bound to where it goes, when this file shows it."""
    parent = module.parent_of(value)
    if isinstance(parent, ast.Assign) and parent.value is value:
        targets = [t for t in parent.targets if isinstance(t, ast.Name)]
        return targets[0].id if len(targets) == len(parent.targets) == 1 else None
    if isinstance(parent, ast.arguments):
        positional = [*parent.posonlyargs, *parent.args]
        for arg, default in zip(
            positional[len(positional) - len(parent.defaults) :], parent.defaults
        ):
            if default is value:
                return arg.arg
        for arg, default in zip(parent.kwonlyargs, parent.kw_defaults):
            if default is value:
                return arg.arg
        return None
    if isinstance(parent, ast.keyword) and parent.arg is not None:
        call = module.parent_of(parent)
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in _defined_functions(module)
        ):
            return parent.arg
    return None


def _loads_by_name(module: ModuleInfo) -> dict[str, list[ast.Name]]:
    loads: dict[str, list[ast.Name]] = {}
    for node in module.nodes(ast.Name):
        if node.ctx.__class__ is ast.Load:  # type: ignore[attr-defined]
            loads.setdefault(node.id, []).append(node)  # type: ignore[attr-defined]
    return loads


def _name_loads(module: ModuleInfo, local: str) -> list[ast.Name]:
    """Where ``local`` is read, from one index of the module built on first use."""
    return module.memo(("module-escapes-loads",), lambda: _loads_by_name(module)).get(local, [])


def check_module_uses(
    module: ModuleInfo, local: str, base: str, depth: int = 0, *, legacy: str | None = None
) -> EscapeCheck:
    """What breaks if ``local`` (bound to ``keras.<base>`` in Keras 2) named the Keras 3
    object instead. ``base`` is relative to ``keras.`` (``""`` for ``keras`` itself).
    ``legacy``: the Keras ``local`` comes from (``KERAS_2``), to also report the uses
    whose call means something else in Keras 3; None where no Keras changes."""
    found = EscapeCheck()
    patched = patched_attributes(module, local)
    for name in _name_loads(module, local):
        node, parts = _outer_chain(module, name)
        if len(parts) > 1 and parts[1] in patched:
            continue  # `K.flatten = flatten`: the project defines it on the module itself
        path = ".".join(p for p in (base, *parts[1:]) if p)
        target = keras3_reference(path)
        if target is None:
            found.missing.add(".".join(parts))
            continue
        why = call_difference(module, node, target, legacy) if legacy else None
        if why:
            found.differs[node.lineno, module.node_text(node)] = (target, why)
            continue
        parent = module.parent_of(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            continue  # a class or function called: it exists, checked above
        if not is_module(path) or _inspected(parent, node):
            continue  # passed on as a class or function, or only inspected: the same
        receiver = _receiver(module, node)
        if receiver is None or depth >= _MAX_DEPTH:
            found.unfollowed.add(module.node_text(node))
            continue
        if receiver == local and not parts[1:]:
            continue  # `backend=backend`: the same name, already being checked
        inner = check_module_uses(module, receiver, path, depth + 1, legacy=legacy)
        found.missing |= inner.missing
        found.unfollowed |= inner.unfollowed
        found.differs.update(inner.differs)
    return found


def differing_uses(module: ModuleInfo, local: str, base: str, legacy: str) -> EscapeCheck:
    """Only the uses of ``local`` whose call means something else in Keras 3 than in
    ``legacy``: for an import swap that checks nothing else (KM103, KM106)."""
    return EscapeCheck(differs=check_module_uses(module, local, base, legacy=legacy).differs)


def patched_attributes(module: ModuleInfo, local: str) -> frozenset[str]:
    """Attributes the module assigns on ``local`` (``K.flatten = flatten``): they exist
    after the rename too, whatever Keras 3's module holds. One walk per module."""
    return module.memo(("module-escapes-patches",), lambda: _patches_by_name(module)).get(
        local, frozenset()
    )


def _patches_by_name(module: ModuleInfo) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for node in module.nodes(ast.Attribute):
        if (
            node.ctx.__class__ is ast.Store  # type: ignore[attr-defined]
            and node.value.__class__ is ast.Name  # type: ignore[attr-defined]
        ):
            found.setdefault(node.value.id, set()).add(node.attr)  # type: ignore[attr-defined]
    return {name: frozenset(attrs) for name, attrs in found.items()}


# Builtins that look at a module without taking anything from it: a feature check such as
# `hasattr(tf.keras.optimizers, "legacy")` or `getattr(K, "logsumexp", None)` is how code
# adapts to the Keras it runs on.
_INSPECTING_BUILTINS = frozenset(
    {"hasattr", "getattr", "isinstance", "dir", "print", "repr", "str", "id"}
)


def _inspected(parent: ast.AST | None, node: ast.expr) -> bool:
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in _INSPECTING_BUILTINS
        and node in parent.args
    )


def escaping_reference(
    module: ModuleInfo, node: ast.expr, path: str, *, legacy: str | None = None
) -> EscapeCheck:
    """For a reference that names a module (``tf.keras.backend``) used as a value: what
    renaming it would break (``legacy`` as for :func:`check_module_uses`). Empty when the
    reference is not a module or is followed into uses that all exist in Keras 3."""
    found = EscapeCheck()
    if not is_module(path) or node.__class__ is ast.Name and node.ctx.__class__ is not ast.Load:  # type: ignore[attr-defined]
        return found  # a binding (`backend, layers = unpack(kwargs)`) passes nothing on
    parent = module.parent_of(node)
    called = isinstance(parent, ast.Call) and parent.func is node
    if isinstance(parent, ast.Attribute) or called or _inspected(parent, node):
        return found
    receiver = _receiver(module, node)
    if receiver is None:
        found.unfollowed.add(module.node_text(node))
        return found
    return check_module_uses(module, receiver, path, 1, legacy=legacy)
