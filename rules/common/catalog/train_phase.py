"""``K.in_train_phase(x, alt, training)`` in a layer's ``call`` -> ``x if training else alt``.

Keras 2's ``in_train_phase`` picks ``x`` when ``training`` is true and ``alt`` when it is
false, calling whichever it picks if it is callable; with ``training=None`` it asks the
call context, then the global learning phase (0 unless set). Keras 3 has no learning
phase, but it fills a ``call``'s own ``training`` parameter exactly as Keras 2 did (the
caller's value, else the outer call's, else the parameter's default): so when the
argument *is* that parameter, a conditional expression is the same choice, made lazily
as ``in_train_phase`` made it for callables. Anything the code does not show (a
``training`` reassigned or computed, an argument that may or may not be callable) stays
manual.
"""

from __future__ import annotations

import ast

from kmigrate.engine import EditPlan, ModuleInfo, ReplaceNode
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError
from kmigrate.rules.common.catalog.plan import Rewrite, check_conditions

# Expressions whose value is never a function: K.in_train_phase returns them as they are.
_VALUES = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Subscript, ast.Constant, ast.BoolOp)


def build_train_phase(binding: Binding) -> Rewrite:
    check_conditions(binding)
    site = binding.site
    call = site.scope.function_node
    if not (
        isinstance(call, ast.FunctionDef)
        and call.name == "call"
        and site.scope.class_node is not None
        and call in site.scope.class_node.body
    ):
        raise ManualPortError("it is not directly in a layer's `call` method")
    training = binding.node("training")
    if training is None:
        raise ManualPortError(
            "`training` is not passed: Keras 2 then read the call context, which Keras 3 "
            "does not have"
        )
    if not (
        isinstance(training, ast.Name)
        and training.id == "training"
        and _is_parameter(call, "training")
    ):
        raise ManualPortError(
            "`training` is not passed as the `training` parameter of `call` (the value "
            "Keras fills in; a learning-phase tensor or the global phase has no Keras 3 form)"
        )
    if _assigned(call, training.id):
        raise ManualPortError("`call` assigns `training` before this line")
    locals_ = _Locals(site.module, call)
    train, test = (_branch(binding, locals_, name) for name in ("x", "alt"))
    if site.symbol.endswith("in_test_phase"):
        train, test = test, train
    text = f"({train} if {training.id} else {test})"
    return Rewrite(EditPlan((ReplaceNode(site.span, text),)), text)


def _branch(binding: Binding, locals_: _Locals, name: str) -> str:
    """One branch as an expression: a lambda's body, a nested function called, a value."""
    node = binding.node(name)
    text = binding.text(name)
    if isinstance(node, ast.Lambda):
        if node.args.args or node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            raise ManualPortError(f"`{text}` takes arguments (in_train_phase calls it with none)")
        return f"({binding.site.text(node.body)})"
    if isinstance(node, ast.Name):
        kind = locals_.kind(node.id)
        if kind == "function":
            return f"{node.id}()"
        if kind == "value":
            return node.id
    elif node is not None and locals_.is_value(node):
        return f"({text})"
    raise ManualPortError(
        f"`{text}` may be a tensor or a function (in_train_phase calls functions): "
        "the code does not show which"
    )


def _is_parameter(function: ast.FunctionDef, name: str) -> bool:
    arguments = function.args
    return any(a.arg == name for a in (*arguments.args, *arguments.kwonlyargs))


def _assigned(function: ast.FunctionDef, name: str) -> bool:
    return any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for node in ast.walk(function)
    )


class _Locals:
    """What the names of one ``call`` hold, as far as its code shows."""

    def __init__(self, module: ModuleInfo, function: ast.FunctionDef) -> None:
        self.module = module
        self.function = function

    def kind(self, name: str, depth: int = 0) -> str | None:
        """``"function"`` when ``call`` binds ``name`` only by a nested ``def``;
        ``"value"`` when it is a parameter of ``call`` (Keras passes tensors) or bound
        only by assignments of values; None when the code does not tell."""
        function = self.function
        nested = any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
            for n in function.body
        )
        assigned = [
            n.value
            for n in ast.walk(function)
            if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
        ]
        stores = _assigned(function, name)  # any Name store: for, with, augmented...
        if nested:
            return "function" if not stores else None
        if assigned:
            plain = sum(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                for n in ast.walk(function)
            ) == len(assigned)
            if plain and all(self.is_value(v, depth) for v in assigned):
                return "value"
            return None
        if stores:
            return None
        return "value" if _is_parameter(function, name) and name != "self" else None

    def is_value(self, node: ast.expr, depth: int = 0) -> bool:
        """Whether an expression is a tensor the code shows: arithmetic, a subscript, a
        call of a resolved TensorFlow/Keras op, or a local holding one (a few links)."""
        if isinstance(node, _VALUES):
            return True
        if isinstance(node, ast.Call):
            return self.module.resolve(node.func) is not None
        if isinstance(node, ast.Name) and depth < 3:
            return self.kind(node.id, depth + 1) == "value"
        return False
