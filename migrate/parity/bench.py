"""``kmigrate parity --bench``, the worker's side: how long this side takes to run the model.

Timed after the parity checks, in the same process (the framework is imported, the model
built and loaded with the shared weights), and only what the checks ran without raising:
``model.predict`` on one batch (``predict_on_batch``: the compiled predict step, without the
data pipeline ``predict`` builds on every call) when the predict check ran, one
``train_on_batch`` step when the training check ran a step (a model with nothing to train is
not timed). Each is run `warmup` times
first (tracing and compiling: ``tf.function``, XLA, ``jax.jit``) and then `runs` times, each
run timed on its own; the raw seconds go to the result, the parent (`bench_report`) takes
medians, spreads and ratios. Nothing here picks a device: each backend runs where Keras
puts it by default (a GPU when the framework sees one), and the result says where.

The batch is the parity batch repeated to `batch_size` rows (the same rows on every side,
integer ranges kept). The training step uses the parity check's loss and optimizer (SGD,
mean squared error against a fixed random target) and the model's weights are put back
afterwards.

Then one eager call ``model(x, training=False)`` per run with every layer's ``call``
wrapped to time it: each layer's own time (its sub-layers' time taken out), its outputs
converted to NumPy inside the timing so that asynchronous backends (jax) are measured,
not just dispatched. Eager is not how ``predict`` runs (compiled code fuses layers), so the
parent names the slowest layer as a hint, and says it was measured eagerly.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from time import perf_counter

import numpy as np

from kmigrate.parity.model_layers import flatten
from kmigrate.parity.tracebacks import error_info
from kmigrate.parity.train_step import TrainingCheck, map_leaves

WARMUP_RUNS = 3  # the first call traces and compiles; a few more settle caches
LAYER_RUNS = 5  # eager calls timed layer by layer (at most; never more than --bench-runs)
MODEL_OWN = "<model>"  # the model's own code, outside any layer's call


def repeat_rows(inputs: list[np.ndarray], batch_size: int) -> list[np.ndarray]:
    """The parity batch repeated (or cut) to `batch_size` rows, the same on every side."""
    rows = np.arange(batch_size) % len(inputs[0])
    return [np.take(array, rows, axis=0) for array in inputs]


def time_runs(action: Callable[[], object], warmup: int, runs: int) -> list[float]:
    """Seconds of each of `runs` calls of `action`, after `warmup` untimed ones."""
    for _ in range(warmup):
        action()
    seconds = []
    for _ in range(runs):
        started = perf_counter()
        action()
        seconds.append(perf_counter() - started)
    return seconds


class BackendBench:
    """The timings of one worker (`worker.Worker`); `run` writes ``result["bench"]``."""

    def __init__(self, worker):
        self.worker = worker
        self.model = worker.model
        self.profile = worker.runtime.profile
        options = worker.task["bench"]
        self.runs = int(options["runs"])
        self.batch_size = int(options["batch_size"])
        self.warmup = int(options.get("warmup", WARMUP_RUNS))
        self.info: dict = {
            "batch_size": self.batch_size,
            "runs": self.runs,
            "warmup": self.warmup,
            "device": self._device(),
            # busy machines stretch timings: say how busy this one was
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "cpus": os.cpu_count(),
        }

    def _device(self) -> str:
        try:
            return self.profile.device()
        except Exception as exc:  # noqa: BLE001 - where it ran is a note, never a failure
            return f"unknown ({type(exc).__name__})"

    def run(self) -> dict:
        """Time what the checks ran; never raises (the parity result must still be written)."""
        self.worker.result["bench"] = self.info
        if self.worker.result.get("status") != "ok":
            self.info["skipped"] = "the model did not run here"
            return self.info
        try:
            self._run()
        except Exception as exc:  # noqa: BLE001 - reported in the bench, the checks stand
            first = str(exc).strip().partition("\n")[0]
            self.info["skipped"] = f"the bench raised {type(exc).__name__}: {first}"
        return self.info

    def _run(self) -> None:
        checks = self.worker.result.get("checks") or {}
        args = self.worker.model_args(repeat_rows(self.worker.inputs, self.batch_size))
        snapshot = self.worker.snapshot_state()
        try:
            outputs = self.part("predict", checks, lambda: self.time_predict(args))
            self.part("train", checks, lambda: self.time_train(args, outputs))
            if not self.profile.inference_only:  # a compiled graph has no layer calls
                self.part("layers", None, lambda: self.time_layers(args))
        finally:  # training moved the weights: later stages see the shared ones
            self.worker.restore_state(snapshot)

    def part(self, name: str, checks: dict | None, action: Callable[[], object]):
        """Run one timing unless its check did not run; an error is recorded, not raised."""
        if checks is not None and (checks.get(name) or {}).get("status") != "ok":
            why = "failed" if name in checks else "was not run"
            self.info[name] = {"skipped": f"the {name} check {why}"}
            return None
        try:
            return action()
        except Exception as exc:  # noqa: BLE001 - a timing that raises is reported, not fatal
            self.info[name] = {"error": error_info(f"bench {name}", exc)}
            return None

    def time_predict(self, args):
        outputs = []

        def predict() -> None:
            outputs[:] = [self.profile.bench_predict(self.model, args)]

        seconds = time_runs(predict, self.warmup, self.runs)
        self.info["predict"] = {
            "seconds": seconds,
            "jit_compile": str(getattr(self.model, "jit_compile", None)),
        }
        return outputs[0]

    def time_train(self, args, outputs) -> None:
        train = self.worker.result.get("train") or {}
        if "loss" not in train:
            self.info["train"] = {"skipped": train.get("skipped") or "no training step ran"}
            return
        if outputs is None:
            self.info["train"] = {"skipped": "the predict timing did not run (target shapes)"}
            return
        rng = np.random.default_rng(int(self.worker.task["inputs"]["seed"]) + 2)
        targets = [
            rng.standard_normal(np.shape(self.worker.to_numpy(t))).astype(np.float32)
            for _, t in flatten(outputs)
        ]
        y = map_leaves(outputs, targets)
        TrainingCheck(self.worker).compile()  # SGD and mean squared error, as the check

        def step() -> None:
            self.profile.bench_train(self.model, args, y)

        seconds = time_runs(step, self.warmup, self.runs)
        self.info["train"] = {
            "seconds": seconds,
            "jit_compile": str(getattr(self.model, "jit_compile", None)),
        }

    def time_layers(self, args) -> None:
        """Each layer's own seconds in eager calls (see the module docstring)."""
        runs = max(1, min(LAYER_RUNS, self.runs))
        per_layer: dict[str, list[float]] = {}
        classes: dict[str, str] = {MODEL_OWN: type(self.model).__name__}
        totals = []
        self.profile.call(self.model, args, self.batch_size)  # warm: first-call set-up
        for _ in range(runs):
            own: dict[str, float] = {}
            stack = [0.0]  # inclusive seconds of the layers called at each depth
            hook = functools.partial(self._timed_call, own=own, stack=stack, classes=classes)
            restore = self.worker.layers.wrap_calls(hook)
            try:
                started = perf_counter()
                self._sync(self.profile.call(self.model, args, self.batch_size))
                total = perf_counter() - started
            finally:
                self.worker.layers.remove_hooks(restore)
            own[MODEL_OWN] = max(0.0, total - stack[0])
            totals.append(total)
            for path, seconds in own.items():
                per_layer.setdefault(path, []).append(seconds)
        self.info["layers"] = {
            "mode": "eager",
            "runs": runs,
            "total_seconds": totals,
            "layers": [
                {"path": path, "class": classes.get(path, ""), "seconds": seconds}
                for path, seconds in per_layer.items()
            ],
        }

    def _timed_call(self, path: str, layer, original, *, own: dict, stack: list, classes: dict):
        classes[path] = type(layer).__name__

        @functools.wraps(original)
        def timed(*args, **kwargs):
            stack.append(0.0)
            started = perf_counter()
            try:
                output = original(*args, **kwargs)
                self._sync(output)
            finally:
                elapsed = perf_counter() - started
                children = stack.pop()
                stack[-1] += elapsed
                own[path] = own.get(path, 0.0) + max(0.0, elapsed - children)
            return output

        return timed

    def _sync(self, output) -> None:
        """Wait for the values (jax dispatches asynchronously); symbolic ones are skipped."""
        for _, tensor in flatten(output):
            try:
                self.worker.to_numpy(tensor)
            except Exception:  # noqa: BLE001, S112 - a symbolic output has nothing to wait for
                continue
