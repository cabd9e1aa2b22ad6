"""KM404: `tf.saved_model.save(model, dir)`; Keras 3 exports with `model.export(dir)`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import CallSite, EditPlan, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.km4_saving._uses import SAVED_MODEL_SAVE


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
        "Offered for the two-argument form. `model.export` needs TensorFlow installed and is "
        "exact on the TensorFlow backend; on JAX/PyTorch it converts the model first. "
        "`signatures=` and `options=` have no direct equivalent: use "
        "`keras.export.ExportArchive` (manual)."
    )
    severity = Severity.WARNING
    call_symbols = SAVED_MODEL_SAVE
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
        Flagged(
            """
            import tensorflow as tf

            def publish(model, out, fn):
                tf.saved_model.save(model, out, signatures={"serving_default": fn})
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
        text = f"{site.text(obj)}.export({site.text(export_dir)})"
        yield Report(
            site,
            f"use `{site.text(obj)}.export(...)` for a serving SavedModel {note}",
            fix=EditPlan((ReplaceNode(site.span, text),), "model.export"),
        )
