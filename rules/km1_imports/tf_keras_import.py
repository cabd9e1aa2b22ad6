"""KM102: Import from `tensorflow.keras`; Keras 3 is imported as `keras`."""

from __future__ import annotations

from kmigrate.rules.base import Clean, Flagged
from kmigrate.rules.common.call_differences import SAFETY_NOTE
from kmigrate.rules.common.keras_import_rewrite import (
    REEXPORT_NOTE,
    TENSORFLOW_KERAS,
    TENSORFLOW_PYTHON_KERAS,
    KerasImportRewrite,
)


class TfKerasImport(KerasImportRewrite):
    id = "KM102"
    name = "tf-keras-import"
    summary = "Import from `tensorflow.keras`; Keras 3 is imported as `keras`."
    rationale = (
        "`from tensorflow import keras` and `from tensorflow.keras.X import Y` load Keras "
        "through TensorFlow, so the module cannot run on JAX or PyTorch. The same names "
        "come from the `keras` package on every backend. So do those of TensorFlow's "
        "private copy of Keras 2, `tensorflow.python.keras`, which older code imported."
    )
    fix_safety = (
        "Exact when every imported name exists in Keras 3 under one module. Imports that "
        "mix Keras and non-Keras TensorFlow names, or names Keras 3 lacks, are reported "
        "for a manual edit. " + SAFETY_NOTE + REEXPORT_NOTE
    )
    wants_imports = True
    examples = [
        Flagged(
            """
            from tensorflow import keras

            model = keras.Sequential()
            """,
            """
            import keras

            model = keras.Sequential()
            """,
        ),
        Flagged(
            """
            from tensorflow.keras import layers, backend as K
            from tensorflow.keras.layers import (
                Dense,  # the head
                Dropout,
            )
            """,
            """
            from keras import layers, backend as K
            from keras.layers import (
                Dense,  # the head
                Dropout,
            )
            """,
        ),
        Flagged(
            """
            from tensorflow.keras.layers.experimental.preprocessing import Rescaling
            import tensorflow.keras as tfk
            """,
            """
            from keras.layers import Rescaling
            import keras as tfk
            """,
        ),
        Flagged("from tensorflow import keras, nn\n"),
        Flagged(
            """
            from tensorflow import losses, optimizers as opt

            model.compile(opt.Adam(), losses.Huber())
            """,
            """
            from keras import losses, optimizers as opt

            model.compile(opt.Adam(), losses.Huber())
            """,
        ),
        Flagged(
            """
            from tensorflow import losses

            loss = losses.mean_squared_error(labels, predictions)  # TF1 or Keras: KM107
            """
        ),
        Flagged(
            """
            from tensorflow.keras import backend as K

            def scale(x):
                return K.mean(x)  # no Keras 3 `keras.backend.mean`: the import stays
            """
        ),
        Flagged(
            """
            import tensorflow.keras as tfkeras

            def swish(x, backend):
                return x * backend.sigmoid(x)  # no `keras.backend.sigmoid` in Keras 3

            def build(backend=tfkeras.backend):
                return swish(tfkeras.Input((4,)), backend)
            """
        ),
        Flagged(
            """
            import tensorflow.keras as tfkeras

            def build(layers=tfkeras.layers):
                return layers.Dense(4)
            """,
            """
            import keras as tfkeras

            def build(layers=tfkeras.layers):
                return layers.Dense(4)
            """,
        ),
        Flagged(
            """
            from tensorflow.python import keras
            import tensorflow.python.keras as tfk
            from tensorflow.python.keras.layers import Dense

            model = keras.Sequential([Dense(2)])
            optimizer = tfk.optimizers.Adam()
            """,
            """
            import keras
            import keras as tfk
            from keras.layers import Dense

            model = keras.Sequential([Dense(2)])
            optimizer = tfk.optimizers.Adam()
            """,
        ),
        Flagged(  # Keras 2's fourth parameter is `axis`, Keras 3's `ignore_class`
            """
            from tensorflow.keras import losses


            def loss(y_true, logits):
                return losses.sparse_categorical_crossentropy(y_true, logits, True, 1)
            """
        ),
        Flagged(
            """
            from tensorflow.python.keras.engine import base_layer_utils

            base_layer_utils.make_variable("w", (2,))  # not in Keras 3
            """
        ),
        Clean("import keras\nfrom keras import layers\nimport tensorflow as tf\n"),
    ]

    roots = (TENSORFLOW_KERAS, TENSORFLOW_PYTHON_KERAS)
