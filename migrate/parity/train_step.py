"""One training step, run the way users train: ``compile`` with SGD, ``train_on_batch``.

Layers that only break in training pass an inference check: dropout that never turns on
because ``training`` is read from ``**kwargs`` (Keras 3 passes it only to a ``call`` that
names it), an in-place ``x -= y`` that autograd rejects on torch, an unseeded
``keras.random`` op that jax refuses under ``jit``. So every side (reference and targets)
runs, from the same weights and batch:

1. Which layers are random in training: the model is called with ``training=True`` under
   each of `SEEDS`, on the batch repeated `SEARCH_REPEATS` times (a rare drop shows), and
   each layer's outputs compared; the first layer that differs is
   random, is then called with ``training=False``, and the search goes on. The parent
   compares the sets: a layer random on the reference but not on a target never sees
   ``training``. Weights are restored afterwards (batch norm moves its statistics).
2. The compared step: SGD (fixed learning rate), mean squared error against a fixed
   target batch, with the random layers (the reference's and this side's) called with
   ``training=False``, so the step is deterministic; the loss and every updated weight go
   to the parent.
3. When the model has random layers, one more step with them active, to show it runs
   (compiled as ``fit`` compiles it); its numbers are not compared across backends, but on
   a target the step is run twice from the same state (weights and seed-generator states)
   and the same seed, each compiled afresh, and must give the same loss: seeded randomness
   is reproducible. The reference runs it once (nothing compares the reference's repeat).

The search has no limit on the number of random layers (a model with twelve ``Dropout``
layers needs thirteen rounds), and every side seeds its generators before the model is
built, so the search sees the same masks on every run: the verdict does not change between
runs. A factory that returns a compiled model is recompiled with exactly what the step
needs: SGD, the loss, and no metrics (Keras 3 keeps the factory's metrics when ``compile``
is called without ``metrics``, and they may reject the step's targets).

On Keras 2 (tf_keras, the reference) the optimizer's variables are created before the step
(`build`, on the model's trainable variables, as the step itself would create them): created
inside the first call of the compiled train function, they make TensorFlow trace it a second
time. Same variables, same arithmetic, one trace; a step that raises that way is run again
from the same state the way Keras builds it, so an error is the one Keras gives.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from kmigrate.parity.model_layers import flatten

LEARNING_RATE = 0.01
LOSS = "mean_squared_error"
SEEDS = (1, 2, 3)  # a layer is random when any two calls under these seeds differ
# The search calls the model on the batch repeated this many times: with the 4 rows of the
# parity batch, a layer that drops 1 row in 10 (keras-efficientnets' DropConnect) kept every
# row in all three calls about one time in four, on one side and not the other (a false
# FAIL); on 64 rows, about once in 10^9. A model that takes only its own batch size gets
# the batch as it is.
SEARCH_REPEATS = 16
MODEL_ITSELF = "<model>"


def base_path(name: str) -> str:
    """'encoder/drop#2' (second call of a layer) -> 'encoder/drop'."""
    return name.split("#", 1)[0]


def map_leaves(value, leaves: list):
    """`value`'s structure (list / tuple / dict, as `model_layers.flatten` orders it) with its
    tensors replaced, in order, by `leaves`."""
    it = iter(leaves)

    def walk(node):
        if node is None:
            return None
        if isinstance(node, dict):
            return {key: walk(node[key]) for key in sorted(node, key=str)}
        if isinstance(node, list | tuple):
            if len(node) == 1:
                return [walk(node[0])]
            return [walk(item) for item in node]
        return next(it)

    return walk(value)


class TrainingCheck:
    """Runs the three parts above inside a worker (`worker` is a `worker.Worker`)."""

    def __init__(self, worker):
        self.worker = worker
        self.keras = worker.keras
        self.model = worker.model
        self.info: dict = {"learning_rate": LEARNING_RATE, "loss_function": LOSS}
        self.search_inputs: list[np.ndarray] | None = None  # the random-layer search's batch

    def run(self, structure) -> dict:
        """`structure`: the outputs of the eager call, for the shape of the targets."""
        task = self.worker.task
        y = self.targets(structure, task["train"])
        if y is None:
            return self.info
        snapshot = self.snapshot()
        try:
            started = time.perf_counter()
            random_here = self.random_layers()
            self.restore(snapshot)
            self.worker.add_timing("train.search", started)
            self.info["random_layers"] = random_here
            forced = set(random_here) | set(self.reference_random_layers())
            forced.discard(MODEL_ITSELF)
            started = time.perf_counter()
            self.info["loss"] = self.step(y, forced, snapshot)
            self.store_weights()
            self.worker.add_timing("train.compared", started)
            if random_here:
                started = time.perf_counter()
                self.random_steps(y, snapshot)
                self.worker.add_timing("train.random", started)
        finally:  # later stages (the SavedModel export) see the shared weights again
            self.restore(snapshot)
        return self.info

    def random_steps(self, y, snapshot) -> None:
        """Part 3: a step with the random layers active, to show that training runs; on a
        target, a second one from the same state and seed, whose loss must be the same
        (`verdicts.compare_train`). The reference's repeat would be compared with nothing,
        so the reference runs the step once (one compile and trace fewer per model)."""
        self.restore(snapshot)
        first = self.step(y, set(), snapshot)
        if self.worker.task["role"] == "reference":
            return
        self.restore(snapshot)
        again = self.step(y, set(), snapshot)
        self.info["random_step_losses"] = [first, again]

    def targets(self, structure, options: dict):
        """The fixed target batch: written by the reference, read by the targets."""
        path = options["targets"]
        flat_meta = self.worker.result.get("outputs", [])
        if any(not str(m.get("dtype", "")).startswith(("float", "bfloat")) for m in flat_meta):
            self.info["skipped"] = "an output is not floating point (no loss to compare)"
            return None
        if not self.model.trainable_weights:
            self.info["skipped"] = "the model has no trainable weights"
            return None
        if self.worker.task["role"] == "reference":
            rng = np.random.default_rng(int(self.worker.task["inputs"]["seed"]) + 1)
            arrays = [rng.standard_normal(tuple(m["shape"])).astype(np.float32) for m in flat_meta]
            np.savez(path, **{f"y{i}": a for i, a in enumerate(arrays)})
        else:
            if not Path(path).exists():
                raise RuntimeError(self.reference_skipped())
            with np.load(path) as data:
                arrays = [data[f"y{i}"] for i in range(len(data.files))]
        return map_leaves(structure, arrays)

    def reference_skipped(self) -> str:
        """Why there is no training step to compare with: the reference skipped its own."""
        path = self.worker.task["train"].get("reference_result")
        train = json.loads(Path(path).read_text(encoding="utf-8")).get("train") if path else None
        why = (train or {}).get("skipped", "it did not run one")
        names = [getattr(w, "path", None) or w.name for w in self.model.trainable_weights]
        return (
            f"the original trained nothing ({why}) but this model trains "
            f"{len(names)} weight(s) ({', '.join(names[:4])}): a weight the original "
            "left frozen would change in training"
        )

    def reference_random_layers(self) -> list[str]:
        path = self.worker.task["train"].get("reference_result")
        if not path:
            return []
        result = json.loads(Path(path).read_text(encoding="utf-8"))
        return list((result.get("train") or {}).get("random_layers", []))

    def random_layers(self) -> list[str]:
        """Every random layer, first to last: each round finds the first layer whose outputs
        vary and calls it with ``training=False`` in the next rounds. No limit: a layer
        (or the model's own call) found twice ends the search."""
        found: list[str] = []
        self.search_inputs = [np.concatenate([a] * SEARCH_REPEATS) for a in self.worker.inputs]
        while True:
            layer = self.first_varying(set(found))
            if layer is None or layer in found:
                return found
            found.append(layer)
            if layer == MODEL_ITSELF:
                return found

    def first_varying(self, forced: set[str]) -> str | None:
        runs = []
        layers = self.worker.layers
        repeated = self.search_inputs is not None
        for seed in SEEDS:
            records: list = []
            self.worker.runtime.seed(seed)
            restore = layers.install_hooks(records, forced)
            try:
                outputs = self.search_call()
            finally:
                layers.remove_hooks(restore)
            final = [self.worker.to_numpy(t) for _, t in flatten(outputs)]
            runs.append((records, final))
        if repeated and self.search_inputs is None:  # refused after a first call: again,
            return self.first_varying(forced)  # every run on the batch itself
        (first, out_a), *others = runs
        varying: list[int] = []
        for records, _ in others:
            for n, (a, b) in enumerate(zip(first, records)):
                if len(a[2]) != len(b[2]) or any(
                    not np.array_equal(x, y, equal_nan=True) for x, y in zip(a[2], b[2])
                ):
                    varying.append(n)
                    break
        if varying:
            return base_path(first[min(varying)][0])
        for _, out_b in others:
            if any(not np.array_equal(x, y, equal_nan=True) for x, y in zip(out_a, out_b)):
                return MODEL_ITSELF
        return None

    def search_call(self):
        """``model(batch, training=True)`` on the repeated batch, or on the batch itself
        once the model refused the repeated one (a fixed batch size)."""
        if self.search_inputs is not None:
            try:
                return self.model(self.worker.model_args(self.search_inputs), training=True)
            except Exception:  # noqa: BLE001 - any refusal: the plain batch decides
                self.search_inputs = None
        return self.model(self.worker.model_args(), training=True)

    def snapshot(self) -> list[tuple[object, np.ndarray]]:
        return self.worker.snapshot_state()

    def restore(self, snapshot: list[tuple[object, np.ndarray]]) -> None:
        self.worker.restore_state(snapshot)

    def compile(self) -> None:
        """SGD and the loss, nothing else: ``metrics=[]`` replaces a compiled factory's
        metrics (``None`` would keep them on Keras 3), the rest at Keras's defaults."""
        self.model.compile(
            optimizer=self.keras.optimizers.SGD(learning_rate=LEARNING_RATE),
            loss=LOSS,
            loss_weights=None,
            metrics=[],
            weighted_metrics=[],
        )

    def build_optimizer(self) -> bool:
        """Keras 2: create the optimizer's variables now, not inside the first trace of the
        train function (which then traces twice); True when it did (see the docstring)."""
        if not self.worker.runtime.legacy:
            return False  # Keras 3 builds the optimizer before it traces the step
        build = getattr(self.model.optimizer, "build", None)
        if build is None:
            return False
        try:
            build(self.model.trainable_variables)
        except Exception:  # noqa: BLE001 - an optimizer of another kind: Keras builds it
            self.compile()  # a fresh optimizer, as if nothing was tried
            return False
        return True

    def step(self, y, forced: set[str], state: list | None = None) -> float:
        """One compiled step from the current weights; `state` is their snapshot (to run
        the step again, unchanged, when building the optimizer first made it raise)."""
        layers = self.worker.layers
        restore = layers.install_hooks(None, forced)
        try:
            self.compile()
            prebuilt = state is not None and self.build_optimizer()
            self.worker.runtime.seed(SEEDS[0])
            try:
                logs = self.model.train_on_batch(self.worker.model_args(), y)
            except Exception:
                if not prebuilt:
                    raise
                self.restore(state)
                self.compile()  # Keras's own way: the optimizer built inside the step
                self.worker.runtime.seed(SEEDS[0])
                logs = self.model.train_on_batch(self.worker.model_args(), y)
        except Exception as exc:
            self.worker.runtime.profile.explain_train_error(self, exc, y)
            raise
        finally:
            layers.remove_hooks(restore)
        loss = logs[0] if isinstance(logs, list | tuple) else logs
        if isinstance(loss, dict):
            loss = loss.get("loss")
        return float(np.asarray(loss))

    def store_weights(self) -> None:
        """Updated weights under the reference's (group, weight) indices."""
        groups = self.worker.layers.weight_groups()
        for i, j, order in self.worker.transfer.weight_pairs(groups):
            variables = groups[j][1]
            for k_ref, k_here in order:
                value = np.asarray(self.worker.to_numpy(variables[k_here]))
                self.worker.arrays[f"tw{i}_{k_ref}"] = (
                    value if value.dtype.kind in "biufc" else (value.astype(np.float32))
                )
        self.info["groups"] = (
            [g.path for g, _ in groups] if self.worker.task["role"] == "reference" else None
        )
