"""KM505: `fit_generator` and the other `*_generator` methods Keras 3 removed."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import keywords_in_order

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
        given += [(k, k) for k in keywords_in_order(site)]
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
