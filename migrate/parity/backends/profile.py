"""What a parity backend is: one `BackendProfile`, read by the planner, the worker, the
training check and the help text instead of ``if backend == ...`` branches.

A profile holds everything that differs between backends: the ``KERAS_BACKEND`` value, what
must be importable and what to install, the checks it can run, environment variables for
its worker, and hooks the worker calls at fixed points (after Keras is imported, when
seeding, to call or predict, when a training step raises). Hooks import their framework
inside the method: the parent process reads profiles and never imports a framework.
The timing hooks of ``--bench`` (`bench_predict`, `bench_train`, `device`) sit beside
`call` and `predict`.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass

ALL_CHECKS = ("call", "predict", "train")


@dataclass(frozen=True)
class BackendProfile:
    """One backend as parity runs it. Subclass and override a hook to change a behaviour."""

    name: str  # as users type it (--backends) and reports show it
    keras_backend: str  # the KERAS_BACKEND value its worker gets
    modules: tuple[str, ...]  # importable for the backend to run (checked with find_spec)
    pip: str  # what to install ("jax[cpu]"); the `backends` extra lists every profile's
    aliases: tuple[str, ...] = ()  # other names users type ("tf", "pytorch")
    checks: tuple[str, ...] = ALL_CHECKS  # what it can run; an inference-only backend: predict
    runs_keras2: bool = False  # the Keras 2 (tf_keras) reference runs on it
    exports_saved_model: bool = False  # --export (model.export to a TF SavedModel) runs on it
    watch_tensorflow: bool = False  # note whether a converted model still imports TensorFlow

    @property
    def inference_only(self) -> bool:
        """No eager call and no training: never the reference, left out of the default run."""
        return "train" not in self.checks and "call" not in self.checks

    # -- in the parent, before the worker starts -----------------------------------------

    def environment(self, env: MutableMapping[str, str], *, compile_cache: str | None) -> None:
        """Set the worker's environment (``KERAS_BACKEND`` is set by the caller)."""

    # -- in the worker ------------------------------------------------------------------

    def after_import(self, keras, notes: list[str]) -> None:
        """Configure the framework once Keras is imported; say what was changed in `notes`."""

    def seed(self, seed: int) -> None:
        """Seed the framework's own generator (beside Python's, NumPy's and Keras's)."""

    def call(self, model, args, batch_size: int):
        """The eager call as users write it."""
        return model(args, training=False)

    def predict(self, model, args, batch_size: int):
        """``model.predict``, compiled the way the backend compiles it by default."""
        return model.predict(args, batch_size=batch_size, verbose=0)

    def bench_predict(self, model, args):
        """One timed predict of ``--bench``: the compiled predict step on one batch, without
        the data pipeline ``model.predict`` builds on every call."""
        return model.predict_on_batch(args)

    def bench_train(self, model, args, y):
        """One timed training step of ``--bench`` (the model is compiled by then)."""
        return model.train_on_batch(args, y)

    def device(self) -> str:
        """Where Keras runs the model on this backend by default (``--bench`` reports it;
        nothing here chooses it)."""
        return "default device"

    def explain_train_error(self, check, exc: Exception, y) -> None:
        """Add the layer that made a training step raise to `exc` when the error hides it
        (``exc.kmigrate_layer``, ``exc.kmigrate_forward``); `check` is the `TrainingCheck`."""
