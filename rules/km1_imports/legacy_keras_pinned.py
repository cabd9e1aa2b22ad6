"""KM104: Code pins Keras 2 through `tf_keras` or `TF_USE_LEGACY_KERAS`."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import ImportSite
from kmigrate.rules.base import Clean, Flagged, Report, Rule


class LegacyKerasPinned(Rule):
    id = "KM104"
    name = "legacy-keras-pinned"
    summary = "Code pins Keras 2 through `tf_keras` or `TF_USE_LEGACY_KERAS`."
    rationale = (
        "`tf_keras` is Keras 2 kept alive for TensorFlow only, and `TF_USE_LEGACY_KERAS=1` "
        "makes `tf.keras` resolve to it. Both keep the code off JAX and PyTorch; they are a "
        "bridge while migrating, not a destination."
    )
    fix_safety = (
        "Not fixed automatically: remove the pin once the code runs on Keras 3. Not "
        "reported in the modules of the `tf_keras` package itself (in its `__init__.py` "
        "chain): scanning tf-keras, its modules import one another."
    )
    wants_imports = True
    string_constants = frozenset({"TF_USE_LEGACY_KERAS"})
    examples = [
        Flagged("import tf_keras as keras\n"),
        Flagged('import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n'),
        Clean("import keras\n"),
    ]

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        if site.module.package.partition(".")[0] == "tf_keras":
            return  # a module of the `tf_keras` package itself (tf-keras's own repository)
        if any(m == "tf_keras" or m.startswith("tf_keras.") for m in site.modules):
            yield Report(
                site,
                "imports `tf_keras` (Keras 2, TensorFlow only): import `keras` (Keras 3) once "
                "the code is migrated",
            )

    def check_node(self, site) -> Iterable[Report]:
        yield Report(
            site, "`TF_USE_LEGACY_KERAS` pins `tf.keras` to Keras 2: remove it after migrating"
        )
