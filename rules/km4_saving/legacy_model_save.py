"""KM401: A model saved as HDF5 or as a TF SavedModel folder; Keras 3 saves `.keras`."""

from __future__ import annotations

from collections.abc import Iterator

from kmigrate.engine import CallSite, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report
from kmigrate.rules.km4_saving._pairing import (
    Pairing,
    PathRule,
    drop_keywords,
    folder_note,
    new_name,
    paired_note,
    writer_plan,
)


class LegacyModelSave(PathRule):
    id = "KM401"
    name = "legacy-model-save"
    summary = "A model saved as HDF5 or as a TF SavedModel folder; Keras 3 saves `.keras`."
    rationale = (
        "Keras 3 only writes the `.keras` format natively: `model.save('dir')` (a SavedModel "
        "in Keras 2) raises, `save_format=` is gone, and `.h5` is a legacy format with "
        "limited support for custom objects. A `.keras` file holds architecture, weights and "
        "optimizer state and loads on TensorFlow, JAX and PyTorch alike."
    )
    fix_safety = (
        "The suffix is rewritten where the path spells it out literally (string, f-string "
        "tail, `os.path.join`, `pathlib` `/`, `+`, `%`/`.format` templates, or a variable "
        "assigned once from one of those); loads of the same path in the module "
        "(`load_model`, `load_weights`) are rewritten in the same fix, so both ends agree. "
        "Not offered when the suffix comes from a variable, when a paired load cannot be "
        "rewritten, or for arguments Keras 3 lacks (`signatures=`, `options=`). Keras 3 does "
        "not create missing folders: when the path names a sub-folder literally, make sure "
        "it exists (the finding says so)."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            model.save("classifier.h5")
            restored = tf.keras.models.load_model("classifier.h5")
            """,
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            model.save("classifier.keras")
            restored = tf.keras.models.load_model("classifier.keras")
            """,
        ),
        Flagged(
            """
            import os
            from pathlib import Path
            from tensorflow import keras

            def export(model, out):
                model.save(os.path.join(out, "saved_model"), save_format="tf")
                model.save(Path(out) / "model.hdf5")
                model.save(f"{out}/final.h5")
            """,
            """
            import os
            from pathlib import Path
            from tensorflow import keras

            def export(model, out):
                model.save(os.path.join(out, "saved_model.keras"))
                model.save(Path(out) / "model.keras")
                model.save(f"{out}/final.keras")
            """,
        ),
        Flagged(
            """
            from tensorflow import keras

            def export(model, name):
                model.save(name, save_format="h5")
            """
        ),
        Clean(
            """
            import keras

            def export(model, image):
                model.save("model.keras")
                image.save("preview")  # a PIL image, not a model
            """
        ),
    ]

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        for use in pairing.uses:
            if use.role != "save":
                continue
            site = use.site
            kind = use.path.legacy_kind() if use.path is not None else None
            has_format = "save_format" in site.keywords
            if kind == "keras" and has_format:
                yield Report(
                    site,
                    "`save_format=` is gone in Keras 3; the `.keras` suffix says it all",
                    fix=EditPlan((drop_keywords(site, {"save_format"}),), "drop save_format"),
                    severity=Severity.WARNING,
                )
                continue
            if kind in ("keras", "weights") or (kind is None and not has_format):
                continue  # already Keras 3, or a path we cannot read and no legacy clue
            what = {
                "h5": "an HDF5 file",
                "bare": "a TF SavedModel folder (Keras 2's default for a path without suffix)",
                None: f"with save_format={self._format_text(site)}",
            }[kind]
            extra = ()
            drop = drop_keywords(site, {"save_format"})
            if drop is not None:
                extra = (drop,)
            plan, why = writer_plan(use, pairing, extra)
            message = f"saves {what}; Keras 3 saves `.keras` (it loads on every backend)"
            if plan is not None:
                message += f": write {new_name(use)}{paired_note(use, pairing)}"
                message += folder_note(use)
            else:
                message += f" (manual: {why})"
            yield Report(site, message, fix=plan, severity=Severity.ERROR)

    @staticmethod
    def _format_text(site: CallSite) -> str:
        node = site.keywords.get("save_format")
        return site.text(node) if node is not None else "?"
