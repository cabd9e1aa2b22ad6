"""KM5xx: Keras 2 APIs that changed or vanished in Keras 3.

Signatures and behaviours are taken from the installed sources: Keras 3.15
(``keras/src/layers/layer.py``, ``keras/src/optimizers/base_optimizer.py``,
``keras/src/trainers/trainer.py``) and TF-Keras 2.21 (``tf_keras/src/engine``,
``tf_keras/src/optimizers``, ``tf_keras/src/backend.py``). Each rule rewrites only
what maps exactly and says why when it does not.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

from kmigrate.model import (
    ArgOut,
    CallEdit,
    CallSite,
    Context,
    EditPlan,
    Node,
    ReferenceSite,
    ReplaceNode,
    Scope,
    Severity,
    Span,
)
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.km4_saving import own_nodes, single_assignment

_NAMESPACES = ("tf.keras.", "keras.", "tf_keras.")


def _in_namespaces(*paths: str) -> frozenset[str]:
    return frozenset(ns + path for ns in _NAMESPACES for path in paths)


def _keywords_in_order(site: CallSite) -> list[str]:
    return [k.arg for k in site.node.keywords if k.arg is not None]  # type: ignore[attr-defined]


def _is_stringish(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and _is_stringish(node.left)


# ---------------------------------------------------------------------------
# add_weight
# ---------------------------------------------------------------------------

# tf_keras/src/engine/base_layer.py Layer.add_weight, positional order.
KERAS2_ADD_WEIGHT = (
    "name",
    "shape",
    "dtype",
    "initializer",
    "regularizer",
    "trainable",
    "constraint",
    "use_resource",
    "synchronization",
    "aggregation",
)
# keras/src/layers/layer.py Layer.add_weight keywords.
KERAS3_ADD_WEIGHT = frozenset(
    {
        "shape",
        "initializer",
        "dtype",
        "trainable",
        "autocast",
        "regularizer",
        "constraint",
        "aggregation",
        "overwrite_with_gradient",
        "name",
    }
)
_ADD_WEIGHT_DROPPED = frozenset({"use_resource", "partitioner"})  # no effect in TF2 Keras 2
_ADD_WEIGHT_MANUAL = {
    "getter": "custom variable getters do not exist in Keras 3",
    "caching_device": "`caching_device` does not exist in Keras 3",
    "collections": "variable collections do not exist in Keras 3",
    "layout": "use `keras.distribution.LayoutMap` for layouts",
    "experimental_enable_variable_lifting": "no equivalent in Keras 3",
}
_AGGREGATIONS = {
    "NONE": '"none"',
    "SUM": '"sum"',
    "MEAN": '"mean"',
    "ONLY_FIRST_REPLICA": '"only_first_replica"',
}


class AddWeightArguments(Rule):
    id = "KM501"
    name = "add-weight-arguments"
    summary = "`add_weight` called the Keras 2 way: `name` first, or TF-only arguments."
    rationale = (
        "Keras 2's `add_weight(name, shape, dtype, initializer, ...)` takes `name` first; "
        "Keras 3's takes `shape, initializer, dtype` positionally and `name` only by "
        "keyword (`add_weight('kernel', ...)` raises). `use_resource=`, "
        "`synchronization=` and `tf.VariableAggregation` values are TensorFlow-only."
    )
    fix_safety = (
        "Positional arguments become keywords by their Keras 2 names, so nothing moves. "
        "`use_resource=` (no effect in TF 2) is dropped, `experimental_autocast=` becomes "
        "`autocast=`, `trainable=None` (Keras 2: True) becomes `True`, and "
        "`tf.VariableAggregation.X` becomes its Keras 3 string. Not offered for `getter=`, "
        "`caching_device=`, a non-default `synchronization=`, or when the first positional "
        "argument may be a Keras 3 `shape`."
    )
    severity = Severity.ERROR
    method_names = frozenset({"add_weight"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.scale = self.add_weight(
                        "scale", (input_shape[-1],), use_resource=True, initializer="ones"
                    )
            """,
            """
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.scale = self.add_weight(
                        name="scale", shape=(input_shape[-1],), initializer="ones"
                    )
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Counter(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.count = self.add_weight(
                        name="count",
                        shape=(),
                        trainable=False,
                        aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
                    )
            """,
            """
            import tensorflow as tf

            class Counter(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.count = self.add_weight(
                        name="count",
                        shape=(),
                        trainable=False,
                        aggregation="only_first_replica",
                    )
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Odd(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.w = self.add_weight("w", (2,), getter=my_getter)
            """
        ),
        Clean(
            """
            import keras

            class Scale(keras.layers.Layer):
                def build(self, input_shape):
                    self.scale = self.add_weight((input_shape[-1],), "ones", name="scale")
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.has_star_args:
            return
        first = site.args[0] if site.args else None
        keras2_keywords = set(site.keywords) - KERAS3_ADD_WEIGHT
        aggregation = site.keywords.get("aggregation")
        tf_aggregation = aggregation is not None and (
            (site.module.resolve(aggregation) or "").startswith("tf.VariableAggregation.")
        )
        trainable_none = site.literal(None, "trainable") is None
        if first is not None and not _is_stringish(first):
            if "shape" not in site.keywords and not _name_like(first):
                if keras2_keywords or tf_aggregation or trainable_none:
                    yield from self._plan(site, keras2=False)
                return  # Keras 3 style add_weight(shape, initializer, dtype)
        if first is None and not (keras2_keywords or tf_aggregation or trainable_none):
            return
        yield from self._plan(site, keras2=first is not None)

    def _plan(self, site: CallSite, keras2: bool) -> Iterator[Report]:
        args: list[ArgOut] = []
        problems: list[str] = []
        if keras2:
            if len(site.args) > len(KERAS2_ADD_WEIGHT):
                problems.append("too many positional arguments")
            for index, _ in enumerate(site.args[: len(KERAS2_ADD_WEIGHT)]):
                args.append(ArgOut(index, keyword=KERAS2_ADD_WEIGHT[index]))
        else:
            args.extend(ArgOut(i) for i in range(len(site.args)))
        for keyword in _keywords_in_order(site):
            args.append(ArgOut(keyword, keyword=keyword))
        fixed: list[ArgOut] = []
        for out in args:
            name = out.keyword or ""
            node = site.arg(out.source if isinstance(out.source, int) else None, out.source)
            if name in _ADD_WEIGHT_DROPPED:
                continue
            if name in _ADD_WEIGHT_MANUAL:
                problems.append(_ADD_WEIGHT_MANUAL[name])
            elif name == "experimental_autocast":
                out = ArgOut(out.source, keyword="autocast")
            elif name == "synchronization":
                if (site.module.resolve(node) or "") != "tf.VariableSynchronization.AUTO":
                    problems.append("Keras 3 has no `synchronization=`; use `aggregation=`")
                continue
            elif name == "aggregation" and node is not None:
                symbol = site.module.resolve(node) or ""
                if symbol.startswith("tf.VariableAggregation."):
                    value = _AGGREGATIONS.get(symbol.rsplit(".", 1)[1])
                    if value is None:
                        problems.append(f"`{symbol}` has no Keras 3 equivalent")
                    out = ArgOut(out.source, keyword="aggregation", value=value)
            elif name == "trainable" and node is not None and site.module.literal(node) is None:
                out = ArgOut(out.source, keyword="trainable", value="True")
            elif name not in KERAS3_ADD_WEIGHT:
                problems.append(f"`{name}=` does not exist in Keras 3")
            fixed.append(out)
        what = "takes `name` first in Keras 2 and `shape` first in Keras 3" if keras2 else ""
        what = what or "uses Keras 2 arguments Keras 3 does not accept"
        if problems:
            yield Report(site, f"`add_weight` {what} (manual: {'; '.join(problems)})")
            return
        plan = EditPlan((CallEdit(site.span, args=tuple(fixed)),), "keywords for add_weight")
        yield Report(site, f"`add_weight` {what}: pass the arguments by keyword", fix=plan)


def _name_like(node: ast.expr) -> bool:
    """A variable that holds a weight name (Keras 2 positional ``name``)."""
    text = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return "name" in text.lower()


# ---------------------------------------------------------------------------
# Optimizers
# ---------------------------------------------------------------------------

OPTIMIZERS = (
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Ftrl",
    "Lion",
    "Nadam",
    "RMSprop",
    "SGD",
)
# tf_keras/src/optimizers/legacy/*.py, positional order (without **kwargs).
LEGACY_OPTIMIZERS: dict[str, tuple[str, ...]] = {
    "Adadelta": ("learning_rate", "rho", "epsilon", "name"),
    "Adagrad": ("learning_rate", "initial_accumulator_value", "epsilon", "name"),
    "Adam": ("learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad", "name"),
    "Adamax": ("learning_rate", "beta_1", "beta_2", "epsilon", "name"),
    "Ftrl": (
        "learning_rate",
        "learning_rate_power",
        "initial_accumulator_value",
        "l1_regularization_strength",
        "l2_regularization_strength",
        "name",
        "l2_shrinkage_regularization_strength",
        "beta",
    ),
    "Nadam": ("learning_rate", "beta_1", "beta_2", "epsilon", "name"),
    "RMSprop": ("learning_rate", "rho", "momentum", "epsilon", "centered", "name"),
    "SGD": ("learning_rate", "momentum", "nesterov", "name"),
}
# keras/src/optimizers/*.py: how many leading positional parameters match the legacy
# ones exactly (after that Keras 3 puts `weight_decay`, legacy puts `name`).
KERAS3_SHARED_PREFIX = {
    "Adadelta": 3,
    "Adagrad": 3,
    "Adam": 5,
    "Adamax": 4,
    "Ftrl": 5,
    "Nadam": 4,
    "RMSprop": 5,
    "SGD": 3,
}
_LEGACY_KWARGS = frozenset({"clipnorm", "clipvalue", "global_clipnorm", "lr", "decay"})
CURRENT_OPTIMIZERS = _in_namespaces(
    *(f"optimizers.{n}" for n in OPTIMIZERS),
    *(f"optimizers.experimental.{n}" for n in OPTIMIZERS),
)
LEGACY_OPTIMIZER_SYMBOLS = _in_namespaces(*(f"optimizers.legacy.{n}" for n in LEGACY_OPTIMIZERS))


def _optimizer_name(symbol: str) -> str:
    return symbol.rsplit(".", 1)[-1]


def _decay_suggestion(site: CallSite) -> str:
    decay = site.keywords["decay"]
    lr = site.arg(0, "learning_rate") or site.keywords.get("lr")
    lr_text = site.text(lr) if lr is not None else "0.001"
    return (
        "learning_rate=keras.optimizers.schedules.InverseTimeDecay("
        f"{lr_text}, decay_steps=1, decay_rate={site.text(decay)})"
    )


def _zero_decay(site: CallSite) -> bool:
    return site.literal(None, "decay") in (0, 0.0)


class OptimizerKeras2Arguments(Rule):
    id = "KM502"
    name = "optimizer-keras2-arguments"
    summary = "Optimizer built with `lr=` or `jit_compile=`; Keras 3 rejects both."
    rationale = (
        "Keras 3 optimizers raise `ValueError: Argument(s) not recognized` for `lr=` and "
        "`jit_compile=`. Note that TF-Keras >= 2.11 (non-legacy optimizers) silently "
        "ignored `lr=` and trained with the default rate: the rewrite restores the rate "
        "the code asks for, as on Keras <= 2.10."
    )
    fix_safety = (
        "`lr=` becomes `learning_rate=` (not offered when both are given); `jit_compile=` "
        "is dropped (Keras 3 compiles the whole train step: `model.compile(jit_compile=)`)."
    )
    severity = Severity.ERROR
    call_symbols = CURRENT_OPTIMIZERS
    examples = [
        Flagged(
            """
            from tensorflow import keras

            optimizer = keras.optimizers.Adam(lr=3e-4, jit_compile=False)
            """,
            """
            from tensorflow import keras

            optimizer = keras.optimizers.Adam(learning_rate=3e-4)
            """,
        ),
        Flagged(
            """
            import keras

            optimizer = keras.optimizers.SGD(0.1, lr=0.2)
            """
        ),
        Clean(
            """
            import keras

            optimizer = keras.optimizers.Adam(learning_rate=3e-4)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if not {"lr", "jit_compile"} & set(site.keywords):
            return
        if site.has_star_args:
            yield Report(site, "`lr=`/`jit_compile=` are not Keras 3 arguments (manual: **kwargs)")
            return
        if "lr" in site.keywords and site.arg(0, "learning_rate") is not None:
            yield Report(site, "both `lr=` and `learning_rate=` given (manual: keep one)")
            return
        args = [ArgOut(i) for i in range(len(site.args))]
        for keyword in _keywords_in_order(site):
            if keyword == "jit_compile":
                continue
            args.append(ArgOut(keyword, keyword="learning_rate" if keyword == "lr" else keyword))
        plan = EditPlan((CallEdit(site.span, args=tuple(args)),), "learning_rate=")
        wrong = " and ".join(f"`{k}=`" for k in ("lr", "jit_compile") if k in site.keywords)
        verb = "raise" if " and " in wrong else "raises"
        yield Report(site, f"{wrong} {verb} in Keras 3 optimizers", fix=plan)


class OptimizerDecay(Rule):
    id = "KM503"
    name = "optimizer-decay"
    summary = "Optimizer `decay=`: Keras 3 ignores it (with a warning) and trains differently."
    rationale = (
        "Keras 2 optimizers applied `lr / (1 + decay * iterations)`. Keras 3 drops the "
        "argument with only a warning, so training silently uses a constant rate. The same "
        "schedule is `keras.optimizers.schedules.InverseTimeDecay(lr, decay_steps=1, "
        "decay_rate=decay)`."
    )
    fix_safety = (
        "`decay=0` is dropped (exact). Any other value is reported with the equivalent "
        "`InverseTimeDecay` schedule to paste in; kmigrate does not rewrite learning-rate "
        "logic on its own."
    )
    severity = Severity.ERROR
    call_symbols = CURRENT_OPTIMIZERS | LEGACY_OPTIMIZER_SYMBOLS
    examples = [
        Flagged(
            """
            from tensorflow import keras

            optimizer = keras.optimizers.SGD(learning_rate=0.1, decay=1e-4)
            """
        ),
        Flagged(
            """
            import keras

            optimizer = keras.optimizers.SGD(learning_rate=0.1, decay=0.0)
            """,
            """
            import keras

            optimizer = keras.optimizers.SGD(learning_rate=0.1)
            """,
        ),
        Clean(
            """
            import keras

            schedule = keras.optimizers.schedules.InverseTimeDecay(0.1, 1, 1e-4)
            optimizer = keras.optimizers.SGD(learning_rate=schedule)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if "decay" not in site.keywords:
            return
        if _zero_decay(site) and not site.has_star_args:
            args = [ArgOut(i) for i in range(len(site.args))]
            args += [ArgOut(k, keyword=k) for k in _keywords_in_order(site) if k != "decay"]
            plan = EditPlan((CallEdit(site.span, args=tuple(args)),), "drop decay=0")
            yield Report(site, "`decay=0` does nothing; Keras 3 has no `decay=`", fix=plan)
            return
        yield Report(
            site,
            "Keras 3 ignores `decay=` and would train with a constant learning rate "
            f"(manual: use `{_decay_suggestion(site)}`)",
        )


class LegacyOptimizer(Rule):
    id = "KM504"
    name = "legacy-optimizer"
    summary = "`keras.optimizers.legacy.X`: gone in Keras 3 (constructing one raises)."
    rationale = (
        "Keras 3 keeps `keras.optimizers.legacy` only to raise an ImportError that points "
        "to TF-Keras. The current optimizers implement the same algorithms with the same "
        "defaults; their signatures differ after the shared leading arguments (Keras 3 has "
        "`weight_decay` where the legacy ones had `name`)."
    )
    fix_safety = (
        "The class becomes `keras.optimizers.X`; positional arguments past the shared "
        "prefix become keywords by their legacy names, `lr=` becomes `learning_rate=`. Not "
        "offered with `decay=` (Keras 3 would ignore it: see KM503) or unknown keywords. "
        "Subclasses of legacy optimizers are reported: Keras 3 optimizers implement "
        "`build`/`update_step` instead of `_resource_apply_dense`."
    )
    severity = Severity.ERROR
    call_symbols = LEGACY_OPTIMIZER_SYMBOLS
    reference_prefixes = tuple(ns + "optimizers.legacy" for ns in _NAMESPACES)
    examples = [
        Flagged(
            """
            import tensorflow as tf

            optimizer = tf.keras.optimizers.legacy.SGD(0.01, 0.9, True, "sgd", lr=0.02)
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            optimizer = tf.keras.optimizers.legacy.SGD(0.01, 0.9, True, "sgd", clipnorm=1.0)
            """,
            """
            import keras

            optimizer = keras.optimizers.SGD(0.01, 0.9, True, name="sgd", clipnorm=1.0)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class MyOptimizer(tf.keras.optimizers.legacy.Optimizer):
                pass
            """
        ),
        Clean(
            """
            import keras

            optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
            """
        ),
    ]

    def __init__(self) -> None:
        # Callee nodes of the module being walked (references to them are the calls).
        self._module: object | None = None
        self._callees: set[int] = set()

    def _callees_of(self, module: object) -> set[int]:
        if module is not self._module:
            self._module, self._callees = module, set()
        return self._callees

    def check_call(self, site: CallSite) -> Iterable[Report]:
        self._callees_of(site.module).add(id(site.node.func))  # type: ignore[attr-defined]
        name = _optimizer_name(site.symbol)
        params = LEGACY_OPTIMIZERS[name]
        problems = []
        if site.has_star_args:
            problems.append("*args/**kwargs")
        if len(site.args) > len(params):
            problems.append("too many positional arguments")
        if "decay" in site.keywords and not _zero_decay(site):
            problems.append(f"Keras 3 ignores `decay=`: use `{_decay_suggestion(site)}`")
        if "lr" in site.keywords and site.arg(0, "learning_rate") is not None:
            problems.append("both `lr=` and `learning_rate=` given")
        unknown = set(site.keywords) - set(params) - _LEGACY_KWARGS
        if unknown:
            problems.append(f"no Keras 3 equivalent for `{'=`, `'.join(sorted(unknown))}=`")
        target = f"keras.optimizers.{name}"
        if problems:
            yield Report(site, f"use `{target}` (manual: {'; '.join(problems)})")
            return
        shared = KERAS3_SHARED_PREFIX[name]
        args = [
            ArgOut(i) if i < shared else ArgOut(i, keyword=params[i]) for i in range(len(site.args))
        ]
        for keyword in _keywords_in_order(site):
            if keyword == "decay":
                continue
            args.append(ArgOut(keyword, keyword="learning_rate" if keyword == "lr" else keyword))
        plan = EditPlan((CallEdit(site.span, callee=target, args=tuple(args)),), target)
        yield Report(site, f"legacy optimizers are gone in Keras 3: use `{target}`", fix=plan)

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        if id(site.node) in self._callees_of(site.module):
            return
        yield Report(
            site,
            f"`{site.symbol}` is gone in Keras 3; a custom optimizer subclasses "
            "`keras.optimizers.Optimizer` and implements `build(var_list)` and "
            "`update_step(gradient, variable, learning_rate)` (manual port)",
        )


# ---------------------------------------------------------------------------
# *_generator methods
# ---------------------------------------------------------------------------

# tf_keras/src/engine/training.py, positional order after `self`.
GENERATOR_METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "fit_generator": (
        "fit",
        (
            "generator",
            "steps_per_epoch",
            "epochs",
            "verbose",
            "callbacks",
            "validation_data",
            "validation_steps",
            "validation_freq",
            "class_weight",
            "max_queue_size",
            "workers",
            "use_multiprocessing",
            "shuffle",
            "initial_epoch",
        ),
    ),
    "evaluate_generator": (
        "evaluate",
        (
            "generator",
            "steps",
            "callbacks",
            "max_queue_size",
            "workers",
            "use_multiprocessing",
            "verbose",
        ),
    ),
    "predict_generator": (
        "predict",
        (
            "generator",
            "steps",
            "callbacks",
            "max_queue_size",
            "workers",
            "use_multiprocessing",
            "verbose",
        ),
    ),
}
# Keras 3 moved these to the PyDataset constructor; their Keras 2 defaults.
_DATA_LOADING_DEFAULTS = {"max_queue_size": 10, "workers": 1, "use_multiprocessing": False}


class GeneratorMethods(Rule):
    id = "KM505"
    name = "generator-methods"
    summary = "`fit_generator` / `evaluate_generator` / `predict_generator`: gone in Keras 3."
    rationale = (
        "Keras 3 models take generators and `keras.utils.PyDataset` (formerly `Sequence`) "
        "in `fit`/`evaluate`/`predict` directly. `workers`, `use_multiprocessing` and "
        "`max_queue_size` moved to the `PyDataset` constructor. `evaluate_generator` and "
        "`predict_generator` were silent by default (`verbose=0`), `evaluate`/`predict` "
        "are not."
    )
    fix_safety = (
        "The method is renamed, the generator stays first, every other positional "
        "argument becomes a keyword by its Keras 2 name, and `verbose=0` is spelled out "
        "where Keras 2 defaulted to it. Data-loading arguments at their Keras 2 defaults "
        "are dropped; other values are reported (pass them to your `PyDataset`'s "
        "`super().__init__(workers=..., use_multiprocessing=..., max_queue_size=...)`)."
    )
    severity = Severity.ERROR
    method_names = frozenset(GENERATOR_METHODS)
    examples = [
        Flagged(
            """
            def train(model, train_gen, val_gen):
                model.fit_generator(train_gen, 100, 5, validation_data=val_gen, workers=1)
                score = model.evaluate_generator(val_gen, steps=10)
                return model.predict_generator(val_gen, 10, verbose=1)
            """,
            """
            def train(model, train_gen, val_gen):
                model.fit(train_gen, steps_per_epoch=100, epochs=5, validation_data=val_gen)
                score = model.evaluate(val_gen, steps=10, verbose=0)
                return model.predict(val_gen, steps=10, verbose=1)
            """,
        ),
        Flagged(
            """
            def train(model, gen):
                model.fit_generator(gen, workers=4, use_multiprocessing=True)
            """
        ),
        Clean(
            """
            def train(model, dataset):
                model.fit(dataset, epochs=5)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        method = site.symbol.rsplit(".", 1)[-1]
        target, params = GENERATOR_METHODS[method]
        problems: list[str] = []
        if site.has_star_args:
            problems.append("*args/**kwargs")
        if len(site.args) > len(params):
            problems.append("too many positional arguments")
        given: list[tuple[int | str, str]] = [
            (i, params[i]) for i in range(min(len(site.args), len(params)))
        ]
        given += [(k, k) for k in _keywords_in_order(site)]
        args: list[ArgOut] = []
        moved: list[str] = []
        names = set()
        for source, name in given:
            names.add(name)
            node = site.arg(source if isinstance(source, int) else None, name)
            if name in _DATA_LOADING_DEFAULTS:
                if site.module.literal(node) != _DATA_LOADING_DEFAULTS[name]:
                    moved.append(f"`{name}=`")
                continue
            if name == "generator":
                args.insert(0, ArgOut(source))
            elif name not in params:
                problems.append(f"unknown argument `{name}=`")
            else:
                args.append(ArgOut(source, keyword=name))
        if moved:
            problems.append(
                f"{', '.join(moved)} moved to the PyDataset constructor "
                "(`super().__init__(workers=..., use_multiprocessing=..., max_queue_size=...)`)"
            )
        if method != "fit_generator" and "verbose" not in names:
            args.append(ArgOut(None, keyword="verbose", value="0"))
        message = f"`{method}` is gone in Keras 3: `{target}` takes generators and PyDatasets"
        if problems:
            yield Report(site, f"{message} (manual: {'; '.join(problems)})")
            return
        func = site.node.func  # type: ignore[attr-defined]
        rename = ReplaceNode(site.module.span_of(func), f"{site.text(func.value)}.{target}")
        plan = EditPlan((rename, CallEdit(site.span, args=tuple(args))), f"use {target}")
        yield Report(site, message, fix=plan)


# ---------------------------------------------------------------------------
# Keras backend: variable values and TF1 session APIs
# ---------------------------------------------------------------------------


def _learning_rate_text(site: CallSite, node: ast.expr) -> str:
    """``model.optimizer.lr`` -> ``model.optimizer.learning_rate`` (Keras 3 has no ``lr``)."""
    text = site.text(node)
    if isinstance(node, ast.Attribute) and node.attr == "lr":
        owner = node.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if "optim" in owner_name.lower() or owner_name == "opt":
            return f"{site.text(owner)}.learning_rate"
    return text


def _receiver_text(site: CallSite, node: ast.expr) -> str:
    text = _learning_rate_text(site, node)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return text
    return f"({text})"


class BackendVariableValue(Rule):
    id = "KM506"
    name = "backend-variable-value"
    summary = "`K.get_value` / `K.set_value` / `K.batch_get_value` / `K.batch_set_value`."
    rationale = (
        "Keras 3's `keras.backend` no longer reads or writes variables. A value is read "
        "with `keras.ops.convert_to_numpy(v)` and written with `v.assign(value)` on every "
        "backend. Optimizers have no `lr` attribute any more: it is `learning_rate`."
    )
    fix_safety = (
        "Exact: `K.get_value(x)` -> `ops.convert_to_numpy(x)`, `K.set_value(x, v)` -> "
        "`x.assign(v)` (both cast like Keras 2), `K.batch_get_value(xs)` -> a list "
        "comprehension; `optimizer.lr` becomes `optimizer.learning_rate`. "
        "`K.batch_set_value` is reported with the loop to write."
    )
    severity = Severity.ERROR
    call_symbols = frozenset(
        {"K.get_value", "K.set_value", "K.batch_get_value", "K.batch_set_value"}
    )
    examples = [
        Flagged(
            """
            from tensorflow.keras import backend as K

            def decay(model, factor):
                lr = K.get_value(model.optimizer.lr)
                K.set_value(model.optimizer.lr, lr * factor)
                return K.batch_get_value(model.weights)
            """,
            """
            from keras import ops

            def decay(model, factor):
                lr = ops.convert_to_numpy(model.optimizer.learning_rate)
                model.optimizer.learning_rate.assign(lr * factor)
                return [ops.convert_to_numpy(variable) for variable in model.weights]
            """,
        ),
        Flagged(
            """
            from tensorflow.keras import backend as K

            def restore(pairs):
                K.batch_set_value(pairs)
            """
        ),
        Clean(
            """
            from keras import ops

            def read(variable):
                return ops.convert_to_numpy(variable)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        name = site.symbol[2:]
        if site.has_star_args or site.keywords and name != "get_value":
            yield Report(site, f"`{site.symbol}` is gone in Keras 3 (manual: unusual arguments)")
            return
        if name == "get_value" and site.arg(0, "x") is not None:
            value = _learning_rate_text(site, site.arg(0, "x"))
            source = 0 if site.args else "x"
            edit = CallEdit(
                site.span, callee="keras.ops.convert_to_numpy", args=(ArgOut(source, value=value),)
            )
            yield Report(
                site,
                "`K.get_value` is gone in Keras 3: use `keras.ops.convert_to_numpy`",
                fix=EditPlan((edit,), "ops.convert_to_numpy"),
            )
        elif name == "set_value" and len(site.args) == 2:
            text = f"{_receiver_text(site, site.args[0])}.assign({site.text(site.args[1])})"
            yield Report(
                site,
                "`K.set_value` is gone in Keras 3: assign to the variable",
                fix=EditPlan((ReplaceNode(site.span, text),), ".assign"),
            )
        elif name == "batch_get_value" and len(site.args) == 1:
            text = (
                "[{name:keras.ops.convert_to_numpy}(variable) for variable in "
                f"{site.text(site.args[0])}]"
            )
            yield Report(
                site,
                "`K.batch_get_value` is gone in Keras 3: convert each variable",
                fix=EditPlan((ReplaceNode(site.span, text),), "ops.convert_to_numpy"),
            )
        else:
            what = site.text(site.args[0]) if site.args else "pairs"
            yield Report(
                site,
                f"`{site.symbol}` is gone in Keras 3 (manual: "
                f"`for variable, value in {what}: variable.assign(value)`)",
            )


# What each TF1-era backend function becomes in Keras 3.
SESSION_APIS = {
    "K.eval": "read values with `keras.ops.convert_to_numpy(x)` outside traced code",
    "K.function": "build `keras.Model(inputs, outputs)` and call it (or `predict`)",
    "K.placeholder": "use `keras.Input(shape=...)` for symbolic inputs",
    "K.get_session": "there are no sessions in Keras 3; remove it",
    "K.set_session": "there are no sessions in Keras 3; configure devices with `tf.config`",
    "K.get_graph": "there are no graphs to fetch in Keras 3; remove it",
    "K.learning_phase": "pass `training=True/False` to the layer or model call instead",
    "K.set_learning_phase": "pass `training=True/False` to the layer or model call instead",
    "K.learning_phase_scope": "pass `training=True/False` to the layer or model call instead",
    "K.symbolic_learning_phase": "pass `training=True/False` to the call instead",
    "K.manual_variable_initialization": "Keras 3 initializes variables on creation; remove it",
    "tf.compat.v1.keras.backend.get_session": "there are no sessions in Keras 3; remove it",
    "tf.compat.v1.keras.backend.set_session": "there are no sessions in Keras 3; remove it",
}


class BackendSessionApi(Rule):
    id = "KM507"
    name = "backend-session-api"
    summary = "TF1-style backend API (`K.eval`, `K.function`, sessions, learning phase)."
    rationale = (
        "Keras 3 has no sessions, placeholders, backend functions or global learning "
        "phase: code runs eagerly or inside the backend's compiled train step, and "
        "`training=` is an argument of every call."
    )
    fix_safety = "Never rewritten: each use needs a small redesign; the message says which."
    severity = Severity.ERROR
    call_symbols = frozenset(SESSION_APIS)
    examples = [
        Flagged(
            """
            from tensorflow.keras import backend as K

            def features(model, x):
                K.set_learning_phase(0)
                extract = K.function([model.input], [model.layers[-2].output])
                return extract([x])[0]
            """
        ),
        Clean(
            """
            import keras

            def features(model, x):
                extract = keras.Model(model.inputs, model.layers[-2].output)
                return extract(x, training=False)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        yield Report(
            site, f"`{site.symbol}` does not exist in Keras 3: {SESSION_APIS[site.symbol]}"
        )


# ---------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------

_ASSIGN_METHODS = ("assign", "assign_add", "assign_sub")


class AddUpdate(Rule):
    id = "KM508"
    name = "add-update"
    summary = "`self.add_update(...)`: gone in Keras 3; assign the variable directly."
    rationale = (
        "Keras 3 layers update state by assigning to their variables inside `call` (as "
        "`BatchNormalization` does); Keras tracks the assignment on every backend, including "
        "inside `jax.jit`. `add_update` no longer exists."
    )
    fix_safety = (
        "In TF 2 the wrapped `v.assign(...)` already ran when `add_update` received its "
        "result, so `self.add_update(v.assign(x))` -> `v.assign(x)` is exact. Lists of "
        "updates, callables and `inputs=` are reported."
    )
    severity = Severity.ERROR
    method_names = frozenset({"add_update"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Running(tf.keras.layers.Layer):
                def call(self, x, training=None):
                    if training:
                        self.add_update(self.total.assign_add(tf.reduce_sum(x)))
                    return x
            """,
            """
            import tensorflow as tf

            class Running(tf.keras.layers.Layer):
                def call(self, x, training=None):
                    if training:
                        self.total.assign_add(tf.reduce_sum(x))
                    return x
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Running(tf.keras.layers.Layer):
                def call(self, x):
                    self.add_update([self.a.assign(x), self.b.assign(x)])
                    return x
            """
        ),
        Clean(
            """
            import keras

            class Running(keras.layers.Layer):
                def call(self, x):
                    self.total.assign_add(keras.ops.sum(x))
                    return x
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        update = site.arg(0, "updates")
        single = (
            update is not None
            and len(site.args) + len(site.keywords) == 1
            and isinstance(update, ast.Call)
            and (
                (isinstance(update.func, ast.Attribute) and update.func.attr in _ASSIGN_METHODS)
                or (site.module.resolve(update.func) or "")
                in ("K.update", "K.update_add", "K.update_sub")
            )
        )
        if single:
            plan = EditPlan((ReplaceNode(site.span, site.text(update)),), "assign directly")
            yield Report(
                site, "`add_update` is gone in Keras 3: the assignment is enough", fix=plan
            )
            return
        yield Report(
            site,
            "`add_update` is gone in Keras 3 (manual: call `variable.assign(...)` for each "
            "update inside `call`)",
        )


# Private Keras 2 attributes and what to use instead.
PRIVATE_ATTRIBUTES = {
    "_layers": "use `model.layers` (Keras 3 keeps `_layers` as an internal tracker list)",
    "_inbound_nodes": "use `layer.input` / `layer.output` or rebuild a functional model",
    "_outbound_nodes": "use `layer.input` / `layer.output` or rebuild a functional model",
    "_keras_history": "use the functional API (`keras.Model(inputs, outputs)`) instead",
    "_trainable_weights": "use `trainable_weights` (includes sub-layers)",
    "_non_trainable_weights": "use `non_trainable_weights` (includes sub-layers)",
    "_is_graph_network": "no Keras 3 equivalent; test `isinstance(model, keras.Functional)`",
    "_network_nodes": "no Keras 3 equivalent",
    "_input_layers": "use `model.inputs`",
    "_output_layers": "use `model.outputs`",
    "_self_tracked_trackables": "use `layer._flatten_layers()` or `layer.layers`",
    "_layer_call_argspecs": "no Keras 3 equivalent",
    "_feed_input_names": "use `[t.name for t in model.inputs]`",
    "_get_trainable_state": "no Keras 3 equivalent",
    "_set_trainable_state": "no Keras 3 equivalent",
    "_nodes_by_depth": "internal in Keras 3; walk `model.layers` instead",
}


class PrivateKerasAttribute(Rule):
    id = "KM509"
    name = "private-keras-attribute"
    summary = "Keras 2 private attribute (`model._layers`, `layer._inbound_nodes`, ...)."
    rationale = (
        "Keras 3 is a rewrite: private attributes of Keras 2 layers and models are gone or "
        "mean something else. Code that reaches into them breaks, often silently."
    )
    fix_safety = "Never rewritten: the public replacements are close but not identical."
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import tensorflow as tf

            def freeze_all(model):
                for layer in model._layers:
                    layer.trainable = False
            """
        ),
        Clean(
            """
            import keras

            class Stack(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self._inbound_nodes = []  # its own attribute, not Keras's

                def count(self):
                    return len(self._inbound_nodes)

            def freeze_all(model):
                for layer in model.layers:
                    layer.trainable = False
            """
        ),
    ]

    def check_module(self, module) -> Iterable[Report]:
        # Cheap first: most modules never spell any of these names.
        if not any(name in module.text for name in PRIVATE_ATTRIBUTES):
            return
        nodes = [
            node
            for node in ast.walk(module.tree)
            if isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES
        ]
        owned = {n.attr for n in nodes if isinstance(n.ctx, ast.Store)}
        for node in nodes:
            if isinstance(node.ctx, ast.Load) and node.attr not in owned:
                site = module_site(module, node)
                advice = PRIVATE_ATTRIBUTES[node.attr]
                yield Report(site, f"`{node.attr}` is Keras 2 internals: {advice}")


class ComputeOutputShapeTensorShape(Rule):
    id = "KM510"
    name = "compute-output-shape-tensorshape"
    summary = "`compute_output_shape` builds a `tf.TensorShape`; Keras 3 uses tuples."
    rationale = (
        "Keras 3 passes `input_shape` to `compute_output_shape` as a tuple and expects a "
        "tuple back on every backend; `tf.TensorShape` needs TensorFlow and its methods "
        "(`concatenate`, `as_list`, `merge_with`) do not exist on tuples."
    )
    fix_safety = (
        "`tf.TensorShape([a, b])` -> `(a, b)` and `tf.TensorShape(x)` -> `tuple(x)` are "
        "exact; `tf.TensorShape(None)` (unknown rank) and `.concatenate(...)` on a shape "
        "are reported (use tuple concatenation: `input_shape[:-1] + (self.units,)`)."
    )
    severity = Severity.ERROR
    call_symbols = frozenset({"tf.TensorShape", "tf.compat.v1.TensorShape"})
    method_names = frozenset({"concatenate", "merge_with"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    return tf.TensorShape([input_shape[0], self.units])
            """,
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    return (input_shape[0], self.units)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            class Project(tf.keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    return input_shape[:-1].concatenate([self.units])
            """
        ),
        Clean(
            """
            import keras

            class Project(keras.layers.Layer):
                def compute_output_shape(self, input_shape):
                    return input_shape[:-1] + (self.units,)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.scope.function_name != "compute_output_shape":
            return
        if site.symbol.startswith("<method>."):
            yield Report(
                site,
                "`input_shape` is a tuple in Keras 3 (manual: use tuple slicing and `+`, "
                "e.g. `input_shape[:-1] + (self.units,)`)",
            )
            return
        dims = site.arg(0, "dims")
        if (
            dims is None
            or site.module.literal(dims) is None
            or len(site.args) + len(site.keywords) != 1
        ):
            yield Report(site, "return a tuple of dimensions (manual: unknown rank or form)")
            return
        if isinstance(dims, (ast.List, ast.Tuple)) and not any(
            isinstance(e, ast.Starred) for e in dims.elts
        ):
            items = [site.text(e) for e in dims.elts]
            text = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        else:
            text = f"tuple({site.text(dims)})"
        plan = EditPlan((ReplaceNode(site.span, text),), "tuple shape")
        yield Report(site, "return a tuple from `compute_output_shape` in Keras 3", fix=plan)


class LambdaOutputShape(Rule):
    id = "KM511"
    name = "lambda-output-shape"
    summary = "`Lambda` layer without `output_shape`; it is inferred and hard to reload."
    rationale = (
        "Keras 3 infers a `Lambda`'s output shape by tracing the function on a symbolic "
        "tensor, which fails if it calls TensorFlow ops (use `keras.ops`). A `.keras` file "
        "with a `Lambda` only reloads with `load_model(..., safe_mode=False)` because the "
        "function is stored as bytecode; a small custom layer avoids both issues."
    )
    fix_safety = "Informational; nothing to rewrite automatically."
    severity = Severity.INFO
    call_symbols = _in_namespaces("layers.Lambda", "layers.core.Lambda")
    examples = [
        Flagged(
            """
            from tensorflow import keras

            double = keras.layers.Lambda(lambda t: t * 2)
            """
        ),
        Clean(
            """
            import keras

            double = keras.layers.Lambda(lambda t: t * 2, output_shape=(8,))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.arg(1, "output_shape") is not None or site.has_star_args:
            return
        yield Report(
            site,
            "`Lambda` without `output_shape`: Keras 3 infers it by tracing the function "
            "(use `keras.ops` inside); reloading a `.keras` file with it needs "
            "`safe_mode=False`, a custom layer does not",
        )


class CustomObjectsRegistry(Rule):
    id = "KM512"
    name = "custom-objects-registry"
    summary = "`get_custom_objects()` registration; Keras 3 uses a decorator."
    rationale = (
        "Keras 3 serializes custom classes under a registered name "
        "(`package>ClassName`); `@keras.saving.register_keras_serializable()` registers "
        "a class at definition, so `.keras` files reload in any process without "
        "`custom_objects=`. Filling the global dict still works but is easy to miss."
    )
    fix_safety = "Reported with the decorator to add; the class is elsewhere, so no rewrite."
    severity = Severity.INFO
    call_symbols = _in_namespaces(
        "utils.get_custom_objects",
        "saving.get_custom_objects",
        "utils.generic_utils.get_custom_objects",
    )
    examples = [
        Flagged(
            """
            import tensorflow as tf

            tf.keras.utils.get_custom_objects().update({"Swish": Swish})
            """
        ),
        Clean(
            """
            import keras

            @keras.saving.register_keras_serializable(package="my_models")
            class Swish(keras.layers.Layer):
                pass
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        yield Report(
            site,
            "register custom classes with `@keras.saving.register_keras_serializable"
            "(package=...)` on the class instead of filling `get_custom_objects()`",
        )


_BASE_INIT_PARAMS = frozenset({"self", "name", "trainable", "dtype", "dynamic", "autocast"})


def _is_keras_class(node: ast.ClassDef, site: Node, local: set[str]) -> bool:
    for base in node.bases:
        symbol = site.module.resolve(base) or ""
        if symbol.startswith(CONTEXT_SPEC.model_base_prefixes):
            return True
        tail = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if tail in local or (not symbol and tail.endswith(CONTEXT_SPEC.model_name_suffixes)):
            return True
    return False


def _extra_init_params(init: ast.FunctionDef) -> list[tuple[str, ast.expr | None]]:
    """``__init__`` parameters beyond what ``Layer`` itself takes, with their defaults."""
    args = init.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    pairs = list(zip(positional, [*defaults, *args.defaults]))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults))
    return [(a.arg, d) for a, d in pairs if a.arg not in _BASE_INIT_PARAMS]


def _plain_literal(site: Node, default: ast.expr | None) -> bool:
    """A default Keras 3 can put in an auto-generated config (str/int/float/bool/None)."""
    if default is None:
        return False
    value = site.module.literal(default)
    plain = (str, int, float, bool, type(None))
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, plain) for v in value)
    return isinstance(value, plain)


def module_site(module, node: ast.AST) -> Node:
    """A site for a node found by a module-level pass (its context is not tracked)."""
    return Node(
        node=node, span=module.span_of(node), context=Context.OTHER, scope=Scope(), module=module
    )


def keras_classes(module) -> list[tuple[Node, ast.ClassDef]]:
    """The module-level classes deriving from a Keras layer, model, loss or metric (also
    through a local base), each with a site to report on."""
    classes = [c for c in module.tree.body if isinstance(c, ast.ClassDef)]
    local = {c.name for c in classes}
    found = []
    for node in classes:
        site = module_site(module, node)
        if _is_keras_class(node, site, local - {node.name}):
            found.append((site, node))
    return found


def _methods(node: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {s.name: s for s in node.body if isinstance(s, ast.FunctionDef)}


class CustomObjectWithoutConfig(Rule):
    id = "KM513"
    name = "custom-object-without-config"
    summary = "Custom layer/model with `__init__` arguments but no `get_config`."
    rationale = (
        "`.keras` files rebuild each layer as `cls(**layer.get_config())`. Keras 3 "
        "generates the config from `__init__` arguments only when every value is a plain "
        "str/int/float/bool/None (or lists/dicts of them); pass a layer, an initializer "
        "object or an array and `model.save` raises `NotImplementedError`."
    )
    fix_safety = (
        "Reported, not rewritten: what `get_config` must return depends on how `__init__` "
        "stores its arguments."
    )
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import tensorflow as tf

            class Residual(tf.keras.layers.Layer):
                def __init__(self, inner, scale=1.0, **kwargs):
                    super().__init__(**kwargs)
                    self.inner = inner
                    self.scale = scale

                def call(self, x):
                    return x + self.scale * self.inner(x)
            """
        ),
        Clean(
            """
            import keras

            class Residual(keras.layers.Layer):
                def __init__(self, units, **kwargs):
                    super().__init__(**kwargs)
                    self.units = units

                def get_config(self):
                    return {**super().get_config(), "units": self.units}
            """
        ),
    ]

    def check_module(self, module) -> Iterable[Report]:
        for site, node in keras_classes(module):
            yield from self._check_class(site, node)

    def _check_class(self, site: Node, node: ast.ClassDef) -> Iterator[Report]:
        methods = _methods(node)
        init = methods.get("__init__")
        if init is None or "get_config" in methods or "from_config" in methods:
            return
        extra = _extra_init_params(init)
        if not extra:
            return
        listed = ", ".join(f"`{p}`" for p, _ in extra)
        registered = any(
            (site.module.resolve(d.func if isinstance(d, ast.Call) else d) or "").endswith(
                ".register_keras_serializable"
            )
            for d in node.decorator_list
        )
        span = site.module.span_of(node)
        span = Span(span.line, span.column, span.line, span.column + len(f"class {node.name}"))
        if all(_plain_literal(site, default) for _, default in extra):
            if registered:
                return
            yield Report(
                site,
                f"`{node.name}` has no `get_config`; Keras 3 generates one from its plain "
                f"{listed} values, but register the class with "
                "`@keras.saving.register_keras_serializable()` so `.keras` files reload "
                "without `custom_objects=`",
                severity=Severity.INFO,
                span=span,
            )
            return
        yield Report(
            site,
            f"`{node.name}` takes {listed} but has no `get_config`: saving to `.keras` raises "
            "unless every value is a plain str/int/float/bool/None; add `get_config()` "
            "returning them"
            + ("" if registered else ", and `@keras.saving.register_keras_serializable()`"),
            span=span,
        )


class MetricResetStates(Rule):
    id = "KM514"
    name = "metric-reset-states"
    summary = "`metric.reset_states()`; Keras 3 metrics only have `reset_state()`."
    rationale = (
        "Keras 2 kept `reset_states()` as an alias on metrics; Keras 3 metrics only define "
        "`reset_state()`, so the call raises AttributeError. Keras 3 models have no "
        "`reset_states()` at all (reset stateful RNN layers with `layer.reset_state()`)."
    )
    fix_safety = (
        "Renamed when the receiver is known to be a metric: assigned from a "
        "`keras.metrics.*` constructor (in the function, or on `self` in `__init__`), or a "
        "loop variable over `model.metrics`. Other receivers are reported."
    )
    severity = Severity.ERROR
    method_names = frozenset({"reset_states"})
    examples = [
        Flagged(
            """
            from tensorflow import keras

            def evaluate(model, batches):
                accuracy = keras.metrics.SparseCategoricalAccuracy()
                for x, y in batches:
                    accuracy.update_state(y, model(x))
                result = accuracy.result()
                accuracy.reset_states()
                for metric in model.metrics:
                    metric.reset_states()
                return result
            """,
            """
            from tensorflow import keras

            def evaluate(model, batches):
                accuracy = keras.metrics.SparseCategoricalAccuracy()
                for x, y in batches:
                    accuracy.update_state(y, model(x))
                result = accuracy.result()
                accuracy.reset_state()
                for metric in model.metrics:
                    metric.reset_state()
                return result
            """,
        ),
        Flagged(
            """
            def new_sequence(model):
                model.reset_states()
            """
        ),
        Clean(
            """
            from tensorflow import keras

            def new_sequence():
                lstm = keras.layers.LSTM(4, stateful=True)
                lstm.reset_states()  # RNN layers keep reset_states() in Keras 3
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        kind = self._receiver_kind(site)
        if kind == "layer":
            return
        func = site.node.func  # type: ignore[attr-defined]
        if kind == "metric":
            rename = ReplaceNode(site.module.span_of(func), f"{site.text(func.value)}.reset_state")
            yield Report(
                site,
                "Keras 3 metrics have `reset_state()`, not `reset_states()`",
                fix=EditPlan((rename,), "reset_state()"),
            )
            return
        yield Report(
            site,
            "`reset_states()` is gone from Keras 3 metrics and models (manual: a metric "
            "uses `reset_state()`; for a stateful RNN call `reset_state()` on its layers)",
            severity=Severity.WARNING,
        )

    def _receiver_kind(self, site: CallSite) -> str | None:
        receiver = site.receiver
        value: ast.expr | None = None
        if isinstance(receiver, ast.Name):
            scope = site.scope.function_node or site.module.tree
            loop_over = _loop_iterable(scope, receiver.id)
            if isinstance(loop_over, ast.Attribute) and loop_over.attr == "metrics":
                return "metric"
            value = single_assignment(scope, receiver.id)
        elif (
            isinstance(receiver, ast.Attribute)
            and isinstance(receiver.value, ast.Name)
            and receiver.value.id == "self"
            and site.scope.class_node is not None
        ):
            value = _self_attribute_value(site.scope.class_node, receiver.attr)
        if isinstance(value, ast.Call):
            symbol = site.module.resolve(value.func) or ""
            if re.match(r"(tf\.keras|keras|tf_keras)\.metrics\.", symbol):
                return "metric"
            if re.match(r"(tf\.keras|keras|tf_keras)\.layers\.", symbol):
                return "layer"
        return None


def _loop_iterable(scope: ast.AST, name: str) -> ast.expr | None:
    for node in own_nodes(scope):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
            if node.target.id == name:
                return node.iter
    return None


def _self_attribute_value(class_node: ast.ClassDef, attr: str) -> ast.expr | None:
    init = _methods(class_node).get("__init__")
    if init is None:
        return None
    values = [
        node.value
        for node in ast.walk(init)
        if isinstance(node, ast.Assign)
        and any(
            isinstance(t, ast.Attribute)
            and t.attr == attr
            and isinstance(t.value, ast.Name)
            and t.value.id == "self"
            for t in node.targets
        )
    ]
    return values[0] if len(values) == 1 else None
