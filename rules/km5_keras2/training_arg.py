"""KM515: ``call(self, x, **kwargs)`` reading ``kwargs.get("training")``.

Keras 2 put ``training`` into ``**kwargs`` of any ``call`` that took them; Keras 3 passes
``training`` only to a ``call`` whose signature names it. The layer then reads ``None``:
its own dropout or noise is silently off during ``fit``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ClassEdit, EditPlan, ModuleInfo, ReplaceNode, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import keras_classes


def _training_reads(call: ast.FunctionDef, kwargs: str) -> list[ast.AST]:
    """``kwargs.get("training"...)``, ``kwargs["training"]`` and ``"training" in kwargs``."""
    found: list[ast.AST] = []
    for node in code_walk(call):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == kwargs
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "training"
        ):
            found.append(node)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == kwargs
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == "training"
        ):
            found.append(node)
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Constant)
            and node.left.value == "training"
            and any(isinstance(c, ast.Name) and c.id == kwargs for c in node.comparators)
        ):
            found.append(node)
    return found


def _exact_read(node: ast.AST) -> bool:
    """``kwargs.get("training")`` / ``.get("training", None)`` / ``.pop(...)`` alike: what
    Keras 2 gave there is what a ``training=None`` parameter holds."""
    if not isinstance(node, ast.Call) or node.keywords or len(node.args) > 2:
        return False
    return len(node.args) == 1 or (
        isinstance(node.args[1], ast.Constant) and node.args[1].value is None
    )


def _uses_name(function: ast.AST, name: str) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == name) or (isinstance(n, ast.arg) and n.arg == name)
        for n in code_walk(function)
    )


class TrainingFromKwargs(Rule):
    id = "KM515"
    name = "training-from-kwargs"
    summary = "A layer's `call(self, x, **kwargs)` reads `training` from `kwargs`."
    rationale = (
        "Keras 2 passed `training` inside `**kwargs` to every `call` that accepted them. "
        "Keras 3 inspects `call`'s signature and passes `training` only when it is a named "
        "parameter, so `kwargs.get('training')` is always `None`: dropout, noise or any "
        "branch on it is silently off in `fit` on every backend."
    )
    fix_safety = (
        "Exact when every read is `kwargs.get('training')` (or `.get`/`.pop` with a None "
        "default) and `call` uses no other name `training`: `training=None` is added before "
        "`**kwargs` and the reads become `training`, which is what Keras 2 put there. "
        "Other reads (`kwargs['training']`, `'training' in kwargs`, another default) are "
        "reported."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import keras

            class Noisy(keras.layers.Layer):
                def call(self, x, **kwargs):
                    if kwargs.get("training"):
                        x = x + keras.random.normal(keras.ops.shape(x), seed=1)
                    return x
            """,
            """
            import keras

            class Noisy(keras.layers.Layer):
                def call(self, x, training=None, **kwargs):
                    if training:
                        x = x + keras.random.normal(keras.ops.shape(x), seed=1)
                    return x
            """,
        ),
        Flagged(
            """
            import keras

            class Strict(keras.layers.Layer):
                def call(self, x, **kwargs):
                    return x if kwargs["training"] else -x
            """
        ),
        Clean(
            """
            import keras

            class Noisy(keras.layers.Layer):
                def call(self, x, training=None, **kwargs):
                    if training:
                        x = x + keras.random.normal(keras.ops.shape(x), seed=1)
                    return x
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        for site, node in keras_classes(module):
            call = next(
                (s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "call"),
                None,
            )
            if call is None or call.args.kwarg is None:
                continue
            named = [
                a.arg for a in (*call.args.posonlyargs, *call.args.args, *call.args.kwonlyargs)
            ]
            if "training" in named:
                continue
            kwargs = call.args.kwarg.arg
            reads = _training_reads(call, kwargs)
            exact = all(_exact_read(r) for r in reads) and not _uses_name(call, "training")
            class_edit = ClassEdit(module.span_of(node), call_params=(("training", "None"),))
            for read in reads:
                span = module.span_of(read)
                fix = None
                if exact:
                    fix = EditPlan(
                        (class_edit, ReplaceNode(span, "training")), "add training=None to call"
                    )
                yield Report(
                    site,
                    f"`{node.name}.call` reads `training` from `**{kwargs}`: Keras 3 passes "
                    "`training` only to a `call` that names it, so this is always None and "
                    f"the layer behaves as in inference during `fit`; add `training=None` to "
                    f"`call`'s parameters (before `**{kwargs}`) and use `training` here",
                    span=span,
                    fix=fix,
                )
