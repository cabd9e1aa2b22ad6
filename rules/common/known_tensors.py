"""Whether an expression is certainly one tensor (a backend tensor, a variable, or a
symbolic tensor while a functional model is built), as far as the code shows.

``keras.ops.shape(x)`` reads ``x.shape``: on JAX and PyTorch a Python number or list has
none, where Keras 2's ``K.shape`` / ``tf.shape`` convert it. A rewrite that keeps
``ops.shape`` must know that ``x`` is a tensor; anything not shown to be one takes the
``shape_of`` helper (rules/data/keras2_compat.py). Shown to be a tensor, in model code:

- the input of a Keras class's ``call`` (``def call(self, inputs)``) or of a function
  given to a ``Lambda`` layer (a lambda, or a module function used only there): Keras
  passes a tensor, or a list of tensors to a layer with several inputs. So the input
  itself counts only where ``call`` never treats it as a list (indexes it with anything
  but slices, unpacks it, iterates it, asks ``len`` or ``isinstance``); an item of it
  (``q, v = inputs``, ``inputs[0]``) always does;
- what a TensorFlow / Keras function on tensors returns (``K.dot``, ``tf.reshape``,
  ``keras.ops.mean``..., from a fixed list: never a shape, a list or a Python value);
- arithmetic, a conditional or an index of such a tensor;
- a local name every binding of which is one of these (local_names).
"""

from __future__ import annotations

import ast

from kmigrate.engine import CallSite, ModuleInfo
from kmigrate.rules.common.keras2_classes import keras_classes
from kmigrate.rules.common.local_names import binding_sources
from kmigrate.rules.common.namespaces import in_keras_namespaces

# Namespaces whose functions below return one tensor (or a variable) for tensor inputs,
# in Keras 2 and after their rewrite.
_NAMESPACES = ("tf.", "tf.math.", "tf.nn.", "tf.linalg.", "K.", "keras.ops.", "keras.backend.")
_TENSOR_FUNCTIONS = frozenset(
    """abs add arange argmax argmin batch_dot bias_add cast clip clip_by_value concat
    concatenate constant conv1d conv2d convert_to_tensor cos cumsum divide dot einsum elu
    equal exp expand_dims gather greater greater_equal l2_normalize less less_equal log
    logical_and logical_not logical_or matmul max maximum mean min minimum multiply
    negative not_equal one_hot ones ones_like pad permute_dimensions pow power prod range
    reduce_max reduce_mean reduce_min reduce_prod reduce_sum relu repeat repeat_elements
    reshape sigmoid sign sin softmax softplus sqrt square squeeze stack subtract sum tanh
    tile transpose truediv where zeros zeros_like""".split()
)
# Rewritten to a Python value where their argument is a shape or an entry of one
# (``K.cast(K.shape(x)[0], "int32")`` -> the entry, ``K.prod(K.shape(x)[1:])`` ->
# ``shape_prod``): tensors only where that argument is a tensor.
_OF_THEIR_ARGUMENT = frozenset({"cast", "prod", "reduce_prod"})
_LAMBDA_LAYERS = in_keras_namespaces("layers.Lambda", "layers.core.Lambda")
# Functions whose argument is a list (of tensors) or something iterated: a layer input
# given to one is a list (``K.concatenate(inputs)``), whose ``K.shape`` Keras 2 takes of
# the tensor TensorFlow stacks from it, and ``keras.ops.shape`` refuses on JAX and PyTorch.
_LIST_TAKERS = frozenset("concatenate concat stack add_n".split())
_BUILTIN_LIST_TAKERS = frozenset(
    "len isinstance zip list tuple enumerate map reversed sorted".split()
)
_LAYER_MERGES = in_keras_namespaces(
    *(f"layers.{name}" for name in "add multiply average maximum minimum subtract dot".split())
)
_MAX_DEPTH = 6


def known_tensor(site: CallSite, node: ast.AST) -> bool:
    """Whether ``node`` (in ``site``'s module) is certainly one tensor."""
    return _one(site, node, 0)


def shape_read_before(site: CallSite, node: ast.AST) -> bool:
    """Whether ``node.shape`` is read just before the call at ``site``, in an earlier
    operand of the same ``or`` / ``and`` (``x.shape[0] or tf.shape(x)[0]``: TensorFlow's
    idiom for a dimension known while the model is built, or not). That operand has run
    when the call runs, so ``node`` has a ``.shape`` there, which is all
    ``keras.ops.shape`` reads (and what the ``shape_of`` helper reads it as). ``node``:
    a name or an attribute chain on one (read twice, the same value)."""
    if not _plain_chain(node):
        return False
    module = site.module
    wanted = ast.dump(node)
    child: ast.AST = site.node
    parent = module.parent_of(child)
    while parent is not None and not isinstance(parent, (ast.stmt, *_OWN_SCOPES)):
        if isinstance(parent, ast.BoolOp):
            earlier = parent.values[: parent.values.index(child)]  # type: ignore[arg-type]
            if any(_reads_shape_of(value, wanted) for value in earlier):
                # unless a `:=` in the expression may bind the name again in between
                return not any(isinstance(n, ast.NamedExpr) for n in ast.walk(parent))
        child, parent = parent, module.parent_of(parent)
    return False


# Expressions with names of their own: a name in them may be another binding.
_OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _plain_chain(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _reads_shape_of(value: ast.AST, wanted: str) -> bool:
    """Whether evaluating ``value`` reads ``<wanted>.shape`` first of all: ``value`` is
    ``X.shape`` or an index of it (``X.shape[0]``, ``X.shape[1:]``)."""
    while isinstance(value, ast.Subscript):
        value = value.value
    return (
        isinstance(value, ast.Attribute)
        and value.attr == "shape"
        and ast.dump(value.value) == wanted
    )


def _one(site: CallSite, node: ast.AST, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    module = site.module
    if isinstance(node, ast.Name):
        return _name(site, node, depth, whole=True)
    if isinstance(node, ast.BinOp):
        return _one(site, node.left, depth + 1) or _one(site, node.right, depth + 1)
    if isinstance(node, ast.UnaryOp):
        return not isinstance(node.op, ast.Not) and _one(site, node.operand, depth + 1)
    if isinstance(node, ast.IfExp):
        return _one(site, node.body, depth + 1) and _one(site, node.orelse, depth + 1)
    if isinstance(node, ast.Subscript):
        if _one(site, node.value, depth + 1):
            return True
        return not _slices(node.slice) and _inputs(site, node.value, depth + 1)
    if isinstance(node, ast.Call):
        symbol = module.resolve(node.func) or ""
        prefix, _, name = symbol.rpartition(".")
        if f"{prefix}." not in _NAMESPACES or name not in _TENSOR_FUNCTIONS:
            return False
        return name not in _OF_THEIR_ARGUMENT or (
            bool(node.args) and _one(site, node.args[0], depth + 1)
        )
    return False


def _slices(index: ast.AST) -> bool:
    if isinstance(index, ast.Tuple):
        return any(_slices(e) for e in index.elts)
    return isinstance(index, ast.Slice)


def _inputs(site: CallSite, node: ast.AST, depth: int) -> bool:
    """Whether ``node`` is a tensor or a list of tensors: what a layer's input is."""
    if isinstance(node, ast.Name):
        return _name(site, node, depth, whole=False)
    return _one(site, node, depth)


def _name(site: CallSite, node: ast.Name, depth: int, whole: bool) -> bool:
    """A name that is one tensor (``whole``), or a tensor or list of tensors."""
    module = site.module
    lambda_input = _lambda_input(module, node)
    if lambda_input is not None:
        return not whole or not _used_as_list(module, lambda_input, node.id)
    sources = binding_sources(module, node)
    if sources is None:
        return False
    for kind, source in sources:
        if kind == "parameter":
            function = _call_input_of(site, source)
            if function is None or whole and _used_as_list(module, function, node.id):
                return False
        elif kind == "element":
            if not _inputs(site, source, depth + 1):
                return False
        elif not (_one(site, source, depth + 1) or not whole and _inputs(site, source, depth + 1)):
            return False
    return True


def _call_input_of(site: CallSite, parameter: ast.AST) -> ast.FunctionDef | None:
    """The function whose layer input ``parameter`` is: ``call`` directly in a Keras
    class, or a module-level function only ever given to ``Lambda`` layers."""
    module = site.module
    function = module.parent_of(module.parent_of(parameter))  # arg -> arguments -> def
    if not isinstance(function, ast.FunctionDef):
        return None
    positional = function.args.posonlyargs + function.args.args
    owner = module.parent_of(function)
    if function.name == "call":
        classes = module.memo(("known-tensors-classes",), lambda: _keras_class_nodes(module))
        if owner in classes and len(positional) > 1 and positional[1] is parameter:
            return function
        return None
    if owner is module.tree and positional[:1] == [parameter]:
        lambdas = module.memo(("known-tensors-lambdas",), lambda: _lambda_functions(module))
        return function if function.name in lambdas else None
    return None


def _lambda_functions(module: ModuleInfo) -> frozenset[str]:
    """Names of the module's functions whose every use is as a ``Lambda`` layer's
    function (``Lambda(sampling)``): their input is what the layer is called on."""
    given, other = set(), set()
    for node in module.nodes_in(module.tree, ast.Name):
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            continue
        layer = module.parent_of(node)
        if (
            isinstance(layer, ast.Call)
            and layer.args[:1] == [node]
            and (module.resolve(layer.func) or "") in _LAMBDA_LAYERS
        ):
            given.add(node.id)
        else:
            other.add(node.id)
    return frozenset(given - other)


def _keras_class_nodes(module: ModuleInfo) -> tuple[ast.ClassDef, ...]:
    return tuple(node for _, node in keras_classes(module))


def _lambda_input(module: ModuleInfo, node: ast.Name) -> ast.Lambda | None:
    """The lambda given to a ``Lambda`` layer whose input ``node`` reads."""
    scope = module.parent_of(node)
    while scope is not None and not isinstance(
        scope, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    ):
        scope = module.parent_of(scope)
    if not isinstance(scope, ast.Lambda):
        return None
    positional = scope.args.posonlyargs + scope.args.args
    if not positional or positional[0].arg != node.id:
        return None
    layer = module.parent_of(scope)
    if not (
        isinstance(layer, ast.Call)
        and layer.args[:1] == [scope]
        and (module.resolve(layer.func) or "") in _LAMBDA_LAYERS
    ):
        return None
    return scope


def _used_as_list(module: ModuleInfo, function: ast.AST, name: str) -> bool:
    """Whether ``function`` may treat its input ``name`` as a list of tensors: indexes it
    with anything but slices, unpacks or iterates it, gives it to ``len`` / ``isinstance``
    or to a function that takes a list (``K.concatenate``, ``zip``, ``layers.add``)."""
    # every read of the name, whichever binding it sees: a superset of the input's reads
    for read in module.nodes_in(function, ast.Name):
        if not (isinstance(read, ast.Name) and read.id == name and isinstance(read.ctx, ast.Load)):
            continue
        parent = module.parent_of(read)
        if isinstance(parent, ast.Subscript) and parent.value is read:
            if not isinstance(parent.slice, (ast.Slice, ast.Tuple)):
                return True  # inputs[0], inputs[i]: an item of a list, or of a tensor
        elif isinstance(parent, (ast.Assign, ast.For, ast.comprehension, ast.Starred)):
            return True
        elif isinstance(parent, ast.Call) and read in parent.args:
            if isinstance(parent.func, ast.Name) and parent.func.id in _BUILTIN_LIST_TAKERS:
                return True
            symbol = module.resolve(parent.func) or ""
            if symbol.rpartition(".")[2] in _LIST_TAKERS or symbol in _LAYER_MERGES:
                return True
    return False
