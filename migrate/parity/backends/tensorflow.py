"""TensorFlow: the default reference, the only backend the Keras 2 (tf_keras) reference and
``--export`` (a TF SavedModel) run on."""

from __future__ import annotations

from dataclasses import dataclass

from kmigrate.parity.backends.profile import BackendProfile


@dataclass(frozen=True)
class TensorFlowProfile(BackendProfile):
    def device(self) -> str:
        import tensorflow as tf  # noqa: PLC0415 - in the tensorflow worker only

        gpus = tf.config.list_logical_devices("GPU")
        return f"gpu ({gpus[0].name})" if gpus else "cpu"


PROFILE = TensorFlowProfile(
    name="tensorflow",
    keras_backend="tensorflow",
    modules=("tensorflow",),
    pip="tensorflow",
    aliases=("tf",),
    runs_keras2=True,
    exports_saved_model=True,
)
