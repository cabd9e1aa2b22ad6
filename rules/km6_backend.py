"""KM6xx: code that is backend-specific by structure. Reported; the one rewrite is
dropping ``@tf.function`` from a layer's method where that is exact (KM602).

A hand-written ``GradientTape`` loop, a ``tf.function``, a ``tf.distribute`` strategy
or a ``tf.py_function`` is TensorFlow by design: there is no call-for-call rewrite to
JAX or PyTorch. What matters is *where* it is. In a data pipeline or a TF-only
training script it is fine (info at most); inside a layer's ``call`` it breaks the
model on the other backends (error). Each finding names the portable alternative.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.model import CallSite, Context, EditPlan, Node, ReferenceSite, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.km4_saving import own_nodes

_TRAINING_LOOP_ALTERNATIVE = (
    "use `model.fit` (override `train_step` for custom logic), or keep this loop in a "
    "TensorFlow-only module"
)


class GradientTapeLoop(Rule):
    id = "KM601"
    name = "gradient-tape-loop"
    summary = "`tf.GradientTape`: a hand-written training step that only runs on TensorFlow."
    rationale = (
        "Gradients are backend-specific: JAX differentiates pure functions "
        "(`jax.value_and_grad` over `model.stateless_call`), PyTorch uses `loss.backward()`. "
        "`model.fit` does the right thing on every backend; custom logic goes in a "
        "`train_step` override (one per backend, see the keras.io guides 'Customizing "
        "what happens in fit()')."
    )
    fix_safety = "Never rewritten: a training loop has no mechanical translation."
    severity = Severity.INFO
    call_symbols = frozenset({"tf.GradientTape", "tf.autodiff.GradientTape"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            def train_step(model, optimizer, loss_fn, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            class Custom(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(y=y, y_pred=self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}
            """
        ),
        Clean(
            """
            import keras

            def train(model, dataset):
                model.compile(optimizer="adam", loss="mse")
                model.fit(dataset, epochs=3)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context == Context.MODEL:
            yield Report(
                site,
                "a `train_step` built on `tf.GradientTape` runs only on the TensorFlow "
                "backend: write one per backend (JAX: `stateless_call` + "
                "`jax.value_and_grad`; PyTorch: `loss.backward()`) or keep the model TF-only",
                severity=Severity.WARNING,
            )
            return
        yield Report(
            site,
            f"custom training loop on `tf.GradientTape` is TensorFlow-only: "
            f"{_TRAINING_LOOP_ALTERNATIVE}",
        )


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
    for node in ast.walk(function):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
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
                f"(JAX: `jax.jit`, PyTorch: `torch.compile`): {_TRAINING_LOOP_ALTERNATIVE}",
                severity=Severity.INFO,
                span=span,
            )


class TfDistribute(Rule):
    id = "KM603"
    name = "tf-distribute"
    summary = "`tf.distribute` strategy or replica API: TensorFlow-only distribution."
    rationale = (
        "`tf.distribute` strategies only drive the TensorFlow backend. Keras 3's "
        "`keras.distribution` (`DataParallel`, `ModelParallel` with a `DeviceMesh` and "
        "`LayoutMap`) distributes `fit` on JAX; on PyTorch use `torch.distributed` (DDP). "
        "Model code that asks for the replica context breaks on the other backends."
    )
    fix_safety = "Never rewritten: the distribution setup is a design decision per backend."
    severity = Severity.WARNING
    call_prefixes = ("tf.distribute.", "tf.compat.v1.distribute.")
    examples = [
        Flagged(
            """
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = build_model()
            """
        ),
        Clean(
            """
            import keras

            keras.distribution.set_distribution(keras.distribution.DataParallel())
            model = build_model()
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        name = site.symbol.rsplit(".", 1)[-1]
        if site.context == Context.MODEL:
            yield Report(
                site,
                f"`{site.symbol}` in model code only works on TensorFlow: keep replica logic "
                "out of layers (Keras 3 aggregates metrics and variables itself)",
                severity=Severity.ERROR,
            )
        elif name.endswith("Strategy"):
            yield Report(
                site,
                f"`{site.symbol}` distributes only on TensorFlow: on JAX use "
                "`keras.distribution.set_distribution(keras.distribution.DataParallel())` "
                "(or `ModelParallel`), on PyTorch `torch.distributed`",
            )
        else:
            yield Report(
                site,
                f"`{site.symbol}` is part of TensorFlow's distribution API (TensorFlow-only; "
                "see `keras.distribution` for JAX)",
                severity=Severity.INFO,
            )


class TfPyFunction(Rule):
    id = "KM604"
    name = "tf-py-function"
    summary = "`tf.py_function` / `tf.numpy_function` outside a data pipeline."
    rationale = (
        "These wrap Python code as a TensorFlow op: fine inside a `tf.data` pipeline, but "
        "model code using them cannot be traced by JAX or PyTorch (nor exported). Inside a "
        "model, express the computation with `keras.ops`; otherwise move it to the input "
        "pipeline."
    )
    fix_safety = "Never rewritten: the wrapped Python function must be ported by hand."
    severity = Severity.ERROR
    call_symbols = frozenset(
        {"tf.py_function", "tf.numpy_function", "tf.py_func", "tf.compat.v1.py_func"}
    )
    examples = [
        Flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Median(tf.keras.layers.Layer):
                def call(self, x):
                    return tf.numpy_function(lambda a: np.median(a, axis=-1), [x], tf.float32)
            """
        ),
        Clean(
            """
            import tensorflow as tf

            def load(path):
                return tf.py_function(read_image, [path], tf.float32)

            dataset = tf.data.Dataset.list_files("*.png").map(load)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context == Context.DATA:
            return
        if site.context == Context.MODEL:
            yield Report(
                site,
                f"`{site.symbol}` in model code cannot run on JAX or PyTorch: rewrite the "
                "wrapped function with `keras.ops`, or do it in the input pipeline",
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` runs Python as a TensorFlow op: fine in a `tf.data` "
            "pipeline, TensorFlow-only elsewhere",
            severity=Severity.INFO,
        )


class EagerOnlyInModel(Rule):
    id = "KM605"
    name = "eager-only-in-model"
    summary = "`tf.data` or `.numpy()` inside model code (`call`, losses, metrics)."
    rationale = (
        "Model code runs on symbolic tensors while Keras builds the model and inside a "
        "compiled step during `fit`, on every backend: `.numpy()` needs a concrete eager "
        "tensor and `tf.data` builds input pipelines, not layer computations. Both belong "
        "outside the model: feed the model a dataset, and keep values as tensors with "
        "`keras.ops` inside it."
    )
    fix_safety = "Never rewritten: the computation has to move out of the model."
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL})
    call_prefixes = ("tf.data.",)
    method_names = frozenset({"numpy"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Threshold(tf.keras.layers.Layer):
                def call(self, x):
                    if x.numpy().max() > 1:
                        x = x / 255.0
                    return x
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            class Windows(tf.keras.layers.Layer):
                def call(self, x):
                    return tf.data.Dataset.from_tensor_slices(x).batch(4)
            """
        ),
        Clean(
            """
            import tensorflow as tf

            def make_dataset(images):
                return tf.data.Dataset.from_tensor_slices(images).batch(32)

            def report(model, x):
                print(model(x).numpy().mean())
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.symbol == "<method>.numpy":
            if site.args or site.keywords:
                return
            yield Report(
                site,
                "`.numpy()` in model code fails on symbolic tensors and inside compiled "
                "steps on every backend: keep the value a tensor and use `keras.ops`",
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` inside model code: `tf.data` builds input pipelines; build "
            "the dataset outside the model and pass it to `fit`",
        )


class TfSummary(Rule):
    id = "KM606"
    name = "tf-summary"
    summary = "`tf.summary` logging: TensorFlow-only; inside a model it breaks other backends."
    rationale = (
        "`tf.summary` writes TensorBoard events through TensorFlow ops. With `model.fit`, "
        "`keras.callbacks.TensorBoard` logs losses and metrics on every backend (it needs "
        "TensorFlow installed only to write files). Values computed inside a model belong "
        "in a metric (`keras.metrics.Mean` updated in `call`/`train_step`)."
    )
    fix_safety = "Never rewritten: logging is restructured around callbacks and metrics."
    severity = Severity.INFO
    call_prefixes = ("tf.summary.", "tf.compat.v1.summary.")
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Probe(tf.keras.layers.Layer):
                def call(self, x):
                    tf.summary.histogram("activations", x)
                    return x
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            writer = tf.summary.create_file_writer("logs")
            """
        ),
        Clean(
            """
            import keras

            callbacks = [keras.callbacks.TensorBoard("logs")]
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context == Context.DATA:
            return
        if site.context == Context.MODEL:
            yield Report(
                site,
                f"`{site.symbol}` inside model code runs only on TensorFlow: track the value "
                "with a `keras.metrics.Mean` and log it with `keras.callbacks.TensorBoard`",
                severity=Severity.ERROR,
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` is TensorFlow-only logging: with `model.fit`, "
            "`keras.callbacks.TensorBoard` works on every backend",
        )
