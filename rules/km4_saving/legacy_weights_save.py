"""KM402: Weights saved as a TF checkpoint or plain `.h5`; Keras 3 needs `.weights.h5`."""

from __future__ import annotations

from collections.abc import Iterator

from kmigrate.engine import EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report
from kmigrate.rules.km4_saving._pairing import (
    Pairing,
    PathRule,
    describe_path,
    drop_keywords,
    folder_note,
    new_name,
    paired_note,
    writer_plan,
)
from kmigrate.rules.km4_saving._uses import PathUse


class LegacyWeightsSave(PathRule):
    id = "KM402"
    name = "legacy-weights-save"
    summary = "Weights saved as a TF checkpoint or plain `.h5`; Keras 3 needs `.weights.h5`."
    rationale = (
        "`model.save_weights()` in Keras 3 only writes files ending in `.weights.h5` and "
        "raises for anything else, so TF checkpoint prefixes (`save_weights('ckpt')`) and "
        "plain `.h5` names stop working. `load_weights()` cannot read TF checkpoints at all."
    )
    fix_safety = (
        "The path's literal suffix becomes `.weights.h5` (`.h5`/`.hdf5`/`.ckpt` replaced, "
        "otherwise appended), together with every `load_weights` of the same path in the "
        "module. Not offered when the suffix is not literal, when a paired load passes "
        "`by_name=` (only legacy `.h5` supports it) or for `options=`. A TF checkpoint "
        "created its folder itself, Keras 3 does not: the finding says when the code names "
        "a sub-folder that must exist."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            from tensorflow import keras

            def train(model, data):
                model.fit(data)
                model.save_weights("weights.h5")
                model.load_weights("weights.h5")
            """,
            """
            from tensorflow import keras

            def train(model, data):
                model.fit(data)
                model.save_weights("weights.weights.h5")
                model.load_weights("weights.weights.h5")
            """,
        ),
        Flagged(
            """
            import os
            import tensorflow as tf

            def train(model, out):
                ckpt = os.path.join(out, "best")
                model.save_weights(ckpt, save_format="tf")
                model.load_weights(ckpt)
            """,
            """
            import os
            import tensorflow as tf

            def train(model, out):
                ckpt = os.path.join(out, "best.weights.h5")
                model.save_weights(ckpt)
                model.load_weights(ckpt)
            """,
        ),
        Flagged(  # the path in a variable, in a sub-folder the TF checkpoint created
            """
            import os
            import tensorflow as tf

            def train(model, out):
                ckpt = os.path.join(out, "checkpoints",
                                    "last")
                model.save_weights(ckpt)
                model.load_weights(ckpt)
            """,
            """
            import os
            import tensorflow as tf

            def train(model, out):
                ckpt = os.path.join(out, "checkpoints",
                                    "last.weights.h5")
                os.makedirs(os.path.dirname(ckpt), exist_ok=True)
                model.save_weights(ckpt)
                model.load_weights(ckpt)
            """,
        ),
        Flagged(  # manual: Keras 3's load_weights returns no checkpoint status to check
            """
            import tensorflow as tf

            def train(model):
                model.save_weights("ckpt")
                model.load_weights("ckpt").assert_consumed()
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            def restore(model, prefix):
                model.load_weights(prefix + "/ckpt")
            """
        ),
        Clean(
            """
            import keras

            def train(model):
                model.save_weights("model.weights.h5")
                model.load_weights("model.weights.h5")
                model.load_weights("pretrained.h5")  # legacy HDF5 weights still load
            """
        ),
    ]

    def reports(self, pairing: Pairing) -> Iterator[Report]:
        for use in pairing.uses:
            if use.role == "save_weights":
                yield from self._writer(use, pairing)
            elif use.role == "load_weights" and id(use) not in pairing.writer_of:
                yield from self._lone_reader(use)

    def _writer(self, use: PathUse, pairing: Pairing) -> Iterator[Report]:
        site = use.site
        kind = use.path.legacy_kind() if use.path is not None else None
        has_format = "save_format" in site.keywords
        if kind == "weights" or (kind is None and not has_format):
            if kind == "weights" and has_format:
                drop = drop_keywords(site, {"save_format"})
                yield Report(
                    site,
                    "`save_format=` is gone in Keras 3; drop it",
                    fix=EditPlan((drop,), "drop save_format") if drop else None,
                )
            return
        what = {
            "h5": "a plain HDF5 file",
            "bare": "a TF checkpoint",
            "keras": "a `.keras` path",
            None: "with save_format=",
        }[kind]
        drop = drop_keywords(site, {"save_format"})
        plan, why = writer_plan(use, pairing, (drop,) if drop else ())
        message = f"saves weights as {what}; Keras 3 only writes `.weights.h5`"
        if plan is not None:
            message += f": write {new_name(use)}{paired_note(use, pairing)}{folder_note(use)}"
        else:
            message += f" (manual: {why})"
        yield Report(site, message, fix=plan, severity=Severity.ERROR)

    def _lone_reader(self, use: PathUse) -> Iterator[Report]:
        if use.path is None or use.path.legacy_kind() != "bare":
            return
        yield Report(
            use.site,
            f"loads the TF checkpoint {describe_path(use)}, which Keras 3 cannot read: "
            "convert it once (load it with TF-Keras 2 and `save_weights('x.weights.h5')`, or "
            "`kmigrate convert-weights` on the full model) and load the `.weights.h5` file",
            severity=Severity.ERROR,
        )
