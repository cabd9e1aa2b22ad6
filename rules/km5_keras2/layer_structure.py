"""KM517-KM518: how a Layer subclass's ``call`` is put together, where Keras 2 tolerated what
Keras 3's backends do not: layers created inside ``call``, and tensors updated in place
inside ``call`` (``e -= m``). KM516 (sub-layers set before ``super().__init__()``) has its
own module, :mod:`.attribute_before_super_init`.

Each is a whole-class question, so the rules read the module's Keras classes once
(:func:`kmigrate.rules.common.keras2_classes.keras_classes`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from kmigrate.engine import EditPlan, ModuleInfo, ReplaceNode, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import keras_classes
from kmigrate.rules.common.layer_weights import WEIGHTLESS_LAYERS
from kmigrate.rules.common.namespaces import KERAS_NAMESPACES

_LAYER_NAMESPACES = tuple(ns + "layers." for ns in KERAS_NAMESPACES)


def _method(node: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _call_nodes(node: ast.ClassDef) -> Iterator[ast.AST]:
    """Every node inside the class's ``call`` method, nested functions included."""
    call = _method(node, "call")
    if call is not None:
        yield from code_walk(call)


class LayerCreatedInCall(Rule):
    id = "KM517"
    name = "layer-created-in-call"
    summary = "A Keras layer with weights or seed state is created inside a layer's `call`."
    rationale = (
        "`call` runs at every step (and is traced by `jit` on JAX, `tf.function` on "
        "TensorFlow): a layer created there is new each time, so its weights are never "
        "tracked, saved or trained, and Keras 3 cannot create variables inside a traced "
        "call on JAX (a Dropout's seed state is a variable too). Keras 2 hid this in graph "
        "mode, where `call` ran once. Layers that hold no variable (`Reshape`, `Activation`, "
        "pooling, merging...) are not reported: a new one per call runs on every backend."
    )
    fix_safety = "Reported: create the layer in `__init__` (or `build`) and call it in `call`."
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import keras

            class Head(keras.layers.Layer):
                def call(self, x):
                    return keras.layers.Dense(4)(x)
            """
        ),
        Clean(  # a layer without variables: a new one per call runs on every backend
            """
            import keras

            class Head(keras.layers.Layer):
                def call(self, x):
                    return keras.layers.Reshape((-1,))(keras.layers.Activation("relu")(x))
            """
        ),
        Clean(
            """
            import keras

            class Head(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.dense = keras.layers.Dense(4)

                def call(self, x):
                    return self.dense(x)
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        for site, node in keras_classes(module):
            for inner in _call_nodes(node):
                if not isinstance(inner, ast.Call):
                    continue
                symbol = module.resolve(inner.func) or ""
                leaf = symbol.rpartition(".")[2]
                if (
                    symbol.startswith(_LAYER_NAMESPACES)
                    and leaf[:1].isupper()
                    and leaf not in WEIGHTLESS_LAYERS
                ):
                    yield Report(
                        site,
                        f"`{node.name}.call` creates a new `{leaf}` at every call: its weights "
                        "are not tracked, saved or trained (and JAX refuses new variables in "
                        "a traced call); create it once in `__init__` as `self.<name> = "
                        f"{leaf}(...)` and call that",
                        span=module.span_of(inner),
                        symbol=symbol,
                    )


_AUG_OPERATORS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
}
# Values that are not tensors: a name bound to one of them is a counter, a list or a flag.
_NON_TENSOR_VALUES = (ast.Constant, ast.List, ast.ListComp, ast.Dict, ast.Set, ast.Tuple)
_NON_TENSOR_CALLS = frozenset({"len", "int", "float", "range", "enumerate", "list", "dict", "str"})


def _plain_value(value: ast.AST) -> bool:
    return isinstance(value, _NON_TENSOR_VALUES) or (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in _NON_TENSOR_CALLS
    )


def _non_tensor_names(function: ast.AST) -> set[str]:
    """Names that hold plain Python values in ``function``: loop counters, literals."""
    names: set[str] = set()
    for node in code_walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = [(target, node.value)]
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs = list(zip(target.elts, node.value.elts))  # `x, n = inputs[0], 1`
                names.update(t.id for t, v in pairs if isinstance(t, ast.Name) and _plain_value(v))
        elif isinstance(node, (ast.For, ast.comprehension)):
            names.update(n.id for n in code_walk(node.target) if isinstance(n, ast.Name))
    return names


# Calls of TensorFlow / Keras 2 backend / keras.ops whose result is not one immutable tensor
# (a list, a NumPy array, a variable): `x += y` on those is not `x = x + y`.
_MUTABLE_RESULT_LEAVES = frozenset(
    {"split", "unstack", "meshgrid", "gradients", "eval", "get_value", "batch_get_value"}
    | {"cast_to_floatx", "zeros", "ones", "eye", "Variable", "numpy", "unique"}
)
_TENSOR_CALL_PREFIXES = ("keras.ops.", "K.", "tf.")
# Operators whose result is never a list or string (those of `+`, `*`, `%` can be)
_NUMERIC_OPERATORS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Pow, ast.MatMult)


def _tensor_call(module: ModuleInfo, value: ast.AST) -> bool:
    if not isinstance(value, ast.Call):
        return False
    symbol = module.resolve(value.func) or ""
    leaf = symbol.rpartition(".")[2]
    return (
        symbol.startswith(_TENSOR_CALL_PREFIXES)
        and leaf not in _MUTABLE_RESULT_LEAVES
        and "variable" not in leaf.lower()
    )


def _immutable_value(module: ModuleInfo, value: ast.AST) -> bool:
    """Whether ``value`` is a number or a tensor that TensorFlow never updates in place:
    for such a value ``x op= y`` is exactly ``x = x op (y)``."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float, complex))
    if isinstance(value, ast.UnaryOp):
        return _immutable_value(module, value.operand)
    if isinstance(value, ast.BinOp):
        operands = (value.left, value.right)
        return isinstance(value.op, _NUMERIC_OPERATORS) or any(
            _tensor_call(module, o) for o in operands
        )
    return _tensor_call(module, value)


def _bound_value(module: ModuleInfo, store: ast.Name) -> ast.AST | None:
    """What an assignment to ``store`` gives it (``x = v``, or ``x`` in ``x, y = v, w``);
    None for any other binding (a loop, ``with ... as``, an unpacked call)."""
    parent = module.parent_of(store)
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        return parent.value
    statement = module.parent_of(parent)
    if isinstance(parent, ast.Tuple) and isinstance(statement, ast.Assign):
        value = statement.value
        if isinstance(value, ast.Tuple) and len(value.elts) == len(parent.elts):
            return value.elts[parent.elts.index(store)]
    return None


def _rebinding_text(
    module: ModuleInfo, call: ast.FunctionDef, update: ast.AugAssign, operator: str
) -> str | None:
    """``name = name op (value)`` for ``name op= value`` in ``call`` when every other
    binding of ``name`` there gives a number or a tensor, so that the update only rebinds
    it on TensorFlow (TensorFlow tensors and numbers are immutable); else None."""
    name = update.target.id  # type: ignore[attr-defined]
    if any(isinstance(a, ast.arg) and a.arg == name for a in ast.walk(call)):
        return None  # a parameter (of `call` or of a function in it): anything
    tensor_bound = False
    for node in code_walk(call):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if not (isinstance(node, ast.Name) and node.id == name) or isinstance(node.ctx, ast.Load):
            continue
        parent = module.parent_of(node)
        if isinstance(parent, ast.AugAssign) and isinstance(parent.op, tuple(_AUG_OPERATORS)):
            continue
        value = _bound_value(module, node)
        if value is None or not _immutable_value(module, value):
            return None
        tensor_bound = tensor_bound or not isinstance(value, (ast.Constant, ast.UnaryOp))
    if not tensor_bound:
        return None  # only numbers: a counter, left alone
    value = update.value
    text = module.node_text(value)
    if not isinstance(value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)):
        text = f"({text})"
    return f"{name} = {name} {operator} {text}"


class InPlaceTensorUpdateInCall(Rule):
    id = "KM518"
    name = "in-place-tensor-update-in-call"
    summary = "Augmented assignment (`e -= m`) on a tensor inside a layer's `call`."
    rationale = (
        "On the torch backend tensors are `torch.Tensor`s, whose `-=`, `+=`, `*=` update "
        "the tensor in place. When autograd needs the old value (it does for most "
        "operations), `fit` fails with 'one of the variables needed for gradient "
        "computation has been modified by an inplace operation'; if the name aliases an "
        "input, the input changes too. TensorFlow and JAX tensors are immutable, so Keras 2 "
        "code never noticed."
    )
    fix_safety = (
        "Rewritten to `e = e - (m)` where every other assignment to the name in `call` "
        "gives a number or the result of a `keras.ops` / `K` / `tf` call that is one "
        "tensor (not a list, a NumPy array or a variable): TensorFlow tensors and numbers "
        "are immutable, so on TensorFlow the update only rebinds the name, as the rewrite "
        "does. Reported otherwise (a parameter, a project function's result): kmigrate "
        "cannot tell a tensor from a Python list there."
    )
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import keras

            class Masked(keras.layers.Layer):
                def call(self, e, mask):
                    e -= (1.0 - mask) * 1e9
                    return keras.ops.softmax(e)
            """
        ),
        Flagged(
            """
            import keras

            class Scaled(keras.layers.Layer):
                def call(self, x):
                    b = 0.0
                    if self.use_bias:
                        b = keras.ops.reshape(self.bias, (1, -1))
                    b /= keras.ops.sum(x) + 1.0
                    return x + b
            """,
            """
            import keras

            class Scaled(keras.layers.Layer):
                def call(self, x):
                    b = 0.0
                    if self.use_bias:
                        b = keras.ops.reshape(self.bias, (1, -1))
                    b = b / (keras.ops.sum(x) + 1.0)
                    return x + b
            """,
        ),
        Clean(
            """
            import keras

            class Masked(keras.layers.Layer):
                def call(self, e, mask):
                    steps = 0
                    for _ in range(3):
                        steps += 1
                    e = e - (1.0 - mask) * 1e9
                    return keras.ops.softmax(e) * steps
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        for site, node in keras_classes(module):
            call = _method(node, "call")
            if call is None:
                continue
            plain = _non_tensor_names(call)
            for inner in code_walk(call):
                if not (
                    isinstance(inner, ast.AugAssign)
                    and isinstance(inner.target, ast.Name)
                    and type(inner.op) in _AUG_OPERATORS
                ):
                    continue
                name = inner.target.id
                operator = _AUG_OPERATORS[type(inner.op)]
                rebinding = _rebinding_text(module, call, inner, operator)
                if rebinding is None and name in plain:
                    continue  # a counter or a list, never a tensor as far as the code says
                span = module.span_of(inner)
                yield Report(
                    site,
                    f"`{name} {operator}= ...` in `{node.name}.call` updates `{name}` in place "
                    "on the torch backend, which breaks autograd in `fit` (and changes an "
                    f"aliased input); write `{name} = {name} {operator} (...)`",
                    span=span,
                    fix=None
                    if rebinding is None
                    else EditPlan((ReplaceNode(span, rebinding, kind="stmt"),), rebinding),
                )
