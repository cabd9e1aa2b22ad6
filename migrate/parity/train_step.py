"""One training step, run the way users train: ``compile`` with SGD, ``train_on_batch``.

Layers that only break in training pass an inference check: dropout that never turns on
because ``training`` is read from ``**kwargs`` (Keras 3 passes it only to a ``call`` that
names it), an in-place ``x -= y`` that autograd rejects on torch, an unseeded
``keras.random`` op that jax refuses under ``jit``. So every side (reference and targets)
runs, from the same weights and batch:

1. Which layers are random in training: the model is called twice with ``training=True``
   under two seeds and each layer's outputs compared; the first layer that differs is
   random, is then called with ``training=False``, and the search goes on. The parent
   compares the sets: a layer random on the reference but not on a target never sees
   ``training``. Weights are restored afterwards (batch norm moves its statistics).
2. The compared step: SGD (fixed learning rate), mean squared error against a fixed
   target batch, with the random layers (the reference's and this side's) called with
   ``training=False``, so the step is deterministic; the loss and every updated weight go
   to the parent.
3. When the model has random layers, one more step with them active, to show it runs
   (compiled as ``fit`` compiles it); its numbers are not compared across backends, but the
   step is run twice from the same state (weights and seed-generator states) and the same
   seed, and must give the same loss: seeded randomness is reproducible.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np

LEARNING_RATE = 0.01
LOSS = "mean_squared_error"
MAX_RANDOM_LAYERS = 8
SEEDS = (1, 2)
MODEL_ITSELF = "<model>"
FRAME_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def base_path(name: str) -> str:
    """'encoder/drop#2' (second call of a layer) -> 'encoder/drop'."""
    return name.split("#", 1)[0]


def map_leaves(value, leaves: list):
    """`value`'s structure (list / tuple / dict, as `worker._flatten` orders it) with its
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

    def run(self, structure) -> dict:
        """`structure`: the outputs of the eager call, for the shape of the targets."""
        task = self.worker.task
        y = self.targets(structure, task["train"])
        if y is None:
            return self.info
        snapshot = self.snapshot()
        try:
            random_here = self.random_layers()
            self.restore(snapshot)
            self.info["random_layers"] = random_here
            forced = set(random_here) | set(self.reference_random_layers())
            forced.discard(MODEL_ITSELF)
            self.info["loss"] = self.step(y, forced)
            self.store_weights()
            if random_here:
                self.restore(snapshot)
                first = self.step(y, set())
                self.restore(snapshot)
                again = self.step(y, set())
                self.info["random_step_losses"] = [first, again]
        finally:  # later stages (the SavedModel export) see the shared weights again
            self.restore(snapshot)
        return self.info

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
        found: list[str] = []
        for _ in range(MAX_RANDOM_LAYERS):
            layer = self.first_varying(set(found))
            if layer is None:
                return found
            found.append(layer)
            if layer == MODEL_ITSELF:
                return found
        self.info["note"] = f"more than {MAX_RANDOM_LAYERS} random layers: search stopped"
        return found

    def first_varying(self, forced: set[str]) -> str | None:
        runs = []
        for seed in SEEDS:
            records: list = []
            self.worker.reseed(seed)
            restore = self.worker.install_hooks(records, forced)
            try:
                outputs = self.model(self.worker.model_args(), training=True)
            finally:
                self.worker.remove_hooks(restore)
            final = [self.worker.to_numpy(t) for _, t in self.worker.flatten(outputs)]
            runs.append((records, final))
        (first, out_a), (second, out_b) = runs
        for a, b in zip(first, second):
            if len(a[2]) != len(b[2]) or any(
                not np.array_equal(x, y, equal_nan=True) for x, y in zip(a[2], b[2])
            ):
                return base_path(a[0])
        if any(not np.array_equal(x, y, equal_nan=True) for x, y in zip(out_a, out_b)):
            return MODEL_ITSELF
        return None

    def snapshot(self) -> list[tuple[object, np.ndarray]]:
        return self.worker.snapshot_state()

    def restore(self, snapshot: list[tuple[object, np.ndarray]]) -> None:
        self.worker.restore_state(snapshot)

    def step(self, y, forced: set[str]) -> float:
        restore = self.worker.install_hooks(None, forced)
        try:
            self.model.compile(
                optimizer=self.keras.optimizers.SGD(learning_rate=LEARNING_RATE), loss=LOSS
            )
            self.worker.reseed(SEEDS[0])
            logs = self.model.train_on_batch(self.worker.model_args(), y)
        except Exception as exc:
            if self.worker.task["backend"] == "torch":
                self.explain_autograd_error(exc, y)
            raise
        finally:
            self.worker.remove_hooks(restore)
        loss = logs[0] if isinstance(logs, list | tuple) else logs
        if isinstance(loss, dict):
            loss = loss.get("loss")
        return float(np.asarray(loss))

    def explain_autograd_error(self, exc: Exception, y) -> None:
        """An autograd error (an in-place ``x -= y`` on a tensor that backward needs) is
        raised in ``backward()``, far from the layer. Replaying the step in torch's anomaly
        mode gives the forward line that made the tensor; `exc` gets that line and layer."""
        import torch  # noqa: PLC0415 - torch backend only

        with warnings.catch_warnings(record=True) as caught, torch.autograd.detect_anomaly():
            warnings.simplefilter("always")
            try:
                self.model.train_on_batch(self.worker.model_args(), y)
            except Exception:  # noqa: BLE001, S110 - the first error is the one reported
                pass
        text = "\n".join(str(w.message) for w in caught if "forward call" in str(w.message))
        for file, line in reversed(FRAME_LINE.findall(text)):
            layer = self.worker.layer_at(file, int(line))
            if layer:
                exc.kmigrate_layer = layer
                exc.kmigrate_forward = f"{file}:{line}"
                return

    def store_weights(self) -> None:
        """Updated weights under the reference's (group, weight) indices."""
        groups = self.worker.weight_groups()
        for i, j, order in self.worker.weight_pairs(groups):
            variables = groups[j][1]
            for k_ref, k_here in order:
                value = np.asarray(self.worker.to_numpy(variables[k_here]))
                self.worker.arrays[f"tw{i}_{k_ref}"] = (
                    value if value.dtype.kind in "biufc" else (value.astype(np.float32))
                )
        self.info["groups"] = (
            [g.path for g, _ in groups] if self.worker.task["role"] == "reference" else None
        )
