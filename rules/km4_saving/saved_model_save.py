"""KM404: `tf.saved_model.save(model, dir)`; Keras 3 exports with `model.export(dir)`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import CallSite, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.namespaces import KERAS_NAMESPACES, in_keras_namespaces
from kmigrate.rules.context_spec import CONTEXT_SPEC, SAVED_MODEL_SAVE
from kmigrate.rules.facts.saved_model_reloads import SavedModelReloads
from kmigrate.rules.km4_saving._uses import LOAD_MODEL_FUNCTIONS, assigned_from

# `export` is a Keras model's: a layer, a tf.Module or a tf.train.Checkpoint (what
# tensorflow_hub saves) has none. The object is known to be a model when the scope binds
# it once from one of these calls...
_MODEL_FACTORIES = LOAD_MODEL_FUNCTIONS | in_keras_namespaces(
    "Model", "Sequential", "models.Model", "models.Sequential", "models.clone_model"
)
_APPLICATIONS = tuple(ns + "applications." for ns in KERAS_NAMESPACES)
# ... or calls on it a method only a Keras model has (not `save`: a Checkpoint has one).
_MODEL_ONLY_METHODS = frozenset(
    {
        "fit",
        "fit_generator",
        "compile",
        "evaluate",
        "evaluate_generator",
        "predict",
        "predict_generator",
        "train_on_batch",
        "test_on_batch",
        "predict_on_batch",
        "summary",
        "save_weights",
        "load_weights",
    }
)


def own_reload(site: CallSite) -> tuple[int, str] | None:
    """The module's first call of a SavedModel reader (``SAVED_MODEL_LOAD``, or
    ``SAVED_MODEL_FOLDER_LOAD`` on a literal folder): (line, reader). What
    ``tf.saved_model.save`` of a Keras model wrote is called as ``loaded(x)``; what
    ``model.export`` writes is called as ``loaded.serve(x)`` and its signature's keys
    change, so a rewrite would break the reload (change them together)."""
    module, spec = site.module, CONTEXT_SPEC
    found = []
    for call in module.nodes(ast.Call):
        symbol = module.resolve(call.func) or ""
        if spec.reloads_saved_model(symbol, spec.reads_folder(call)):
            found.append((module.span_of(call).line, symbol))
    return min(found, default=None)


def reloading_modules(site: CallSite) -> str:
    """Who reloads SavedModels and with what, as a clause ("`serve.py` reloads
    SavedModels with hub.KerasLayer (line 12)"); "" when no module of the project does. A
    reload anywhere in the project counts: the directory is most often a variable, so
    which SavedModel a reload reads cannot be told."""
    own = own_reload(site)
    if own is not None:
        line, reader = own
        return f"this file reloads SavedModels with {reader} (line {line})"
    others = site.module.fact(SavedModelReloads)
    if len(others) == 1:
        ((shown, line, reader),) = others
        return f"`{shown}` reloads SavedModels with {reader} (line {line})"
    if others:
        each = ", ".join(f"`{shown}` ({reader}, line {line})" for shown, line, reader in others)
        return f"{each} reload SavedModels"
    return ""


def is_keras_model(site: CallSite, obj: ast.expr) -> bool:
    """Whether the code shows that ``obj`` is a Keras model, in the scope of ``site``."""
    module = site.module
    scope = site.scope.function_node or module.tree
    if isinstance(obj, ast.Name):
        symbol = assigned_from(site, obj.id)
        if symbol in _MODEL_FACTORIES or symbol.startswith(_APPLICATIONS):
            return True
    text = module.node_text(obj)
    return any(
        isinstance(call.func, ast.Attribute)
        and call.func.attr in _MODEL_ONLY_METHODS
        and module.node_text(call.func.value) == text
        for call in module.nodes_in(scope, ast.Call)
    )


class SavedModelSave(Rule):
    id = "KM404"
    name = "saved-model-save"
    summary = "`tf.saved_model.save(model, dir)`; Keras 3 exports with `model.export(dir)`."
    rationale = (
        "`tf.saved_model.save` knows nothing about Keras 3 layers and only works on the "
        "TensorFlow backend. `model.export(dir)` writes the inference SavedModel for TF "
        "Serving / TFLite from a Keras 3 model (endpoint `serve`)."
    )
    fix_safety = (
        "Offered for the two-argument form, when the code shows the object is a Keras model "
        "(bound from `keras.Model(...)`, `Sequential`, `load_model` or an application, or "
        "fitted, compiled or evaluated in the same scope): a tf.Module or "
        "tf.train.Checkpoint has no `export`; and when no module of the project reloads "
        "SavedModels (`tf.saved_model.load`, TF1's `loader.load`, tensorflow_hub's "
        "`hub.load`, `hub.KerasLayer` or `hub.Module`, or `load_model` on a literal "
        "folder): an exported model is called as `loaded.serve(x)`, not `loaded(x)`, and "
        "its signature's keys change, so the save and its reloads change together. "
        "`model.export` "
        "needs TensorFlow installed and is exact on the TensorFlow backend; on "
        "JAX/PyTorch it converts the model first. "
        "`signatures=` and `options=` have no direct equivalent: use "
        "`keras.export.ExportArchive` (manual)."
    )
    severity = Severity.WARNING
    call_symbols = SAVED_MODEL_SAVE
    facts = (SavedModelReloads,)  # which other modules reload SavedModels
    examples = [
        Flagged(
            """
            import tensorflow as tf

            def publish(model, out):
                model.fit(tf.data.Dataset.range(4))
                tf.saved_model.save(model, out + "/serving")
            """,
            """
            import tensorflow as tf

            def publish(model, out):
                model.fit(tf.data.Dataset.range(4))
                model.export(out + "/serving")
            """,
        ),
        Flagged(  # manual: serve.py wraps the SavedModel with tensorflow_hub
            """
            import tensorflow as tf

            def publish(model, out):
                model.fit(tf.data.Dataset.range(4))
                tf.saved_model.save(model, out)
            """,
            project={
                "serve.py": """
                    import tensorflow_hub as hub

                    def feature_layer(directory):
                        return hub.KerasLayer(directory, trainable=False)
                    """
            },
        ),
        Flagged(
            """
            import tensorflow as tf

            def publish(model, out, fn):
                tf.saved_model.save(model, out, signatures={"serving_default": fn})
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            def publish(out):
                ckpt = tf.train.Checkpoint()
                ckpt.v = tf.Variable(1.0)
                tf.saved_model.save(ckpt, out)
            """
        ),
        Clean(
            """
            import keras

            def publish(model, out):
                model.export(out)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        obj = site.arg(0, "obj")
        export_dir = site.arg(1, "export_dir")
        extra = set(site.keywords) - {"obj", "export_dir"}
        note = "(needs TensorFlow installed; exact on the TensorFlow backend)"
        if (
            obj is None
            or export_dir is None
            or extra
            or site.has_star_args
            or len(site.args) > 2
            or not isinstance(obj, (ast.Name, ast.Attribute))
        ):
            why = (
                "signatures/options need `keras.export.ExportArchive`" if extra else "unusual form"
            )
            yield Report(
                site, f"use `model.export(dir)` for a serving SavedModel {note} (manual: {why})"
            )
            return
        if not is_keras_model(site, obj):
            name = site.text(obj)
            yield Report(
                site,
                f"use `{name}.export(dir)` if `{name}` is a Keras model {note} (manual: "
                f"nothing here shows that `{name}` is one; a tf.Module or tf.train."
                "Checkpoint has no `export`, and tf.saved_model.save stays right for those)",
            )
            return
        where = reloading_modules(site)
        if where:
            yield Report(
                site,
                f"use `{site.text(obj)}.export(dir)` for a serving SavedModel {note} (manual: "
                f"{where}; an exported model is called as `loaded.serve(x)`, not `loaded(x)`, "
                "and its signature's keys change: change the save and its reloads together)",
            )
            return
        text = f"{site.text(obj)}.export({site.text(export_dir)})"
        yield Report(
            site,
            f"use `{site.text(obj)}.export(...)` for a serving SavedModel {note}; "
            "what reloads it calls `loaded.serve(x)`",
            fix=EditPlan((ReplaceNode(site.span, text),), "model.export"),
        )
