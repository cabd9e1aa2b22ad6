"""``tf.TensorArray`` accumulation in a loop whose length is a tensor -> ``keras.ops.scan``.

The one form rewritten (all in one function's own body, no loop around it)::

    ta = tf.TensorArray(tf.float32, size=n)   # n: tf.shape(x)[1], a name bound to it...
    for i in tf.range(n):                      # or range(n) / tf.range(0, n)
        h = h * 0.5 + x[:, i]                  # simple assignments to names only
        ta = ta.write(i, h)                    # once, directly in the body: a state
    out = ta.stack()                           # after the loop

becomes::

    def step(h, i):
        h = h * 0.5 + x[:, i]
        ta = keras.ops.convert_to_tensor(h, dtype="float32")
        return h, ta
    h, ta = keras.ops.scan(step, h, keras.ops.arange(n))
    out = ta

Keras 2 ran such a loop as a graph loop (autograph's ``tf.while_loop``, ``range(n)`` of a
tensor included): the body runs for i = 0..n-1 in order, the names it assigns and reads
in the next step (or after the loop) are the loop's state, and ``stack`` gives the
written values along a new first axis. ``scan`` over ``arange(n)`` is that loop on every
backend with an unknown length on TensorFlow and under jit on JAX: the state is its carry
(each such name must be bound before the loop, as autograph requires), the values it
stacks along axis 0 are the writes. Keras's TensorFlow ``scan`` stacks only values of the
carry's structure, shapes and dtypes, so the value written must be one of the state names
(with several, the step's outputs are the carry with the written one in its place, and
the stacked write is picked from them). It is exact only where nothing else leaves the body:
the loop variable is used only as the write's index and as a whole index into a tensor
the body does not assign (``x[:, i]``; in ``scan`` it is an int32 tensor where a Python
``range`` gave ints), the body holds only assignments to names (no ``if``, call statement,
attribute or item assignment, ``break``/``continue``/``return``, nested function or
comprehension), and no state name is declared ``global``/``nonlocal``. Everything else
stays refused with the scan form to write by hand.
"""

from __future__ import annotations

import ast

from kmigrate.engine import CallSite, EditPlan, ReplaceNode
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError
from kmigrate.rules.common.catalog.plan import Rewrite
from kmigrate.rules.ops_catalog import py_literal

_GRAPH_RANGES = frozenset({"tf.range"})
# The ranges the scan's loop may run over that are catalog calls of their own: the scan
# fix rewrites them with the loop's header (catalog_rule reports no finding for them).
SCAN_RANGES = _GRAPH_RANGES
_NESTED_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.NamedExpr,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
)


def build_scan(
    binding: Binding,
    name: str,
    loop: ast.For,
    write: ast.Call,
    stacks: list[ast.AST],
    dtype: str,
    advice: str,
) -> Rewrite:
    """The scan rewrite of the array ``name`` written once by ``write`` in ``loop`` (its
    target a name, its iterator a range of the array's size, checked by the caller) and
    read by ``stacks``; ``ManualPortError`` with ``advice`` where it is not exact."""
    site = binding.site
    function = site.scope.function_node
    constructor = site.module.parent_of(site.node)
    body = getattr(function, "body", None)
    if not (isinstance(body, list) and constructor in body and loop in body):
        raise ManualPortError(
            "the array and its loop are not statements of the function's own body (a loop "
            "around them would carry the state differently)",
            advice,
        )
    if any(stack.lineno <= (loop.end_lineno or loop.lineno) for stack in stacks):  # type: ignore[attr-defined]
        raise ManualPortError(f"`{name}.stack()` is read before the loop ends", advice)
    if loop.lineno == loop.body[0].lineno:
        raise ManualPortError("the loop's body is on its header's line", advice)
    index = loop.target.id  # type: ignore[attr-defined]
    assigned = [n for n in _check_body(site, loop, write, index, advice) if n != name]
    carried = _carried(site, function, loop, assigned)  # type: ignore[arg-type]
    if index in carried or index in _read_after(site, function, loop):  # type: ignore[arg-type]
        raise ManualPortError(f"the loop variable `{index}` is read after the loop", advice)
    _check_bound_before(site, function, loop, carried, advice)  # type: ignore[arg-type]
    written = write.args[1]
    if not (isinstance(written, ast.Name) and written.id in carried):
        raise ManualPortError(
            "the value written is not one of the loop's state names (on TensorFlow, "
            "keras.ops.scan stacks only values shaped as its carry)",
            advice,
        )
    step = _fresh(site, "step")
    slot = carried.index(written.id)
    if len(carried) == 1:
        head, unpack, packed, outputs = f"def {step}({written.id}, {index}):", "", written.id, name
        picked = ""
    else:
        carry = _fresh(site, "carry")
        packed = "(" + ", ".join(carried) + ")"
        head, unpack = f"def {step}({carry}, {index}):", f"    {', '.join(carried)} = {carry}\n"
        outputs = "(" + ", ".join(name if k == slot else c for k, c in enumerate(carried)) + ")"
        picked = f"\n{name} = {name}[{slot}]"
    bound = site.text(_range_bound(loop))
    # A blank line around the nested def, as ruff and black format it (none where it
    # would open the function's body).
    opening = "" if body.index(loop) == 1 and body[0] is constructor else "\n"
    text = (
        f"{opening}{head}\n{unpack}    {{body}}\n    return {packed}, {outputs}\n\n"
        f"{packed}, {name} = {{name:keras.ops.scan}}({step}, {packed}, "
        f"{{name:keras.ops.arange}}({bound})){picked}"
    )
    value = site.text(write.args[1])
    written = f"{name} = {{name:keras.ops.convert_to_tensor}}({value}, dtype={py_literal(dtype)})"
    module = site.module
    edits = [
        ReplaceNode(module.span_of(constructor), "", "stmt"),  # type: ignore[arg-type]
        ReplaceNode(module.span_of(module.parent_of(write)), written, "stmt"),  # type: ignore[arg-type]
        ReplaceNode(module.span_of(loop), text, "compound"),
        *(ReplaceNode(module.span_of(s), name) for s in stacks),
    ]
    return Rewrite(EditPlan(tuple(edits)), "keras.ops.scan")


def graph_range(site: CallSite, loop: ast.For) -> bool:
    """Whether the loop runs over ``tf.range(...)`` (a graph loop in Keras 2)."""
    iterator = loop.iter
    return isinstance(iterator, ast.Call) and site.module.resolve(iterator.func) in _GRAPH_RANGES


def _range_bound(loop: ast.For) -> ast.expr:
    args = loop.iter.args  # type: ignore[attr-defined]
    return args[-1]


def _check_body(
    site: CallSite, loop: ast.For, write: ast.Call, index: str, advice: str
) -> list[str]:
    """The names the body assigns, in order; refused unless the body is assignments to
    names and the loop variable only indexes."""
    assigned: list[str] = []
    for statement in loop.body:
        targets = _name_targets(statement)
        if targets is None:
            raise ManualPortError(
                f"line {statement.lineno} of the loop is not an assignment to names (only "
                "such statements and the write move into the scan step exactly)",
                advice,
            )
        assigned += [t for t in targets if t not in assigned]
        nested = site.module.nodes_in(statement, *_NESTED_SCOPES)
        if nested:
            raise ManualPortError(
                f"line {statement.lineno} of the loop holds a nested scope or a yield", advice
            )
    if index in assigned:
        raise ManualPortError(f"the loop assigns its variable `{index}`", advice)
    for node in site.module.nodes_in(loop, ast.Name):
        if node.id == index and node is not loop.target and node is not write.args[0]:  # type: ignore[attr-defined]
            if not _whole_index(site, node, assigned):  # type: ignore[arg-type]
                raise ManualPortError(
                    f"the loop variable `{index}` is used at line {node.lineno} other than "  # type: ignore[attr-defined]
                    "as the write's index or a whole index into a tensor (in keras.ops.scan "
                    "it is an int32 tensor)",
                    advice,
                )
    return assigned


def _name_targets(statement: ast.stmt) -> list[str] | None:
    """The names a simple assignment binds; None for any other statement."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return None
    names: list[str] = []
    for target in targets:
        elements = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        if not all(isinstance(e, ast.Name) for e in elements):
            return None
        names += [e.id for e in elements]  # type: ignore[attr-defined]
    return names


def _whole_index(site: CallSite, node: ast.Name, assigned: list[str]) -> bool:
    """``x[i]`` / ``x[:, i]``: the name is a whole index of a name the body does not assign."""
    parent = site.module.parent_of(node)
    if isinstance(parent, ast.Tuple):
        parent = site.module.parent_of(parent)
    return (
        isinstance(parent, ast.Subscript)
        and isinstance(parent.value, ast.Name)
        and parent.value.id not in assigned
        and node is not parent.value
    )


def _carried(
    site: CallSite, function: ast.FunctionDef, loop: ast.For, assigned: list[str]
) -> list[str]:
    """The assigned names the loop carries: read in the body before the body assigns
    them (the previous step's value), or read after the loop or in a nested function."""
    carried: list[str] = []
    written: set[str] = set()
    for statement in loop.body:
        reads = [statement.value]  # type: ignore[attr-defined]
        if isinstance(statement, ast.AugAssign):
            reads.append(ast.Name(statement.target.id, ast.Load()))  # type: ignore[attr-defined]
        for read in reads:
            for node in ast.walk(read):
                if isinstance(node, ast.Name) and node.id in assigned and node.id not in written:
                    if node.id not in carried:
                        carried.append(node.id)
        written.update(_name_targets(statement) or ())
    later = _read_after(site, function, loop)
    return [name for name in assigned if name in carried or name in later]


def _read_after(site: CallSite, function: ast.FunctionDef, loop: ast.For) -> set[str]:
    """The names read after the loop, or in a function nested anywhere in ``function``
    (which may run after it)."""
    end = loop.end_lineno or loop.lineno
    return {
        node.id  # type: ignore[attr-defined]
        for node in site.module.nodes_in(function, ast.Name)
        if isinstance(node.ctx, ast.Load)  # type: ignore[attr-defined]
        and (node.lineno > end or _in_nested_scope(site, node, function))  # type: ignore[attr-defined]
    }


def _in_nested_scope(site: CallSite, node: ast.AST, function: ast.AST) -> bool:
    parent = site.module.parent_of(node)
    while parent is not None and parent is not function:
        if isinstance(parent, _NESTED_SCOPES):
            return True
        parent = site.module.parent_of(parent)
    return False


def _check_bound_before(
    site: CallSite, function: ast.FunctionDef, loop: ast.For, carried: list[str], advice: str
) -> None:
    """Each state name is a parameter or assigned by a statement before the loop; none is
    declared global or nonlocal."""
    arguments = function.args
    bound = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for statement in function.body[: function.body.index(loop)]:
        for node in site.module.nodes_in(statement, ast.Name):
            if isinstance(node.ctx, ast.Store) and not _in_nested_scope(site, node, function):  # type: ignore[attr-defined]
                bound.add(node.id)  # type: ignore[attr-defined]
    declared = {
        name
        for node in site.module.nodes_in(function, ast.Global, ast.Nonlocal)
        for name in node.names  # type: ignore[attr-defined]
    }
    for name in carried:
        if name not in bound or name in declared:
            raise ManualPortError(
                f"the loop's state `{name}` is not bound by a statement before the loop "
                "(or is global/nonlocal): it has no initial value for the scan's carry",
                advice,
            )


def _fresh(site: CallSite, base: str) -> str:
    """``base``, or ``base_2``..., unused anywhere in the module."""
    used = {
        getattr(n, "id", None) or getattr(n, "name", None) or getattr(n, "arg", None)
        for n in site.module.nodes(ast.Name, ast.FunctionDef, ast.ClassDef, ast.arg)
    }
    name, number = base, 1
    while name in used:
        number += 1
        name = f"{base}_{number}"
    return name
