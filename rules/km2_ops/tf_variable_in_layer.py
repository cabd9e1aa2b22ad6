"""KM203: ``tf.Variable`` / ``K.variable`` created inside model code."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace

from kmigrate.engine import NOT_LITERAL, CallSite, Context, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError, bind
from kmigrate.rules.common.catalog.builders import call_text
from kmigrate.rules.common.catalog.catalog_rule import VARIABLE_SYMBOLS
from kmigrate.rules.common.catalog.plan import Rewrite
from kmigrate.rules.common.dtypes import dtype_name
from kmigrate.rules.common.evident_dtype import evident_dtype
from kmigrate.rules.ops_catalog import lookup, py_literal

_LAYER_BASE_HINTS = ("Layer", "Model", "Sequential", "Metric", "Block")
_SHAPED_INITIAL = {
    "tf.zeros": '"zeros"',
    "tf.ones": '"ones"',
    "np.zeros": '"zeros"',
    "np.ones": '"ones"',
}
_TF_INITIALIZERS = {
    "tf.zeros_initializer": '"zeros"',
    "tf.ones_initializer": '"ones"',
    "tf.compat.v1.zeros_initializer": '"zeros"',
    "tf.compat.v1.ones_initializer": '"ones"',
}


def _state_owner_ok(site: CallSite) -> bool:
    scope = site.scope
    if scope.class_node is None or scope.function_name not in ("__init__", "build"):
        return False
    bases = list(scope.class_bases) + [
        b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "")
        for b in scope.class_node.bases
    ]
    return any(
        b.rsplit(".", 1)[-1].endswith(_LAYER_BASE_HINTS) or ".layers." in b or ".metrics." in b
        for b in bases
    )


def _shape_text(site: CallSite, node: ast.expr) -> str:
    """A shape add_weight accepts: a tuple or list (written here, or in every assignment
    of the ``self`` attribute or local name that holds it), or an int literal as ``(n,)``.
    Anything else may hold an int, which tf.zeros takes and add_weight refuses."""
    literal = site.module.literal(node)
    if isinstance(literal, int) and not isinstance(literal, bool):
        return f"({literal},)"
    if all(isinstance(value, (ast.Tuple, ast.List)) for value in _assigned_values(site, node)):
        return site.text(node)
    raise ManualPortError("the shape is not known to be a tuple or list")


def _assigned_values(site: CallSite, node: ast.expr) -> list[ast.expr]:
    """``node`` itself, or every value assigned to the ``self.x`` / local name it reads
    (in the class / function); a non-empty list, or ``[node]`` when unknown."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner, wanted = site.scope.class_node, ("self", node.attr)
    elif isinstance(node, ast.Name):
        owner, wanted = site.scope.function_node, (None, node.id)
    else:
        return [node]
    values: list[ast.expr] = []
    for item in ast.walk(owner) if owner is not None else ():
        if isinstance(item, ast.AugAssign | ast.AnnAssign | ast.For | ast.arg):
            if _names(getattr(item, "target", None)) == wanted or (
                isinstance(item, ast.arg) and wanted == (None, item.arg)
            ):
                return [node]
        if isinstance(item, ast.Assign):
            for target in item.targets:
                if _names(target) == wanted:
                    values.append(item.value)
                elif any(_names(t) == wanted for t in ast.walk(target) if t is not target):
                    return [node]  # unpacked: the value is not known
    return values or [node]


def _names(node: ast.AST | None) -> tuple[str | None, str] | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return (node.value.id, node.attr)
    if isinstance(node, ast.Name):
        return (None, node.id)
    return None


def _initializer(site: CallSite, node: ast.expr) -> tuple[str, str, str | None]:
    """(shape text, initializer text, dtype text or None) for an initial value."""
    module = site.module
    literal = module.literal(node)
    if isinstance(literal, (bool, int, float)) and literal is not NOT_LITERAL:
        if isinstance(literal, bool):
            dtype = '"bool"'
        elif isinstance(literal, int):
            dtype = '"int32"'
        else:
            dtype = None
        if literal == 0:
            init = '"zeros"'
        elif literal == 1:
            init = '"ones"'
        else:
            init = "{name:keras.initializers.Constant}(" + site.text(node) + ")"
        return "()", init, dtype
    if isinstance(node, ast.Call):
        symbol = module.resolve(node.func) or ""
        if symbol in _SHAPED_INITIAL and node.args:
            dtype_node = node.args[1] if len(node.args) > 1 else None
            for keyword in node.keywords:
                if keyword.arg == "dtype":
                    dtype_node = keyword.value
            if any(k.arg not in ("shape", "dtype") for k in node.keywords) or len(node.args) > 2:
                raise ManualPortError("the initial value has arguments add_weight cannot take")
            dtype = '"float64"' if symbol.startswith("np.") else None  # NumPy's default
            if dtype_node is not None:
                named = dtype_name(site, dtype_node)
                dtype = py_literal(named) if named else site.text(dtype_node)
            return _shape_text(site, node.args[0]), _SHAPED_INITIAL[symbol], dtype
        if isinstance(node.func, ast.Call):
            maker = module.resolve(node.func.func) or ""
            shape = node.args[0] if node.args else None
            for keyword in node.keywords:
                if keyword.arg == "shape":
                    shape = keyword.value
            extra = [k.arg for k in node.keywords if k.arg not in ("shape", "dtype")]
            if shape is not None and not extra:
                if maker in _TF_INITIALIZERS:
                    return site.text(shape), _TF_INITIALIZERS[maker], None
                if ".initializers." in maker and maker.startswith(("tf.keras.", "keras.")):
                    return site.text(shape), site.text(node.func), None
    raise ManualPortError(
        "its initial value is not tf.zeros/tf.ones(shape), a number, or a Keras "
        "initializer called with a shape, so add_weight's initializer cannot be derived",
        'self.add_weight(shape=..., initializer="zeros" | keras.initializers.X(), '
        "trainable=...) in build(); assign a computed value with .assign()",
    )


def plan_variable(site: CallSite) -> Rewrite | ManualPortError:
    """``self.w = tf.Variable(...)`` in a layer -> ``self.add_weight`` / ``keras.Variable``,
    only when every other tf.Variable / K.variable of the same layer converts too: one
    left behind would make the converted layer hold fewer weights than the original, in
    another order, so the original's weights (``set_weights``, checkpoints) no longer load."""
    own = _plan_alone(site)
    owner = site.scope.class_node
    if isinstance(own, ManualPortError) or owner is None:
        return own
    refused = site.module.memo(("KM203-refused", id(owner)), lambda: _refused_state(site))
    others = [(line, why) for node_id, line, why in refused if node_id != id(site.node)]
    if not others:
        return own
    lines = ", ".join(str(line) for line, _ in others)
    return ManualPortError(
        f"a layer's state converts all or nothing, and the variable at line {lines} "
        f"cannot be converted ({others[0][1]}); converting only this one would leave the "
        "layer with fewer weights than the original, so its saved weights would not load",
        f"port line {lines} by hand first (see its finding); this one then converts",
    )


def _refused_state(site: CallSite) -> list[tuple[int, int, str]]:
    """(node id, line, reason) of each variable of ``site``'s class that stays alone."""
    refused = []
    for sibling in _layer_variable_sites(site):
        result = _plan_alone(sibling)
        if isinstance(result, ManualPortError):
            refused.append((id(sibling.node), sibling.span.line, result.reason))
    return refused


def _layer_variable_sites(site: CallSite) -> list[CallSite]:
    """Every tf.Variable / K.variable call in the methods of ``site``'s class (a nested
    class's excepted), each as a site of its own, in source order."""
    owner = site.scope.class_node
    module = site.module
    sites = []
    for call in module.nodes_in(owner, ast.Call):
        symbol = module.resolve(call.func)
        if symbol not in VARIABLE_SYMBOLS:
            continue
        function = _enclosing_function(site, call)
        if function is False:
            continue
        scope = replace(site.scope, function_name=getattr(function, "name", None))
        scope.function_node = function
        sites.append(
            replace(
                site,
                node=call,
                span=module.span_of(call),
                scope=scope,
                symbol=symbol,
                args=list(call.args),
                keywords={k.arg: k.value for k in call.keywords if k.arg is not None},
                has_star_args=any(isinstance(a, ast.Starred) for a in call.args)
                or any(k.arg is None for k in call.keywords),
                receiver=None,
            )
        )
    return sites


def _enclosing_function(site: CallSite, node: ast.AST) -> ast.AST | None | bool:
    """The innermost function around ``node`` inside ``site``'s class (None: the class
    body), or False when a nested class owns it."""
    owner = site.scope.class_node
    function = None
    parent = site.module.parent_of(node)
    while parent is not None and parent is not owner:
        if isinstance(parent, ast.ClassDef):
            return False
        if function is None and isinstance(
            parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        ):
            function = parent
        parent = site.module.parent_of(parent)
    return function


def _plan_alone(site: CallSite) -> Rewrite | ManualPortError:
    """The rewrite of one variable, its layer's other variables aside."""
    entry = lookup(site.symbol)
    assert entry is not None
    suggestion = "self.w = self.add_weight(shape=..., initializer=..., trainable=...) in build()"
    try:
        binding = bind(entry, site)
        parent = site.module.parent_of(site.node)
        target_ok = (
            isinstance(parent, ast.Assign)
            and parent.value is site.node
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Attribute)
            and isinstance(parent.targets[0].value, ast.Name)
            and parent.targets[0].value.id == "self"
        )
        if not (target_ok and _state_owner_ok(site)):
            raise ManualPortError(
                "Keras 3 tracks (and saves) only state created with self.add_weight in a "
                "layer's __init__ or build, assigned to an attribute",
                suggestion,
            )
        value_name = "initial_value" if "initial_value" in entry.param_names else "value"
        allowed = {value_name, "trainable", "name", "dtype", "constraint"}
        extra = sorted(set(binding.args) - allowed)
        if extra:
            raise ManualPortError(f"`{extra[0]}=` has no add_weight equivalent", suggestion)
        node = binding.node(value_name)
        if node is None:
            raise ManualPortError("no initial value", suggestion)
        try:
            shape, init, dtype = _initializer(site, node)
        except ManualPortError as underivable:
            return _keras_variable(binding, value_name, underivable.detached())
        if binding.given("dtype"):
            named = dtype_name(site, binding.node("dtype"))
            dtype = py_literal(named) if named else binding.text("dtype")
        if entry.symbol == "K.variable" and not binding.given("dtype"):
            dtype = None  # K.variable casts to floatx, like add_weight's default
        trainable = binding.text("trainable") if binding.given("trainable") else None
        if trainable in (None, "None") and dtype not in (
            None,
            '"float16"',
            '"float32"',
            '"float64"',
            '"bfloat16"',
        ):
            _check_untrained_order(site)
            trainable = "False"  # TF variables of ints are never trained
        items = [("shape", shape), ("initializer", init)]
        items += [(k, v) for k, v in (("dtype", dtype), ("trainable", trainable)) if v]
        for keyword in ("name", "constraint"):
            if binding.given(keyword):
                items.append((keyword, binding.text(keyword)))
        text = "self.add_weight(" + ", ".join(f"{k}={v}" for k, v in items) + ")"
        return Rewrite(EditPlan((ReplaceNode(site.span, text),)), "self.add_weight")
    except ManualPortError as manual:
        manual.suggestion = manual.suggestion or suggestion
        return manual.detached()


_FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16"})
_FLOATX_CALLS = frozenset({"K.floatx", "keras.config.floatx", "keras.backend.floatx"})


def _variable_dtype(binding: Binding) -> str | None:
    """The dtype a keras.Variable must be given to hold what the TF variable held."""
    if binding.given("dtype"):
        node = binding.node("dtype")
        named = dtype_name(binding.site, node)
        if named is not None:
            return named
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            if binding.site.module.resolve(node.func) in _FLOATX_CALLS:
                return "floatx"
        return None
    if binding.entry.symbol == "K.variable":
        return "floatx"
    value = binding.node("initial_value")
    return evident_dtype(binding.site, value) if value is not None else None


def _keras_variable(binding: Binding, value_name: str, underivable: ManualPortError) -> Rewrite:
    """``self.v = tf.Variable(value, ...)`` -> ``self.v = keras.Variable(value, ...)`` when
    add_weight's initializer cannot be derived from the value: a keras.Variable assigned
    to a layer attribute is tracked, trained and saved like an add_weight weight."""
    if binding.given("constraint"):
        raise underivable  # keras.Variable has no constraint; add_weight needs the initializer
    dtype = _variable_dtype(binding)
    if dtype is None:
        raise ManualPortError(
            "its dtype is not written: tf.Variable takes the value's dtype (float64 for a "
            "NumPy float array), keras.Variable on JAX makes such a value float32",
            "self.w = keras.Variable(value, dtype=...) with the dtype written out, or "
            "self.add_weight(shape=..., initializer=...)",
        )
    items = [(None, binding.text(value_name))]
    items.append(
        ("dtype", "{name:keras.config.floatx}()" if dtype == "floatx" else py_literal(dtype))
    )
    trainable = binding.text("trainable") if binding.given("trainable") else None
    if trainable in (None, "None") and dtype not in _FLOAT_DTYPES | {"floatx"}:
        _check_untrained_order(binding.site)
        trainable = "False"  # TF never trains integer or bool variables
    if trainable not in (None, "None"):
        items.append(("trainable", trainable))
    if binding.given("name"):
        name = binding.literal("name")
        if not isinstance(name, str) or "/" in name:
            raise ManualPortError(
                "`name` is not a literal string without '/' (keras.Variable raises on '/')",
                "self.w = keras.Variable(value, dtype=..., name=...) with a plain name",
            )
        items.append(("name", binding.text("name")))
    text = call_text("keras.Variable", items)
    if trainable not in (None, "None"):
        return Rewrite(EditPlan((ReplaceNode(binding.site.span, text),)), "keras.Variable")
    # Keras 2 left the variable out of a frozen layer's trainable weights; a keras.Variable
    # assigned to an attribute stays trainable in a layer frozen before it was made, and
    # the model trains it. add_weight's rule, spelled out: follow the layer's flag.
    site = binding.site
    statement = site.module.parent_of(site.node)
    assert isinstance(statement, ast.Assign)  # plan_variable checked `self.<name> = ...`
    target = site.text(statement.targets[0])
    both = f"{target} = {text}\n{target}.trainable = self.trainable"
    edit = ReplaceNode(site.module.span_of(statement), both, "stmt")
    return Rewrite(EditPlan((edit,)), "keras.Variable")


def _check_untrained_order(site: CallSite) -> None:
    """Refuse an int/bool variable whose `trainable` is not written when its layer has
    other weights: Keras 2 lists it among the trainable weights (TensorFlow never trains
    it), Keras 3 only among the non-trainable ones, so the layer's weight order changes
    and the original's saved weights would load into the wrong variables (or not at all)."""
    owner = site.scope.class_node
    others = [
        call
        for call in (site.module.nodes_in(owner, ast.Call) if owner is not None else ())
        if call is not site.node
        and (
            site.module.resolve(call.func) in VARIABLE_SYMBOLS  # type: ignore[attr-defined]
            or (isinstance(call.func, ast.Attribute) and call.func.attr == "add_weight")  # type: ignore[attr-defined]
        )
    ]
    if others:
        raise ManualPortError(
            "it holds integers or bools and `trainable` is not written: Keras 2 lists it "
            "among the layer's trainable weights, Keras 3 among the non-trainable ones, so "
            "the order of the layer's weights changes and the original's saved weights "
            "would load into the wrong variables",
            "write trainable=False in the original (Keras 2 then lists it where Keras 3 "
            "will), then convert",
        )


class TfVariableInLayer(Rule):
    id = "KM203"
    name = "tf-variable-in-layer"
    summary = "A tf.Variable / K.variable created inside model code."
    rationale = (
        "A tf.Variable is TensorFlow state: JAX and PyTorch cannot use it, and Keras 3 "
        "neither trains nor saves it. Layer state is created with self.add_weight(), which "
        "makes a backend variable that the layer tracks, trains (if trainable) and saves."
    )
    fix_safety = (
        "Rewritten when it is `self.x = tf.Variable(init, ...)` in __init__ or build of a "
        "layer/model/metric. An initial value that is tf.zeros(shape)/tf.ones(shape), a "
        "number, or an initializer called with a shape becomes `self.add_weight` with the "
        "same initial value, trainability, name, dtype and constraint. Any other value "
        "becomes `keras.Variable(value, dtype=...)` (tracked, trained and saved by the "
        "layer like an add_weight weight) when the dtype is known: written in the call, "
        "floatx for K.variable, or evident from the value as TensorFlow types it (number "
        "literals and lists of them, tf.zeros/tf.ones/tf.constant, and +, -, * of such a "
        "value with a number); a name must be a literal without '/'; it then follows "
        "the layer's `trainable` as Keras 2 did (a frozen layer does not train it). "
        "Integer and bool variables get trainable=False (TensorFlow computes no gradient "
        "for them); one with `trainable` unwritten in a layer with other weights is "
        "reported instead (Keras 2 lists it as trainable, so the weight order would "
        "change). A layer's variables convert all or nothing: when one of them stays, "
        "none is rewritten (the converted layer would hold fewer weights, and the "
        "original's saved weights would not load); each is reported with why. In "
        "undecided code (reached from model code and from a tf.data map) it is reported "
        "as a warning, with its Keras 3 form or why there is none, and never rewritten."
    )
    severity = Severity.ERROR
    # undecided code (reached from model code and from a tf.data map) gets a warning
    # and no rewrite: what a model needs there a data pipeline may not take
    contexts = frozenset({Context.MODEL, Context.UNDECIDED})
    call_symbols = VARIABLE_SYMBOLS
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Counter(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.count = tf.Variable(0.0, trainable=False)

                def build(self, input_shape):
                    self.scale = tf.Variable(tf.ones((input_shape[-1],)))

                def call(self, x):
                    return x * self.scale
            """,
            """
            from tensorflow import keras


            class Counter(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.count = self.add_weight(shape=(), initializer="zeros", trainable=False)

                def build(self, input_shape):
                    self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones")

                def call(self, x):
                    return x * self.scale
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras
            from tensorflow.keras import backend as K


            class Lookup(keras.layers.Layer):
                def __init__(self, table, **kwargs):
                    super().__init__(**kwargs)
                    self.table = tf.Variable(table, trainable=False, dtype=tf.float32)
                    self.bias = K.variable(table[0], name="bias")

                def call(self, x):
                    return x * self.table + self.bias
            """,
            """
            from tensorflow import keras


            class Lookup(keras.layers.Layer):
                def __init__(self, table, **kwargs):
                    super().__init__(**kwargs)
                    self.table = keras.Variable(table, dtype="float32", trainable=False)
                    self.bias = keras.Variable(table[0], dtype=keras.config.floatx(), name="bias")
                    self.bias.trainable = self.trainable

                def call(self, x):
                    return x * self.table + self.bias
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Scaled(keras.layers.Layer):
                def build(self, input_shape):
                    self.bias = tf.Variable(tf.ones((4,)) * 1.5, name="bias")
                    self.steps = tf.Variable(tf.constant(3), trainable=False)

                def call(self, x):
                    return x * self.bias
            """,
            """
            import tensorflow as tf
            from tensorflow import keras


            class Scaled(keras.layers.Layer):
                def build(self, input_shape):
                    self.bias = keras.Variable(tf.ones((4,)) * 1.5, dtype="float32", name="bias")
                    self.bias.trainable = self.trainable
                    self.steps = keras.Variable(tf.constant(3), dtype="int32", trainable=False)

                def call(self, x):
                    return x * self.bias
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class AllOrNothing(keras.layers.Layer):
                def build(self, input_shape):
                    self.gain = tf.Variable(tf.ones((4,)), name="gain")
                    self.table = tf.Variable(self.make_table(input_shape))
            """
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Noisy(keras.layers.Layer):
                def call(self, x):
                    state = tf.Variable(x)
                    return state * 2.0
            """
        ),
        Clean(
            """
            import tensorflow as tf


            step = tf.Variable(0, trainable=False)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        result = plan_variable(site)
        if site.context is Context.UNDECIDED:  # the analysis says why (both callers)
            if isinstance(result, Rewrite):
                how = f"its Keras 3 form is `{result.target}(...)`"
            else:
                how = f"{result.reason}. Instead: {result.suggestion}"
            yield Report(
                site,
                f"`{site.symbol}` is TensorFlow state, which Keras 3 does not track where a "
                f"model runs this code: {how}",
                severity=Severity.WARNING,
            )
        elif isinstance(result, Rewrite):
            yield Report(
                site,
                f"`{site.symbol}` in a layer is TensorFlow state: create it with "
                f"`{result.target}(...)`, which the layer tracks and saves",
                fix=result.plan,
            )
        else:
            yield Report(
                site,
                f"`{site.symbol}` in model code is TensorFlow state that Keras 3 does not "
                f"track: {result.reason}. Instead: {result.suggestion}",
            )
