"""The framework a worker runs on: Keras 3 on one backend (its `BackendProfile`) or Keras 2
(tf_keras) for a legacy reference. Everything the worker does with tensors goes through
here: importing Keras, seeding, getting NumPy arrays and dtype names out."""

from __future__ import annotations

import os
import random
import sys

import numpy as np

from kmigrate.parity import backends as registry
from kmigrate.parity.isolation import remember_keras_defaults
from kmigrate.parity.tracebacks import StageError


class KerasRuntime:
    """One side's Keras: `keras` is the imported module (``keras`` or ``tf_keras``)."""

    def __init__(self, task: dict):
        self.backend = task["backend"]
        self.legacy = task["keras"] == 2  # Keras 2 through tf_keras
        self.profile = registry.load(task["backend"], task.get("profile_module") or "")
        self.keras = None

    def import_keras(self, result: dict) -> None:
        """Import Keras (the backend was chosen by the environment) and configure it."""
        if self.legacy:
            import tf_keras as keras  # noqa: PLC0415 - the backend is chosen by the env

            result["keras_package"] = "tf_keras"
        else:
            import keras  # noqa: PLC0415

            result["keras_package"] = "keras"
            actual = keras.backend.backend()
            if actual != self.profile.keras_backend:
                raise StageError(
                    f"Keras runs on '{actual}' although KERAS_BACKEND="
                    f"{os.environ.get('KERAS_BACKEND')}; is keras imported before kmigrate "
                    f"sets it (sitecustomize)?"
                )
        self.keras = keras
        remember_keras_defaults(keras)  # what the next model in this process starts from
        self.show_full_tracebacks()
        self.profile.after_import(keras, result["notes"])
        result["keras_version"] = keras.__version__

    def show_full_tracebacks(self) -> None:
        """Keras hides its frames and, with them, the failing line inside a layer's call()."""
        try:
            if self.legacy:
                import tensorflow as tf  # noqa: PLC0415 - already imported by tf_keras

                tf.debugging.disable_traceback_filtering()
            else:
                self.keras.config.disable_traceback_filtering()
        except Exception:  # noqa: BLE001 - shorter tracebacks are no reason to fail
            pass

    def to_numpy(self, tensor) -> np.ndarray:
        if isinstance(tensor, np.ndarray):
            return tensor
        if self.legacy:
            return np.asarray(tensor.numpy() if hasattr(tensor, "numpy") else tensor)
        return np.asarray(self.keras.ops.convert_to_numpy(tensor))

    def dtype_name(self, tensor) -> str:
        dtype = getattr(tensor, "dtype", None)
        if dtype is None:
            return str(np.asarray(tensor).dtype)
        if not self.legacy:
            try:
                return self.keras.backend.standardize_dtype(dtype)
            except Exception:  # noqa: BLE001 - fall through to the generic spelling
                pass
        name = getattr(dtype, "name", None) or str(dtype)
        return name.replace("torch.", "")

    def as_variable_dtype(self, array: np.ndarray, variable) -> np.ndarray:
        dtype = self.dtype_name(variable)
        return array.astype(dtype) if dtype in np.sctypeDict else array

    def seed(self, seed: int) -> None:
        """Fixed initial weights and random ops, so that the same run gives the same numbers.

        ``keras.utils.set_random_seed`` also seeds TensorFlow, importing it (seconds) on
        the other backends too; there, set Keras's own global seed instead.
        """
        if self.legacy or "tensorflow" in sys.modules:
            self.keras.utils.set_random_seed(seed)
            return
        try:
            from keras.src.backend.common import global_state  # noqa: PLC0415
            from keras.src.random import seed_generator  # noqa: PLC0415
            from keras.src.utils import rng_utils  # noqa: PLC0415
        except ImportError:  # another Keras layout: pay for the TF import
            self.keras.utils.set_random_seed(seed)
            return
        global_state.set_global_attribute(rng_utils.GLOBAL_RANDOM_SEED, seed)
        global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
        random.seed(seed)
        np.random.seed(seed)
        self.profile.seed(seed)
