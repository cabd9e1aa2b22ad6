"""KM530: a layer's ``__init__`` hides its signature behind a ``(*args, **kwargs)`` wrapper.

Keras 3 builds every layer's default config from its constructor's arguments: the
``Operation.__new__`` of ``keras/src/ops/operation.py`` reads
``inspect.getfullargspec(cls.__init__).args[0]``. ``getfullargspec`` does not follow
``functools.wraps``' ``__wrapped__``, so a decorator whose wrapper takes only
``*args, **kwargs`` (typeguard 2's ``@typechecked``, a project's own checking or logging
decorator) gives an empty ``args`` and constructing the layer raises
``IndexError: list index out of range`` on every backend. Keras 2 never read the
signature that way (tensorflow/addons' layers carry ``@typechecked``).

Where every decorator on ``__init__`` is known to keep the function it wraps in
``__wrapped__`` (typeguard's ``@typechecked``; a module's own decorator whose wrapper is
``@functools.wraps(function)``), apply writes ``__init__.__signature__ =
inspect.signature(__init__)`` in the class body after ``__init__``: ``inspect.signature``
follows ``__wrapped__`` to the constructor's own parameters, and ``getfullargspec`` reads a
``__signature__`` set on the wrapper, so Keras 3 sees the constructor's arguments while the
wrapper (the argument checks) still runs on every construction. Decorators that do not set
``__wrapped__`` are only reported: a signature copied from them would still be
``(*args, **kwargs)``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from kmigrate.engine import ClassEdit, EditPlan, ModuleInfo, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import class_methods, keras_classes
from kmigrate.rules.context_spec import CONTEXT_SPEC

# Decorators known to wrap in ``(*args, **kwargs)`` and to keep the function in
# ``__wrapped__`` (typeguard 2 returns ``functools.wraps(func)(wrapper)``; typeguard 3 and
# later return a function with the constructor's own code): qualified name -> what else
# to write.
_KNOWN_WRAPPERS = {
    "typeguard.typechecked": (
        "or use typeguard 3 or later, whose `@typechecked` rewrites the function itself "
        "and keeps its signature (the checks stay)"
    ),
}
# The class-body statement that shows Keras 3 the constructor's own signature.
_SIGNATURE_FIX = "__init__.__signature__ = {name:inspect.signature}(__init__)"
_SIGNATURE_TEXT = "__init__.__signature__ = inspect.signature(__init__)"


@dataclass(frozen=True)
class _Hider:
    """A decorator that hides the signature: what else to write besides removing it,
    and whether its wrapper keeps the function in ``__wrapped__``."""

    advice: str
    keeps_wrapped: bool


# Keras classes that are operations (their signature is read): layers and models.
# Losses, metrics, optimizers and schedules are not.
_OPERATION_PARTS = (".layers.", ".engine.", ".models.")
_OPERATION_NAMES = (".Model", ".Sequential")


def _hiding_wrapper(module: ModuleInfo, decorator: ast.expr) -> _Hider | None:
    """How ``decorator`` hides the signature of the function it decorates (None when it
    does not, or cannot be told): a known wrapper, or a function of this module that
    returns a nested ``def f(*args, **kwargs)``."""
    symbol = module.resolver.resolve(decorator) or ""
    if symbol in _KNOWN_WRAPPERS:
        return _Hider(_KNOWN_WRAPPERS[symbol], keeps_wrapped=True)
    if not isinstance(decorator, ast.Name) or decorator.id in module.module_scope.imports:
        return None
    defined = [
        s for s in module.tree.body if isinstance(s, ast.FunctionDef) and s.name == decorator.id
    ]
    if len(defined) != 1:
        return None
    nested = {s.name: s for s in defined[0].body if isinstance(s, ast.FunctionDef)}
    for statement in defined[0].body:
        value = statement.value if isinstance(statement, ast.Return) else None
        inner = nested.get(value.id) if isinstance(value, ast.Name) else None
        if inner is not None and not (
            inner.args.posonlyargs or inner.args.args or _sets_signature(defined[0], inner.name)
        ):
            advice = (
                f"or give `{inner.name}` the constructor's signature "
                f"(`{inner.name}.__signature__ = inspect.signature(function)`)"
            )
            return _Hider(advice, keeps_wrapped=_wraps(module, inner))
    return None


def _wraps(module: ModuleInfo, inner: ast.FunctionDef) -> bool:
    """Whether ``inner`` is decorated ``@functools.wraps(...)``, which keeps the wrapped
    function in ``__wrapped__`` for ``inspect.signature`` to follow."""
    return any(
        isinstance(d, ast.Call) and module.resolver.resolve(d.func) == "functools.wraps"
        for d in inner.decorator_list
    )


def _sets_signature(decorator: ast.FunctionDef, inner: str) -> bool:
    """Whether the decorator gives its wrapper a signature (``inner.__signature__ = ...``),
    which ``getfullargspec`` reads."""
    return any(
        isinstance(target, ast.Attribute)
        and target.attr == "__signature__"
        and isinstance(target.value, ast.Name)
        and target.value.id == inner
        for statement in decorator.body
        if isinstance(statement, ast.Assign)
        for target in statement.targets
    )


def _signature_given(node: ast.ClassDef) -> bool:
    """Whether the class body sets ``__init__.__signature__`` (what the fix writes)."""
    return any(
        isinstance(target, ast.Attribute)
        and target.attr == "__signature__"
        and isinstance(target.value, ast.Name)
        and target.value.id == "__init__"
        for statement in node.body
        if isinstance(statement, ast.Assign)
        for target in statement.targets
    )


def _operation(module: ModuleInfo, node: ast.ClassDef, local: dict[str, ast.ClassDef]) -> bool:
    """Whether ``node`` is a Keras layer or model: a base in a Keras layers/models
    namespace, or a class of this module that is one. A base from another module of
    the project is not followed (losses and metrics derive from project bases too)."""
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in local and base.id != node.name:
            if _operation(module, local.pop(base.id), local):
                return True
            continue
        symbol = module.resolve(base) or ""
        if CONTEXT_SPEC.is_keras_symbol(symbol) and (
            any(part in symbol for part in _OPERATION_PARTS) or symbol.endswith(_OPERATION_NAMES)
        ):
            return True
    return False


class WrappedLayerInit(Rule):
    id = "KM530"
    name = "wrapped-layer-init"
    summary = (
        "A decorator wraps a layer's `__init__` in `(*args, **kwargs)`: Keras 3 cannot "
        "read its arguments and constructing the layer raises IndexError."
    )
    rationale = (
        "Keras 3 records each layer's constructor arguments for `get_config`: "
        "`Operation.__new__` reads `inspect.getfullargspec(cls.__init__).args[0]`, and "
        "`getfullargspec` does not see through `functools.wraps`. A wrapper with no named "
        "positional parameter (typeguard 2's `@typechecked`, a project's own decorator) "
        "leaves `args` empty: `IndexError: list index out of range` when the layer is "
        "built, on every backend. Keras 2 did not read the signature."
    )
    fix_safety = (
        "Exact where every decorator on `__init__` keeps the function in `__wrapped__` "
        "(typeguard's `@typechecked`, a wrapper made with `functools.wraps`): "
        "`__init__.__signature__ = inspect.signature(__init__)` after `__init__` gives "
        "Keras 3 the constructor's own parameters and the decorator still runs (its "
        "argument checks stay). Otherwise reported: removing the decorator would drop "
        "what it does; the wrapper can set `__signature__` itself."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from typeguard import typechecked

            class Scale(tf.keras.layers.Layer):
                @typechecked
                def __init__(self, factor: float = 2.0, **kwargs):
                    super().__init__(**kwargs)
                    self.factor = factor
            """,
            """
            import inspect

            import tensorflow as tf
            from typeguard import typechecked

            class Scale(tf.keras.layers.Layer):
                @typechecked
                def __init__(self, factor: float = 2.0, **kwargs):
                    super().__init__(**kwargs)
                    self.factor = factor

                __init__.__signature__ = inspect.signature(__init__)
            """,
        ),
        Clean(
            """
            import keras

            class Scale(keras.layers.Layer):
                def __init__(self, factor: float = 2.0, **kwargs):
                    super().__init__(**kwargs)
                    self.factor = factor
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        classes = {c.name: c for c in module.tree.body if isinstance(c, ast.ClassDef)}
        for site, node in keras_classes(module):
            init = class_methods(node).get("__init__")
            if init is None or not init.decorator_list:
                continue
            if not _operation(module, node, dict(classes)) or _signature_given(node):
                continue
            hiders = [(d, _hiding_wrapper(module, d)) for d in init.decorator_list]
            fix = None
            if all(h is not None and h.keeps_wrapped for _, h in hiders):
                fix = EditPlan(
                    (ClassEdit(module.span_of(node), after_init=(_SIGNATURE_FIX,)),),
                    "give the wrapped __init__ its own signature",
                )
            for decorator, hider in hiders:
                if hider is None:
                    continue
                written = module.node_text(decorator)
                message = (
                    f"`@{written}` on `{node.name}.__init__` wraps it in `(*args, **kwargs)`: "
                    f"Keras 3 reads a layer's constructor arguments with "
                    f"`inspect.getfullargspec`, which does not see through the wrapper, so "
                    f"constructing `{node.name}` raises `IndexError: list index out of "
                    f"range` on every backend"
                )
                if fix is not None:
                    message += (
                        f"; write `{_SIGNATURE_TEXT}` after `__init__` (the wrapper keeps "
                        f"the constructor in `__wrapped__`; `@{written}` still runs)"
                    )
                else:
                    message += (
                        f". Remove `@{written}` from `__init__` (check the arguments in its "
                        f"body instead), {hider.advice}"
                    )
                yield Report(site, message, fix=fix, span=module.span_of(decorator))
