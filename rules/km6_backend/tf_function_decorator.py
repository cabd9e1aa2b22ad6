"""KM602: `@tf.function` on model code or a training step; dropped where that is exact."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import Context, EditPlan, Node, ReferenceSite, ReplaceNode, Severity
from kmigrate.rules.base import Claim, Clean, Flagged, Report, Rule
from kmigrate.rules.common.scopes import own_nodes
from kmigrate.rules.common.training_loop import TRAINING_LOOP_ALTERNATIVE
from kmigrate.rules.context_spec import CONTEXT_SPEC


def _decorated_function(site: ReferenceSite) -> tuple[ast.AST, ast.expr] | None:
    """The function whose decorator is this reference (``@tf.function`` or
    ``@tf.function(...)``), searched in the scope the decorator is evaluated in."""
    scope = site.scope.function_node or site.scope.class_node or site.module.tree
    body = scope.body if isinstance(getattr(scope, "body", None), list) else []
    candidates = list(own_nodes(scope)) if scope is site.scope.function_node else body
    for node in candidates:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if target is site.node:
                    return node, decorator
    return None


def _decorator_symbol(site: Node, decorator: ast.expr) -> tuple[str, bool]:
    """(canonical symbol, called with arguments) of a decorator expression."""
    if isinstance(decorator, ast.Call):
        symbol = site.module.resolve(decorator.func) or ""
        return symbol, bool(decorator.args or decorator.keywords)
    return site.module.resolve(decorator) or "", False


def _uses_gradient_tape(site: Node, function: ast.AST) -> bool:
    for node in site.module.nodes_in(function, ast.With, ast.AsyncWith):
        for item in node.items:  # type: ignore[attr-defined]
            expr = item.context_expr
            target = expr.func if isinstance(expr, ast.Call) else expr
            symbol = site.module.resolve(target) if isinstance(target, ast.expr) else None
            if symbol and symbol.startswith(CONTEXT_SPEC.training_symbols):
                return True
    return False


def _python_only_test(test: ast.expr) -> bool:
    """An ``if`` test that is a Python value under Keras 3 (``training``, ``self.flag``,
    ``mask is None``), so the branch needs no autograph."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _python_only_test(test.operand)
    if isinstance(test, ast.Name):
        return test.id in ("training", "mask")
    if isinstance(test, ast.Attribute):
        return isinstance(test.value, ast.Name) and test.value.id == "self"
    if isinstance(test, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops)
    return False


def _python_side_effect(function: ast.AST) -> ast.stmt | ast.expr | None:
    """The first statement whose Python effect tracing runs once and eager code on every
    call: an assignment to an attribute or item, an augmented assignment, a ``print``,
    a ``global``/``nonlocal``."""
    for node in ast.walk(function):
        if isinstance(node, (ast.AugAssign, ast.Global, ast.Nonlocal)):
            return node
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, (ast.Attribute, ast.Subscript)):
                        return node
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "print"
        ):
            return node
    return None


def _tensor_control_flow(function: ast.AST) -> ast.AST | None:
    """The first statement whose control flow may depend on a tensor value."""
    for node in ast.walk(function):
        if isinstance(node, (ast.If, ast.IfExp)) and not _python_only_test(node.test):
            return node
        if isinstance(node, (ast.While, ast.Assert)):
            return node
        if isinstance(node, ast.For) and not (
            isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Name)
            and node.iter.func.id in ("range", "enumerate", "zip")
        ):
            return node
    return None


class TfFunctionDecorator(Rule):
    id = "KM602"
    name = "tf-function-decorator"
    summary = "`@tf.function` on model code (`call`, `train_step`) or a training step."
    rationale = (
        "Keras 3 compiles the train/predict step itself on every backend (`jit_compile`), "
        "so `@tf.function` on a layer's `call` is redundant on TensorFlow and wrong on "
        "JAX/PyTorch, where it would hand backend arrays to TensorFlow. Keras 2 ran `call` "
        "through AutoGraph, Keras 3 does not: Python `if`/`while` on tensor values must "
        "become `keras.ops.cond` / `ops.while_loop` / `ops.where` before the decorator goes."
    )
    fix_safety = (
        "The decorator is removed when it is a bare `@tf.function` on a method of a "
        "layer/model/metric whose body has no tensor-dependent control flow (`if`/`while`/"
        "`for` on tensor values, `assert`) and no Python side effects that tracing runs "
        "once (assignments to attributes or items, `+=`, `print`, `global`): the method "
        "then computes the same numbers eagerly, and Keras 3 compiles the step itself. "
        "Otherwise reported: with tensor control flow the body must change first, "
        "`tf.function(...)` arguments become `jit_compile=` in `compile`, and a training "
        "step is TensorFlow-only."
    )
    severity = Severity.ERROR
    reference_prefixes = ("tf.function",)

    @classmethod
    def claims(cls) -> tuple[Claim, ...]:
        """`tf.function`, called too: TensorFlow's compiler, which this rule knows (a
        decorator Keras 3 makes redundant), not an op with a missing Keras 3 form."""
        return (Claim(prefixes=("tf.function",)),)

    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Gate(tf.keras.layers.Layer):
                @tf.function
                def call(self, x, training=None):
                    if training:
                        x = x * 0.5
                    return x
            """,
            """
            import tensorflow as tf

            class Gate(tf.keras.layers.Layer):
                def call(self, x, training=None):
                    if training:
                        x = x * 0.5
                    return x
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            @tf.function
            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                optimizer.apply_gradients(
                    zip(tape.gradient(loss, model.trainable_weights), model.trainable_weights)
                )
            """
        ),
        Clean(
            """
            import tensorflow as tf

            @tf.function
            def parse(record):  # a tf.data parsing function stays TensorFlow
                return tf.io.parse_tensor(record, tf.float32)

            dataset = tf.data.TFRecordDataset("x.tfrecord").map(parse)
            """
        ),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        if site.symbol != "tf.function":
            return
        found = _decorated_function(site)
        if found is None:
            return  # tf.function(fn) called as a function: a TF-only graph, not a decorator
        function, decorator = found
        span = site.module.span_of(decorator)
        in_class = site.scope.class_node is not None and site.scope.function_name is None
        if in_class and site.context == Context.MODEL:
            control = _tensor_control_flow(function)
            effect = _python_side_effect(function)
            fix = None
            if control is None and not _decorator_symbol(site, decorator)[1] and effect is None:
                advice = "drop it: this body has no tensor-dependent control flow, so it is exact"
                fix = EditPlan((ReplaceNode(span, "", kind="decorator"),))
            elif control is None and effect is not None:
                advice = (
                    f"drop it after checking line {effect.lineno}: tracing ran this Python "
                    "side effect once, an undecorated method runs it on every call"
                )
            elif control is not None:
                advice = (
                    f"replace the Python control flow on line {control.lineno} with "
                    "`keras.ops.cond` / `ops.while_loop` / `ops.where`, then drop it"
                )
            else:
                advice = "drop it and pass `jit_compile=` to `model.compile` instead"
            yield Report(
                site,
                f"`@tf.function` on `{site.scope.class_name}.{function.name}` breaks JAX and "
                f"PyTorch (Keras 3 compiles the step itself): {advice}",
                span=span,
                fix=fix,
            )
            return
        if _uses_gradient_tape(site, function):
            yield Report(
                site,
                f"`@tf.function` training step `{function.name}` is TensorFlow-only "
                f"(JAX: `jax.jit`, PyTorch: `torch.compile`): {TRAINING_LOOP_ALTERNATIVE}",
                severity=Severity.INFO,
                span=span,
            )
