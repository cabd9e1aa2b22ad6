"""KM104: Code pins Keras 2 through `tf_keras` or `TF_USE_LEGACY_KERAS`."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import ImportSite
from kmigrate.rules.base import Clean, Flagged, Report
from kmigrate.rules.common.call_differences import SAFETY_NOTE
from kmigrate.rules.common.keras_import_rewrite import (
    REEXPORT_NOTE,
    TF_KERAS_PACKAGE,
    KerasImportRewrite,
)


class LegacyKerasPinned(KerasImportRewrite):
    id = "KM104"
    name = "legacy-keras-pinned"
    summary = "Code pins Keras 2 through `tf_keras` or `TF_USE_LEGACY_KERAS`."
    rationale = (
        "`tf_keras` is Keras 2 kept alive for TensorFlow only, and `TF_USE_LEGACY_KERAS=1` "
        "makes `tf.keras` resolve to it. Both keep the code off JAX and PyTorch; they are a "
        "bridge while migrating, not a destination."
    )
    fix_safety = (
        "`import tf_keras as keras`, `from tf_keras import layers` and "
        "`from tf_keras.layers import Dense` become imports of `keras` when every use of "
        "the bound name exists in Keras 3 at the same place (tf_keras has the API of "
        "`tf.keras` in TensorFlow 2.15, as KM102 checks it); until then the import is kept, "
        "and `kmigrate apply` changes it once the uses other rules migrate are gone. "
        "`import tf_keras` (uses spelled `tf_keras.X`) and `TF_USE_LEGACY_KERAS` are left "
        "to a person. Not reported in the modules of the `tf_keras` package itself (in "
        "its `__init__.py` chain): scanning tf-keras, its modules import one another. "
        + SAFETY_NOTE
        + REEXPORT_NOTE
    )
    wants_imports = True
    string_constants = frozenset({"TF_USE_LEGACY_KERAS"})
    roots = (TF_KERAS_PACKAGE,)
    examples = [
        Flagged(
            """
            import tensorflow as tf
            import tf_keras as keras


            class Noise(keras.layers.Layer):
                def call(self, x):
                    return x + tf.random.uniform(tf.shape(x), seed=1)
            """,
            """
            import tensorflow as tf
            import keras


            class Noise(keras.layers.Layer):
                def call(self, x):
                    return x + tf.random.uniform(tf.shape(x), seed=1)
            """,
        ),
        Flagged(
            """
            from tf_keras import layers, backend as K
            from tf_keras.layers import Dense
            """,
            """
            from keras import layers, backend as K
            from keras.layers import Dense
            """,
        ),
        Flagged(  # no `keras.backend.mean` in Keras 3: the import waits for KM201's fix
            """
            import tf_keras as keras


            def scale(x):
                return keras.backend.mean(x)
            """
        ),
        Flagged(
            """
            import tf_keras as keras

            rnn = keras.layers.CuDNNLSTM(8)  # not in Keras 3: the import stays
            """
        ),
        Flagged(  # Keras 3's Lion would train at 1e-3: the import stays
            """
            from tf_keras.optimizers import Lion

            optimizer = Lion()
            """
        ),
        Flagged("import tf_keras\n\nlayer = tf_keras.layers.Dense(2)\n"),
        Flagged('import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n'),
        Clean("import keras\n"),
    ]

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        if site.module.package.partition(".")[0] == "tf_keras":
            return  # a module of the `tf_keras` package itself (tf-keras's own repository)
        if not any(m == "tf_keras" or m.startswith("tf_keras.") for m in site.modules):
            return
        reports = list(super().check_import(site))
        yield from reports or [
            Report(
                site,
                "imports `tf_keras` (Keras 2, TensorFlow only): import `keras` (Keras 3) once "
                "the code is migrated",
            )
        ]

    def check_node(self, site) -> Iterable[Report]:
        yield Report(
            site, "`TF_USE_LEGACY_KERAS` pins `tf.keras` to Keras 2: remove it after migrating"
        )
