"""KM513: custom layers and models with `__init__` arguments but no `get_config`."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from kmigrate.engine import Node, Severity, Span
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import class_methods, keras_classes

_BASE_INIT_PARAMS = frozenset({"self", "name", "trainable", "dtype", "dynamic", "autocast"})


def _extra_init_params(init: ast.FunctionDef) -> list[tuple[str, ast.expr | None]]:
    """``__init__`` parameters beyond what ``Layer`` itself takes, with their defaults."""
    args = init.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    pairs = list(zip(positional, [*defaults, *args.defaults]))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults))
    return [(a.arg, d) for a, d in pairs if a.arg not in _BASE_INIT_PARAMS]


def _plain_literal(site: Node, default: ast.expr | None) -> bool:
    """A default Keras 3 can put in an auto-generated config (str/int/float/bool/None)."""
    if default is None:
        return False
    value = site.module.literal(default)
    plain = (str, int, float, bool, type(None))
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, plain) for v in value)
    return isinstance(value, plain)


class CustomObjectWithoutConfig(Rule):
    id = "KM513"
    name = "custom-object-without-config"
    summary = "Custom layer/model with `__init__` arguments but no `get_config`."
    rationale = (
        "`.keras` files rebuild each layer as `cls(**layer.get_config())`. Keras 3 "
        "generates the config from `__init__` arguments only when every value is a plain "
        "str/int/float/bool/None (or lists/dicts of them); pass a layer, an initializer "
        "object or an array and `model.save` raises `NotImplementedError`."
    )
    fix_safety = (
        "Reported, not rewritten: what `get_config` must return depends on how `__init__` "
        "stores its arguments."
    )
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Residual(tf.keras.layers.Layer):
                def __init__(self, inner, scale=1.0, **kwargs):
                    super().__init__(**kwargs)
                    self.inner = inner
                    self.scale = scale

                def call(self, x):
                    return x + self.scale * self.inner(x)
            """
        ),
        Clean(
            """
            import keras

            class Residual(keras.layers.Layer):
                def __init__(self, units, **kwargs):
                    super().__init__(**kwargs)
                    self.units = units

                def get_config(self):
                    return {**super().get_config(), "units": self.units}
            """
        ),
    ]

    def check_module(self, module) -> Iterable[Report]:
        # a base in another module or package may define `get_config` (tensorflow_addons'
        # LossFunctionWrapper, params_flow's Layer): only bases seen here are judged
        for site, node in keras_classes(module, through_project=False):
            yield from self._check_class(site, node)

    def _check_class(self, site: Node, node: ast.ClassDef) -> Iterator[Report]:
        methods = class_methods(node)
        init = methods.get("__init__")
        if init is None or "get_config" in methods or "from_config" in methods:
            return
        extra = _extra_init_params(init)
        if not extra:
            return
        listed = ", ".join(f"`{p}`" for p, _ in extra)
        registered = any(
            (site.module.resolve(d.func if isinstance(d, ast.Call) else d) or "").endswith(
                ".register_keras_serializable"
            )
            for d in node.decorator_list
        )
        span = site.module.span_of(node)
        span = Span(span.line, span.column, span.line, span.column + len(f"class {node.name}"))
        if all(_plain_literal(site, default) for _, default in extra):
            if registered:
                return
            yield Report(
                site,
                f"`{node.name}` has no `get_config`; Keras 3 generates one from its plain "
                f"{listed} values, but register the class with "
                "`@keras.saving.register_keras_serializable()` so `.keras` files reload "
                "without `custom_objects=`",
                severity=Severity.INFO,
                span=span,
            )
            return
        yield Report(
            site,
            f"`{node.name}` takes {listed} but has no `get_config`: saving to `.keras` raises "
            "unless every value is a plain str/int/float/bool/None; add `get_config()` "
            "returning them"
            + ("" if registered else ", and `@keras.saving.register_keras_serializable()`"),
            span=span,
        )
