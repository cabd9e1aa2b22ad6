"""``tf.cond`` calls whose ``keras.ops.cond`` form is not the same program on every backend.

``keras.ops.cond(pred, true_fn, false_fn)`` is exact where the predicate is a boolean
tensor and the branches only compute tensors (tests/rules/test_control_flow_state_backends.py).
Two shapes seen in real layers are not (tests/rules/test_cond_branches_backends.py):

- **The predicate is a Keras weight** (``self.flag = self.add_weight(..., dtype="bool")``,
  ``tf.cond(self.flag, ...)``): keras.ops.cond given the variable itself raises on every
  backend (TensorFlow "unhashable type: 'Variable'", JAX cannot convert it, PyTorch "A Keras
  Variable cannot be used as a boolean"). Its value, ``self.flag.value``, is a boolean
  tensor, and the rewrite passes that: the same branch taken as in Keras 2, eagerly, in a
  functional model's predict (a graph on TensorFlow, jit on JAX) and in fit. A variable
  made otherwise (``tf.Variable``, ``K.variable``) has no ``.value`` tensor on every
  backend: the call stays, with the reason.
- **A branch changes state** (assigns or updates a variable, runs under
  ``tf.control_dependencies``, asserts, prints, adds a loss, sets an attribute): TensorFlow
  runs the chosen branch's assignments, JAX traces both branches under ``lax.cond`` and
  keeps no assignment made inside one, PyTorch runs one branch as Python. No rewrite of
  the call is the same program: it stays, with what to write instead. The branches are
  followed into the functions and methods they call (the class's methods, functions of
  the enclosing function and of the module, lambdas bound to a name), a few calls deep.
- **The branches visibly return different structures** (a 2-tuple and a 3-tuple, a tuple
  and one tensor): TensorFlow runs one branch eagerly without comparing them, JAX's
  ``lax.cond`` and Keras 3's functional models refuse the pair. The call stays.
"""

from __future__ import annotations

import ast

from kmigrate.engine import CallSite
from kmigrate.rules.common.catalog.loop_state import passed_definition
from kmigrate.rules.common.local_names import bound_value

# Methods of a variable that change it in place.
_VARIABLE_UPDATES = frozenset(
    {
        "assign",
        "assign_add",
        "assign_sub",
        "scatter_update",
        "scatter_add",
        "scatter_sub",
        "scatter_max",
        "scatter_min",
        "scatter_mul",
        "scatter_div",
        "scatter_nd_update",
        "scatter_nd_add",
        "scatter_nd_sub",
        "batch_scatter_update",
    }
)
# Methods of a layer that record state as they are called.
_LAYER_RECORDS = frozenset({"add_loss", "add_metric", "add_update"})
# TensorFlow and Keras 2 functions run for their effect.
_EFFECTS = frozenset(
    {
        "tf.control_dependencies",
        "tf.compat.v1.control_dependencies",
        "tf.compat.v1.assign",
        "tf.compat.v1.assign_add",
        "tf.compat.v1.assign_sub",
        "tf.print",
        "tf.Assert",
        "tf.debugging.Assert",
        "tf.py_function",
        "tf.numpy_function",
        "tf.compat.v1.py_func",
        "K.update",
        "K.update_add",
        "K.update_sub",
        "K.set_value",
        "K.batch_set_value",
        "K.print_tensor",
        "K.moving_average_update",
    }
)
_EFFECT_PREFIXES = ("tf.debugging.assert", "tf.assert_", "tf.compat.v1.assert_", "tf.summary.")
# How far calls are followed from a branch into the functions it calls.
_DEPTH = 4

STATE_SUGGESTION = (
    "keep the branches pure and change the state outside them: compute both values as "
    "tensors and choose with keras.ops.where(pred, a, b) (or ops.cond on pure branches), "
    "then assign the result after it to a non-trainable weight; a one-time initialisation "
    "behind a flag (`if not initialized: g.assign(norm(v))`) belongs in build(), or in a "
    "method run once, eagerly, before training"
)
_VARIABLE_SUGGESTION = (
    "make the flag a Keras weight (self.add_weight(shape=(), dtype='bool', "
    "trainable=False)) and pass its value: ops.cond(self.flag.value, true_fn, false_fn)"
)


def branch_state(site: CallSite, branches: list[ast.expr]) -> tuple[str, str] | None:
    """(why, what to write) when a branch of the ``tf.cond`` at ``site`` (``branches``:
    its true_fn and false_fn arguments) changes state; None when none visibly does."""
    seen: set[int] = set()
    todo = [(branch, 0) for branch in branches]
    while todo:
        code, depth = todo.pop(0)
        if id(code) in seen:
            continue
        seen.add(id(code))
        if isinstance(code, ast.Name) and isinstance(bound_value(site.module, code), ast.Lambda):
            code = bound_value(site.module, code)  # type: ignore[assignment]
        if depth == 0 and not isinstance(code, ast.Lambda):
            definition = passed_definition(site, code)
            if definition is None:
                continue  # a function from elsewhere: nothing visible says it has effects
            code = definition
        found = _effect_in(site, code)
        if found is not None:
            return (
                f"a branch {found}: keras.ops.cond branches must be pure (TensorFlow runs "
                "the chosen branch's assignments, JAX traces both branches and keeps no "
                "assignment made inside one, PyTorch runs one branch as Python)",
                STATE_SUGGESTION,
            )
        if depth < _DEPTH:
            for call in site.module.nodes_in(code, ast.Call):
                called = passed_definition(site, call.func)  # type: ignore[attr-defined]
                if called is not None:
                    todo.append((called, depth + 1))
    return None


def branch_structures(site: CallSite, branches: list[ast.expr]) -> tuple[str, str] | None:
    """(why, what to write) when the two branches visibly return different structures
    (tuple or list displays of different lengths, or a display and a single tensor
    expression): keras.ops.cond needs one structure from both on every backend."""
    shapes = [_returned_structure(site, branch) for branch in branches]
    if len(shapes) != 2 or None in shapes or shapes[0] == shapes[1]:
        return None
    return (
        f"its branches return different structures ({shapes[0]} and {shapes[1]}): "
        "keras.ops.cond needs the same structure, shapes and dtypes from both branches "
        "(JAX traces both; TensorFlow only checks them in a graph)",
        "return the same structure from both branches (pad the shorter one with "
        "tensors of the same shapes), or branch in Python where the condition is a "
        "Python value",
    )


# Arithmetic that never yields a tuple or list (``+`` and ``*`` may: ``(a,) + (b,)``).
_NUMERIC_OPERATORS = (ast.Sub, ast.Div, ast.Pow, ast.MatMult, ast.FloorDiv, ast.Mod)


def _single_value(value: ast.expr) -> bool:
    """Whether ``value`` is one number or tensor whatever its names hold: a number, a
    negation, arithmetic that cannot build a sequence (``x - 1``, ``x * 2.0``)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, ast.USub)
    if isinstance(value, ast.BinOp):
        floats = [
            o
            for o in (value.left, value.right)
            if isinstance(o, ast.Constant) and isinstance(o.value, float)
        ]
        return isinstance(value.op, _NUMERIC_OPERATORS) or bool(floats)
    return False


def _returned_structure(site: CallSite, branch: ast.expr) -> str | None:
    """ "a N-tuple" when every return of the branch is a tuple/list display of N items,
    "one tensor" when each is an arithmetic expression or a constant, None when unknown."""
    if isinstance(branch, ast.Name) and isinstance(bound_value(site.module, branch), ast.Lambda):
        branch = bound_value(site.module, branch)  # type: ignore[assignment]
    if isinstance(branch, ast.Lambda):
        returned = [branch.body]
    else:
        definition = passed_definition(site, branch)
        if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        returns = [
            node
            for node in site.module.nodes_in(definition, ast.Return)
            if _own_return(site, node, definition)  # type: ignore[arg-type]
        ]
        if not returns or any(r.value is None for r in returns):  # type: ignore[attr-defined]
            return None
        returned = [r.value for r in returns]  # type: ignore[attr-defined]
    kinds = set()
    for value in returned:
        if isinstance(value, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in value.elts):
                return None
            kinds.add(f"a {len(value.elts)}-tuple")
        elif _single_value(value):
            kinds.add("one tensor")
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def _own_return(site: CallSite, node: ast.AST, function: ast.AST) -> bool:
    """Whether the return ``node`` belongs to ``function`` itself (not a nested one)."""
    parent = site.module.parent_of(node)
    while parent is not None and parent is not function:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        parent = site.module.parent_of(parent)
    return parent is function


def _effect_in(site: CallSite, code: ast.AST) -> str | None:
    """What in ``code`` changes state, with its line; None when nothing visibly does."""
    module = site.module
    for node in module.nodes_in(code, ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign):
        line = node.lineno  # type: ignore[attr-defined]
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _VARIABLE_UPDATES:
                return f"updates a variable (`{site.text(func)}`, line {line})"
            if isinstance(func, ast.Attribute) and func.attr in _LAYER_RECORDS:
                return f"records layer state (`{site.text(func)}`, line {line})"
            symbol = module.resolve(func) or ""
            if symbol in _EFFECTS or symbol.startswith(_EFFECT_PREFIXES):
                return f"runs `{symbol}` (line {line})"
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        for target in targets:
            for stored in ast.walk(target):
                if isinstance(stored, ast.Attribute) and isinstance(stored.ctx, ast.Store):
                    return f"sets `{site.text(stored)}` (line {line})"
    for node in module.nodes_in(code, ast.Global, ast.Nonlocal):
        return f"rebinds `{', '.join(node.names)}` (line {node.lineno})"  # type: ignore[attr-defined]
    return None


_KERAS_WEIGHTS = frozenset({"add_weight", "add_variable"})
_KERAS_VARIABLES = frozenset({"keras.Variable", "keras.backend.Variable"})


def variable_predicate(site: CallSite, pred: ast.expr) -> str | None:
    """What the predicate ``self.<name>`` of the ``tf.cond`` at ``site`` holds when its
    class binds it to a variable: "weight" for a Keras weight (``self.add_weight``,
    ``keras.Variable``), else the constructor's symbol (``tf.Variable``); None when it is
    no attribute of ``self`` the class binds to a variable."""
    if not (
        isinstance(pred, ast.Attribute)
        and isinstance(pred.value, ast.Name)
        and pred.value.id == "self"
        and site.scope.class_node is not None
    ):
        return None
    module = site.module
    for assign in module.nodes_in(site.scope.class_node, ast.Assign):
        stores = [
            t
            for t in assign.targets  # type: ignore[attr-defined]
            if isinstance(t, ast.Attribute)
            and t.attr == pred.attr
            and isinstance(t.value, ast.Name)
            and t.value.id == "self"
        ]
        value = assign.value  # type: ignore[attr-defined]
        if not stores or not isinstance(value, ast.Call):
            continue
        func = value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _KERAS_WEIGHTS
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            return "weight"
        symbol = module.resolve(func) or ""
        if symbol in _KERAS_VARIABLES:
            return "weight"
        if symbol.endswith(("Variable", ".variable")):
            return symbol
    return None


def variable_refusal(symbol: str, text: str) -> tuple[str, str]:
    """(why, what to write) for a predicate bound to a variable that is no Keras weight."""
    return (
        f"the predicate `{text}` is a variable made by `{symbol}`: keras.ops.cond raises on "
        "a variable on every backend, and its tensor value is read differently per backend",
        _VARIABLE_SUGGESTION,
    )
