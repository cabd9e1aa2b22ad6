"""KM405: `ModelCheckpoint` path without `.keras` / `.weights.h5`; Keras 3 raises."""

from __future__ import annotations

from collections.abc import Iterator

from kmigrate.engine import Severity
from kmigrate.rules.base import Clean, Flagged, Report
from kmigrate.rules.km4_saving._pairing import Pairing, PathRule, new_name, paired_note, writer_plan


class CheckpointSuffix(PathRule):
    id = "KM405"
    name = "checkpoint-suffix"
    summary = "`ModelCheckpoint` path without `.keras` / `.weights.h5`; Keras 3 raises."
    rationale = (
        "Keras 3's `ModelCheckpoint` requires `.weights.h5` with `save_weights_only=True` and "
        "`.keras` otherwise; Keras 2 wrote SavedModels or TF checkpoints for other paths. "
        "`options=` and `period=` are gone."
    )
    fix_safety = (
        "The literal suffix is rewritten (templates such as `{epoch:02d}` are kept), with any "
        "load of the same path in the module. Not offered when `save_weights_only` is not a "
        "literal, when the suffix is not literal, or for `options=`/`period=` (use "
        "`save_freq`, counted in batches)."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import os
            from tensorflow import keras

            def callbacks(out):
                return [
                    keras.callbacks.ModelCheckpoint(os.path.join(out, "m.h5"), monitor="loss"),
                    keras.callbacks.ModelCheckpoint(
                        out + "/w-{epoch:02d}.hdf5", save_weights_only=True
                    ),
                ]
            """,
            """
            import os
            from tensorflow import keras

            def callbacks(out):
                return [
                    keras.callbacks.ModelCheckpoint(os.path.join(out, "m.keras"), monitor="loss"),
                    keras.callbacks.ModelCheckpoint(
                        out + "/w-{epoch:02d}.weights.h5", save_weights_only=True
                    ),
                ]
            """,
        ),
        Flagged(
            """
            from tensorflow import keras

            checkpoint = keras.callbacks.ModelCheckpoint("ckpt/model", period=5)
            """
        ),
        Clean(
            """
            import keras

            checkpoint = keras.callbacks.ModelCheckpoint("best.keras", save_best_only=True)
            """
        ),
    ]

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        for use in pairing.uses:
            if use.role != "checkpoint":
                continue
            site = use.site
            if use.path is None:
                continue
            kind = use.path.legacy_kind()
            if kind is None:
                continue
            if use.target is None:
                yield Report(
                    site,
                    "Keras 3 needs `.weights.h5` with `save_weights_only=True` and `.keras` "
                    "otherwise (manual: `save_weights_only` is not a literal)",
                )
                continue
            wanted = "weights" if use.target == "weights" else "keras"
            if kind == wanted and not use.problems:
                continue
            plan, why = writer_plan(use, pairing)
            need = "`.weights.h5`" if use.target == "weights" else "`.keras`"
            message = f"Keras 3's ModelCheckpoint needs a {need} path here"
            if plan is not None and kind != wanted:
                message += f": write {new_name(use)}{paired_note(use, pairing)}"
            else:
                plan = None
                message += f" (manual: {why or '; '.join(use.problems)})"
            yield Report(site, message, fix=plan)
