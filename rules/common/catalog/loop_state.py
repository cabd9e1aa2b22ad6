"""Control-flow calls (``tf.while_loop``, ``tf.cond``, ``tf.map_fn``, ``tf.scan``...) whose
arguments carry TensorFlow-only state, which their ``keras.ops`` forms cannot port.

``keras.ops.while_loop(cond, body, [0, ta])`` with ``ta`` a ``tf.TensorArray`` runs on
TensorFlow only: the JAX and PyTorch loops take tensors as loop variables, and the body's
``ta.write`` is a TensorFlow method whatever the loop. Renaming the loop would read as a
port while the model still runs on one backend, so such a call stays manual, with what
to write instead. The state is found where it is visible in the function: a name bound
to a TensorFlow-only constructor (or to an expression holding one, ``pair = (0, ta)``)
that the call's arguments, or the functions it is given (lambdas, functions defined in
the same function or module, methods of the same class), read.
"""

from __future__ import annotations

import ast

from kmigrate.engine import CallSite

_TARGETS = {"tf.map_fn": "map", "K.map_fn": "map"}
# The calls whose arguments are checked (their catalog entries rewrite them to keras.ops).
CONTROL_FLOW = frozenset(
    {"tf.while_loop", "tf.cond", "tf.map_fn", "K.map_fn", "tf.scan", "tf.vectorized_map"}
)
# TensorFlow objects keras.ops loops and branches cannot carry on JAX and PyTorch.
TF_ONLY_STATE = {
    "tf.TensorArray": "a tf.TensorArray",
    "tf.TensorArraySpec": "a tf.TensorArraySpec",
    "tf.RaggedTensorSpec": "a tf.RaggedTensorSpec",
    "tf.SparseTensorSpec": "a tf.SparseTensorSpec",
    "tf.SparseTensor": "a tf.SparseTensor",
    "tf.sparse.SparseTensor": "a tf.SparseTensor",
    "tf.ragged.constant": "a tf.RaggedTensor",
    "tf.RaggedTensor.from_row_lengths": "a tf.RaggedTensor",
    "tf.RaggedTensor.from_row_splits": "a tf.RaggedTensor",
    "tf.RaggedTensor.from_tensor": "a tf.RaggedTensor",
    "tf.RaggedTensor.from_value_rowids": "a tf.RaggedTensor",
}
SUGGESTION = {
    "tf.cond": "return tensors from both branches (stack a TensorArray first, or build "
    "the value with a Python list and ops.stack), then ops.cond(pred, true_fn, false_fn)",
}
LOOP_SUGGESTION = (
    "carry tensors only: with a Python int trip count, a Python loop appending to a list "
    "and ops.stack; otherwise ops.scan(f, init, xs) collecting each step's output, or "
    "ops.fori_loop(0, n, body, init) carrying a preallocated tensor updated with "
    "ops.slice_update"
)


def tf_only_state(site: CallSite) -> tuple[str, str] | None:
    """(why, what to write) when ``site``, a control-flow call, is given TensorFlow-only
    state; None when nothing visible in its function says so."""
    given = _given_code(site)
    passes = ({}, _state_names(site))  # what the code builds first, then what it reads
    for node, held in ((node, held) for held in passes for node in given):
        found = _state_in(site, node, held)
        if found is not None:
            target = "keras.ops." + _TARGETS.get(site.symbol, site.symbol.rpartition(".")[2])
            return (
                f"{found}: TensorFlow-only state, which {target} carries only on TensorFlow "
                "(JAX and PyTorch loops and branches take tensors)",
                SUGGESTION.get(site.symbol, LOOP_SUGGESTION),
            )
    return None


def _state_kind(site: CallSite, node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        return TF_ONLY_STATE.get(site.module.resolve(node.func) or "")
    return None


def _state_names(site: CallSite) -> dict[str, str]:
    """Names of the enclosing function bound, before the call, to TensorFlow-only state,
    with what they hold: bound to a constructor (or a call given one: a map with a
    ragged output signature), to such a name, a tuple of them, a TensorArray method
    that returns the array (``ta.write``), or a control-flow call given one."""
    function = site.scope.function_node
    if function is None:
        return {}
    line = site.node.lineno  # type: ignore[attr-defined]
    assignments = [
        node
        for node in site.module.nodes_in(function, ast.Assign, ast.AnnAssign)
        if getattr(node, "value", None) is not None and node.lineno <= line  # type: ignore[attr-defined]
    ]
    held: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for assign in assignments:
            kind = _held_by(site, assign.value, held)  # type: ignore[attr-defined]
            if kind is None:
                continue
            targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]  # type: ignore[attr-defined]
            for name in (n for target in targets for n in _bound_names(target)):
                if name not in held:
                    held[name] = kind
                    changed = True
    return held


def _bound_names(target: ast.AST) -> list[str]:
    """The plain names an assignment target binds (``a``, ``a, (b, *c)``); an item or
    attribute stored into (``d["k"] = ta``) is not followed."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _bound_names(element)]
    return []


# TensorArray methods whose result is a tensor (``y = ta.stack()`` holds no state).
_TENSOR_READS = frozenset({"stack", "read", "gather", "concat", "size"})


def _held_by(site: CallSite, value: ast.AST, held: dict[str, str]) -> str | None:
    for node in site.module.nodes_in(value, ast.Call):
        kind = _state_kind(site, node)
        if kind is not None:
            return kind
    return _held_value(site, value, held)


def _held_value(site: CallSite, value: ast.AST, held: dict[str, str]) -> str | None:
    if isinstance(value, ast.Name):
        return held.get(value.id)
    if isinstance(value, (ast.Tuple, ast.List)):
        kinds = (_held_value(site, element, held) for element in value.elts)
        return next((kind for kind in kinds if kind is not None), None)
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.attr not in _TENSOR_READS and func.value.id in held:
            return held[func.value.id]  # ta.write(...), ta.unstack(...)
    if site.module.resolve(func) in CONTROL_FLOW:
        names = site.module.nodes_in(value, ast.Name)
        return next((held[n.id] for n in names if n.id in held), None)  # type: ignore[attr-defined]
    return None


def _given_code(site: CallSite) -> list[ast.AST]:
    """The call's arguments and the bodies of the named functions it is given."""
    given: list[ast.AST] = [*site.args, *site.keywords.values()]
    for argument in list(given):
        definition = passed_definition(site, argument)
        if definition is not None:
            given.append(definition)
    return given


def passed_definition(site: CallSite, node: ast.AST) -> ast.AST | None:
    """The function a name (or ``self.name``) passed to the call refers to: defined in
    the enclosing function, the module, or the enclosing class."""
    owners: list[ast.AST] = []
    if isinstance(node, ast.Name):
        name = node.id
        if site.scope.function_node is not None:
            owners.append(site.scope.function_node)
        owners.append(site.module.tree)
    elif (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and site.scope.class_node is not None
    ):
        name = node.attr
        owners.append(site.scope.class_node)
    else:
        return None
    for owner in owners:
        for statement in getattr(owner, "body", []):
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                if statement.name == name:
                    return statement
    return None


def _state_in(site: CallSite, code: ast.AST, held: dict[str, str]) -> str | None:
    """What TensorFlow-only state ``code`` builds or reads from the enclosing function
    (a name a nested function or lambda takes as a parameter is its own)."""
    for node in site.module.nodes_in(code, ast.Call, ast.Name):
        kind = _state_kind(site, node)
        if kind is not None:
            line = node.lineno  # type: ignore[attr-defined]
            return f"a function or argument it is given builds {kind} (line {line})"
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id in held
            and not _parameter_of_enclosing(site, node, code)
        ):
            where = "a loop variable or argument" if node in _plain_args(site) else "captured"
            return f"it is given `{node.id}` ({where}, line {node.lineno}), {held[node.id]}"
    return None


def _plain_args(site: CallSite) -> list[ast.AST]:
    """Names the call's arguments read outside any lambda (loop variables, elements)."""
    found: list[ast.AST] = []
    for argument in [*site.args, *site.keywords.values()]:
        lambdas = site.module.nodes_in(argument, ast.Lambda)
        inside = {id(n) for lam in lambdas for n in site.module.nodes_in(lam, ast.Name)}
        found += [n for n in site.module.nodes_in(argument, ast.Name) if id(n) not in inside]
    return found


def _parameter_of_enclosing(site: CallSite, name: ast.Name, code: ast.AST) -> bool:
    """Whether a function or lambda between ``name`` and ``code`` (included) takes
    ``name`` as a parameter."""
    node: ast.AST | None = name
    while node is not None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            if any(a.arg == name.id for a in every):
                return True
        if node is code:
            return False
        node = site.module.parent_of(node)
    return False
