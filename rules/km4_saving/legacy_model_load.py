"""KM403: `load_model` on an HDF5 file or SavedModel folder; Keras 3 loads `.keras`."""

from __future__ import annotations

from collections.abc import Iterator

from kmigrate.engine import CallEdit, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report
from kmigrate.rules.km4_saving._pairing import (
    Pairing,
    PathRule,
    describe_path,
    new_name,
    writer_plan,
)

_KERAS3_LOADER = "keras.saving.load_model"


class LegacyModelLoad(PathRule):
    id = "KM403"
    name = "legacy-model-load"
    summary = "`load_model` on an HDF5 file or SavedModel folder; Keras 3 loads `.keras`."
    rationale = (
        "Keras 3's `keras.saving.load_model` reads `.keras` files and legacy `.h5` files; it "
        "cannot load a TF SavedModel (only wrap one for inference with "
        "`keras.layers.TFSMLayer` on TensorFlow). When the model is saved in the same "
        "module, KM401 moves the save and this load to `.keras` together."
    )
    fix_safety = (
        "The callee becomes `keras.saving.load_model`; the path itself is rewritten by the "
        "KM401/KM405 fix of the save it pairs with, so both ends change together or not at "
        "all. An unpaired `.h5` load keeps its path (Keras 3 still reads legacy HDF5); an "
        "unpaired SavedModel load is reported for conversion (`kmigrate convert-weights`)."
    )
    examples = [
        Flagged(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("pretrained.h5", compile=False)
            """,
            """
            import keras

            model = keras.saving.load_model("pretrained.h5", compile=False)
            """,
        ),
        Flagged(
            """
            from tensorflow import keras

            model = keras.models.load_model("exported/serving_model")
            """
        ),
        Clean(
            """
            import keras

            model = keras.saving.load_model("model.keras")
            """
        ),
    ]

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        for use in pairing.uses:
            if use.role != "load_model" or use.path is None:
                continue
            kind = use.path.legacy_kind()
            if kind not in ("h5", "bare"):
                continue
            site = use.site
            writer = pairing.writer_of.get(id(use))
            # a call that is Keras 3's loader already has nothing to rename (a rename to
            # itself would stay "fixable" after every apply)
            rename = None
            if site.module.resolver.resolve(site.node.func) != _KERAS3_LOADER:  # type: ignore[attr-defined]
                edit = CallEdit(site.span, callee=_KERAS3_LOADER)
                rename = EditPlan((edit,), _KERAS3_LOADER)
            moved = writer is not None and writer_plan(writer, pairing)[0] is not None
            if use.problems:
                yield Report(site, f"loads a legacy model (manual: {use.problems[0]})")
            elif moved:
                if rename is None:
                    continue  # Keras 3's loader already: the save's fix moves the path
                yield Report(
                    site,
                    f"loads {describe_path(use)} written on line {writer.site.span.line}; "  # type: ignore[union-attr]
                    f"use `keras.saving.load_model` (the save's fix moves both to "
                    f"{new_name(writer)})",  # type: ignore[arg-type]
                    fix=rename,
                )
            elif kind == "h5":
                written = "" if writer is None else f", written on line {writer.site.span.line}"
                yield Report(
                    site,
                    f"loads the legacy HDF5 file {describe_path(use)}{written}: Keras 3 still "
                    "reads it, but convert it once to `.keras` (`kmigrate convert-weights "
                    "OLD.h5 NEW.keras`) for custom objects and future versions",
                    fix=rename,
                    severity=Severity.INFO,
                )
            else:
                yield Report(
                    site,
                    f"loads {describe_path(use)} as a TF SavedModel, which Keras 3 cannot "
                    "load as a model: convert it once with `kmigrate convert-weights "
                    "OLD_DIR NEW.keras` and load the `.keras` file (or wrap it for "
                    "inference with `keras.layers.TFSMLayer` on TensorFlow)",
                    severity=Severity.ERROR,
                )
