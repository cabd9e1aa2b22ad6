"""TensorFlow: the default reference, the only backend the Keras 2 (tf_keras) reference and
``--export`` (a TF SavedModel) run on."""

from __future__ import annotations

from kmigrate.parity.backends.profile import BackendProfile

PROFILE = BackendProfile(
    name="tensorflow",
    keras_backend="tensorflow",
    modules=("tensorflow",),
    pip="tensorflow",
    aliases=("tf",),
    runs_keras2=True,
    exports_saved_model=True,
)
