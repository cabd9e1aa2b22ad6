"""A built model seen as a tree of layers: paths, each layer's own weights, hooks on the
layers' ``call`` (to record outputs, or to call random layers with ``training=False``), and
which layer a traceback or a source line belongs to."""

from __future__ import annotations

import functools
import inspect
import os

import numpy as np

from kmigrate.parity.tracebacks import exception_chain, is_user_frame
from kmigrate.parity.weights import WeightGroup

_MISSING = object()


def flatten(value, prefix: str = "output") -> list[tuple[str, object]]:
    """Nested outputs (list / tuple / dict) as (name, tensor) pairs, None skipped."""
    if value is None:
        return []
    if isinstance(value, dict):
        items = []
        for key in sorted(value, key=str):
            items.extend(flatten(value[key], f"{key}"))
        return items
    if isinstance(value, list | tuple):
        if len(value) == 1:
            return flatten(value[0], prefix)
        items = []
        for i, item in enumerate(value):
            items.extend(flatten(item, f"{prefix}_{i}"))
        return items
    return [(prefix, value)]


class ModelLayers:
    """The layers of `model`; `to_numpy` turns a tensor of its framework into an array."""

    def __init__(self, model, to_numpy):
        self.model = model
        self.to_numpy = to_numpy

    def children(self, layer) -> list:
        try:
            return list(layer._flatten_layers(include_self=False, recursive=False))
        except (AttributeError, TypeError):
            return list(getattr(layer, "layers", []) or [])

    def tree(self) -> list[tuple[str, object]]:
        """Every sub-layer with its path inside the model, depth first, each layer once."""
        seen: set[int] = {id(self.model)}
        tree: list[tuple[str, object]] = []

        def walk(layer, prefix: str) -> None:
            for child in self.children(layer):
                if id(child) in seen:
                    continue
                seen.add(id(child))
                path = f"{prefix}/{child.name}" if prefix else child.name
                tree.append((path, child))
                walk(child, path)

        walk(self.model, "")
        return tree

    def weight_groups(self) -> list[tuple[WeightGroup, list]]:
        """Each layer's own variables (not its sub-layers'), in a stable order."""
        claimed: set[int] = set()
        groups = []
        for path, layer in [("", self.model), *self.tree()]:
            inner = {id(w) for child in self.children(layer) for w in child.weights}
            own = [w for w in layer.weights if id(w) not in inner and id(w) not in claimed]
            if not own:
                continue
            claimed.update(id(w) for w in own)
            group = WeightGroup(
                path=path or "<model>",
                class_name=type(layer).__name__,
                names=tuple(str(getattr(w, "path", None) or w.name) for w in own),
                shapes=tuple(tuple(int(d) for d in w.shape) for w in own),
                trainable=tuple(bool(getattr(w, "trainable", True)) for w in own),
            )
            groups.append((group, own))
        return groups

    # -- stages ----------------------------------------------------------------------------

    def layer_at(self, file: str, line: int) -> str | None:
        """'path' (Class) of the model layer whose class defines the code at file:line."""
        target = os.path.realpath(file)
        for path, layer in reversed(self.tree()):
            for function in vars(type(layer)).values():
                code = getattr(function, "__code__", None)
                if code is None or os.path.realpath(code.co_filename) != target:
                    continue
                lines = [n for _, _, n in code.co_lines() if n is not None]
                if lines and min(lines + [code.co_firstlineno]) <= line <= max(lines):
                    return f"'{path}' ({type(layer).__name__})"
        return None

    def layer_in_traceback(self, exc: BaseException) -> str | None:
        """'path' (Class) of the innermost model layer on the traceback of `exc` (or of
        the exceptions it chains), found by the ``self`` of each frame."""
        if self.model is None:
            return None
        try:
            known = {id(layer): path for path, layer in self.tree()}
        except Exception:  # noqa: BLE001 - naming is a help, never a second failure
            return None
        found = {True: None, False: None}  # innermost layer frame in user code / anywhere
        for link in exception_chain(exc):
            tb = link.__traceback__
            while tb is not None:
                owner = tb.tb_frame.f_locals.get("self")
                if id(owner) in known:
                    user = is_user_frame(tb.tb_frame.f_code.co_filename)
                    found[user] = f"'{known[id(owner)]}' ({type(owner).__name__})"
                tb = tb.tb_next
        return found[True] or found[False]

    def install_hooks(self, records: list | None, forced: set[str] = frozenset()) -> list:
        """Wrap sub-layers' `call` on the instance: keep a copy of what each returns (when
        `records` is a list) and call the layers in `forced` with ``training=False``.

        Keras 2 and 3 both invoke ``self.call`` from ``Layer.__call__``, so an instance
        attribute sees every call of every layer of any model type (functional, Sequential,
        subclassed, nested). Only concrete values are kept: a symbolic call (shape inference
        during the pass, tracing under jit) cannot be converted and is skipped.
        """
        calls: dict[int, int] = {}

        def hook(path: str, layer, original):
            force = path in forced
            position = training_position(original) if force else None

            @functools.wraps(original)
            def recorder(*args, **kwargs):
                if force:
                    args, kwargs = training_off(args, kwargs, position)
                output = original(*args, **kwargs)
                if records is None:
                    return output
                try:
                    tensors = [np.asarray(self.to_numpy(t)) for _, t in flatten(output)]
                except Exception:  # noqa: BLE001 - symbolic / non-tensor output: not recorded
                    return output
                count = calls.get(id(layer), 0) + 1
                calls[id(layer)] = count
                name = path if count == 1 else f"{path}#{count}"
                records.append((name, type(layer).__name__, tensors))
                return output

            return recorder

        return self.wrap_calls(hook, only=None if records is not None else set(forced))

    def wrap_calls(self, hook, only: set[str] | None = None) -> list:
        """Replace each sub-layer's `call` (those in `only`, or all) on the instance with
        ``hook(path, layer, original_call)``; returns what `remove_hooks` puts back.

        tf_keras's TFOpLambda (a tf.* function applied to a Keras tensor) sets its own
        `call` on the instance: it is kept to put back, never deleted."""
        restore = []
        for path, layer in self.tree():
            if only is not None and path not in only:
                continue
            own = getattr(layer, "__dict__", {}).get("call", _MISSING)
            try:
                layer.call = hook(path, layer, layer.call)
            except (AttributeError, TypeError):
                continue
            restore.append((layer, own))
        return restore

    def remove_hooks(self, restore: list) -> None:
        """Put back exactly what each layer had: its own instance `call` where it had one
        (deleting that broke the Keras 2 reference's TFOpLambda layers), else nothing, so
        that the class's method is found again."""
        for layer, own in restore:
            if own is _MISSING:
                try:
                    del layer.call
                except AttributeError:
                    pass
            else:
                layer.call = own


def training_position(call) -> int | None:
    """Where ``training`` sits among `call`'s positional parameters (bound method)."""
    try:
        names = [
            p.name
            for p in inspect.signature(call).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return None
    return names.index("training") if "training" in names else None


def training_off(args: tuple, kwargs: dict, position: int | None) -> tuple[tuple, dict]:
    if "training" in kwargs:
        return args, {**kwargs, "training": False}
    if position is not None and len(args) > position:
        return (*args[:position], False, *args[position + 1 :]), kwargs
    return args, kwargs
