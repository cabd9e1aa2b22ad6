"""Models on one backend, in their own process: ``python -m kmigrate.parity.worker JOB.json``.

The parent sets ``KERAS_BACKEND`` (and ``TF_USE_LEGACY_KERAS=1`` for a Keras 2 reference)
before starting this process, because Keras picks its backend at import time. The job file
lists tasks (one side's models on one backend), run in order with the framework imported
once: several tasks each in a child forked from this process after that import
(`fork_server`), or, where forking is unsafe, here one after the other (`isolation`); each
task says what to build, where the input batch and the weights are, and where to write
results.

Steps of a task: load the user's module (which imports its framework), import Keras, build
or load the model; a target then waits until the reference has written the weights and the batch (so
the slow imports of all backends overlap); then inputs, weights, and the checks the job
asks for, each run as users run the model: ``call`` (``model(x, training=False)`` while
recording every layer's outputs), ``predict`` (``model.predict``, compiled the way the
backend compiles it by default: jit on jax) and ``train`` (one SGD step, `train_step`);
optionally a SavedModel export served back through ``tf.saved_model.load``. A check that
raises is recorded with the layer whose code raised, and the next check still runs.

Each process holds one side only (the reference or one target) and refuses to go on when a
module of the other side's tree was imported: the before and after trees often have modules
of the same name, and one process would silently run the original twice.

Results go to a JSON file and an ``.npz``; an exception is recorded with the stage it
happened in and the tail of its traceback, so the parent can say what broke where.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from kmigrate.parity.batch import InputBatch
from kmigrate.parity.bench import BackendBench
from kmigrate.parity.export import SavedModelExport
from kmigrate.parity.fork_server import can_fork, restore_blas_threads, run_in_child
from kmigrate.parity.isolation import (
    FRESH_PROCESS_EXIT,
    ModelIsolation,
    needs_fresh_process,
    prepare_process,
)
from kmigrate.parity.model_layers import ModelLayers, flatten
from kmigrate.parity.model_source import ModelSource
from kmigrate.parity.runtime import KerasRuntime
from kmigrate.parity.tf_watch import TensorFlowWatch
from kmigrate.parity.tracebacks import StageError, error_info
from kmigrate.parity.train_step import TrainingCheck
from kmigrate.parity.weight_transfer import WeightTransfer, savable

__all__ = ["StageError", "Worker", "drop_working_folder_from_path", "main", "run_task"]
_error_info = error_info  # the name tests and older callers import from here

WAIT_POLL_SECONDS = 0.05
SKIP = "skip"  # the go file's text when the reference failed (a batched worker moves on)


class Worker:
    """One task in this process: the stages of the module docstring, each timed, each
    failure recorded with its stage (and the model layer whose code raised)."""

    def __init__(self, task: dict):
        self.task = task
        self.result: dict = {
            "status": "ok",
            "role": task["role"],
            "backend": task["backend"],
            "keras_major": task["keras"],
            "timings": {},
            "notes": [],
        }
        self.arrays: dict[str, np.ndarray] = {}
        self.runtime = KerasRuntime(task)
        self.source = ModelSource(task, self.result)
        self.model = None
        self.layers: ModelLayers | None = None
        self.transfer = WeightTransfer(self)
        self.inputs: list[np.ndarray] = []
        self.call_outputs = None
        self.stage = "load"

    @property
    def keras(self):
        return self.runtime.keras

    @property
    def batch_size(self) -> int:
        return len(self.inputs[0])

    def to_numpy(self, tensor) -> np.ndarray:
        return self.runtime.to_numpy(tensor)

    def dtype_name(self, tensor) -> str:
        return self.runtime.dtype_name(tensor)

    def check_isolation(self) -> None:
        self.source.check_isolation()

    # -- stages ----------------------------------------------------------------------------

    def enter(self, stage: str) -> None:
        """Note the stage, in the result and in a file the parent reads: which model of the
        job (its position) and stage this process is in, for time limits and time-outs."""
        self.stage = stage
        if self.task.get("stage_file"):
            text = f"{self.task.get('position', 0)} {stage}"
            Path(self.task["stage_file"]).write_text(text, encoding="utf-8")

    def run(self) -> None:
        started = time.perf_counter()
        watch = TensorFlowWatch().install() if self.task.get("watch_tensorflow") else None
        try:
            self.timed_stage("load", "import", self.source.load_user_code)
            self.source.check_isolation()
            self.timed_stage("import", "import", lambda: self.runtime.import_keras(self.result))
            self.timed_stage("build", "build", self.build_model)
            if self.task.get("wait_for"):
                self.timed_stage("wait", "wait", self.wait_for_reference)
            self.enter("inputs")
            self.inputs = InputBatch(self).prepare(self.task["inputs"])
            self.timed_stage("build", "build", self.ensure_built)
            self.timed_stage("weights", "weights", self.transfer.run)
            self.timed_stage("weights", "weights", self.transfer.perturb_if_degenerate)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported, none lost
            self.result["status"] = "error"
            self.result["error"] = self.error_info(self.stage, exc)
        else:
            self.run_checks()
            if self.task.get("export_dir"):
                self.enter("export")
                SavedModelExport(self).run()
            if self.task.get("bench"):  # --bench: timings after the checks (`bench`)
                self.timed_stage("bench", "bench", lambda: BackendBench(self).run())
        if watch is not None:
            self.result["tensorflow"] = watch.verdict()
        self.result["timings"]["total"] = time.perf_counter() - started

    def timed_stage(self, stage: str, timing: str, action) -> None:
        self.enter(stage)
        started = time.perf_counter()
        action()
        self.add_timing(timing, started)

    def run_checks(self) -> None:
        """Each check on its own: one that raises does not hide the others' results."""
        self.result["checks"] = {}
        for check in self.task.get("checks") or ["call"]:
            self.enter(check)
            started = time.perf_counter()
            saved = self.snapshot_state()
            try:
                getattr(self, f"check_{check}")()
                self.result["checks"][check] = {"status": "ok"}
            except BaseException as exc:  # noqa: BLE001 - reported per check
                # a compiled step that fails half way can leave variables without values
                # (Keras on jax empties them while a jitted function runs): put them back
                self.restore_state(saved)
                info = self.error_info(check, exc)
                self.result["checks"][check] = {"status": "error", "error": info}
                if check == "call" and self.task["role"] == "reference":
                    self.result["status"] = "error"  # nothing to compare with
                    self.result["error"] = info
                    return
            self.add_timing(check, started)

    def snapshot_state(self) -> list[tuple[object, np.ndarray]]:
        """Every readable model variable with its value: weights plus seed-generator states
        (Keras 3 keeps those out of ``weights``). One that cannot be read (never
        initialised) is left out: there is nothing to put back."""
        pairs = []
        for variable in getattr(self.model, "variables", None) or self.model.weights:
            try:
                pairs.append((variable, np.array(self.to_numpy(variable))))
            except Exception:  # noqa: BLE001, S112 - unreadable: nothing to restore
                continue
        return pairs

    def restore_state(self, snapshot: list[tuple[object, np.ndarray]]) -> None:
        for variable, value in snapshot:
            variable.assign(self.runtime.as_variable_dtype(value, variable))

    def error_info(self, stage: str, exc: BaseException) -> dict:
        """`error_info` plus the model layer whose code raised, when there is one."""
        info = error_info(stage, exc)
        layer = getattr(exc, "kmigrate_layer", None) or (
            self.layers.layer_in_traceback(exc) if self.layers else None
        )
        if layer:
            info["layer"] = layer
        forward = getattr(exc, "kmigrate_forward", None)
        if forward:
            info["message"] += f"\n(the tensor was made in the forward pass at {forward})"
        return info

    def add_timing(self, name: str, started: float) -> None:
        """Add the seconds since `started` to ``timings[name]`` (stages and their parts)."""
        self.result["timings"][name] = self.result["timings"].get(name, 0.0) + (
            time.perf_counter() - started
        )

    def build_model(self) -> None:
        self.model = self.source.build(self.runtime)
        self.layers = ModelLayers(self.model, self.runtime.to_numpy)

    def wait_for_reference(self) -> None:
        go = Path(self.task["wait_for"])
        parent = os.getppid()
        while not go.exists():
            if os.getppid() != parent:  # the parent is gone: nobody will read our results
                raise StageError("the parent process exited while this worker was waiting")
            time.sleep(WAIT_POLL_SECONDS)
        if go.read_text(encoding="utf-8").strip() == SKIP:  # the reference did not run
            raise StageError("the reference did not run: nothing to compare with")

    def model_input_specs(self) -> list[tuple[str, tuple, str]] | None:
        try:
            inputs = self.model.inputs
        except (AttributeError, ValueError):
            return None
        if not inputs:
            return None
        specs = []
        for tensor in inputs:
            shape = tensor.shape
            dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
            specs.append((str(tensor.name), tuple(dims), self.dtype_name(tensor)))
        return specs

    def model_args(self, inputs: list[np.ndarray] | None = None):
        """The batch (`inputs`, default the parity batch) in the structure the model takes."""
        inputs = self.inputs if inputs is None else inputs
        struct = getattr(self.model, "_inputs_struct", None)
        if isinstance(struct, dict) and len(struct) == len(inputs):
            return dict(zip(sorted(struct), inputs))
        return inputs[0] if len(inputs) == 1 else list(inputs)

    def ensure_built(self) -> None:
        if getattr(self.model, "built", True) and self.model.weights:
            return
        self.runtime.profile.call(self.model, self.model_args(), self.batch_size)

    # -- checks ----------------------------------------------------------------------------

    def check_call(self) -> None:
        """``model(x, training=False)``, eager, recording every layer's outputs."""
        records: list[tuple[str, str, list]] = []
        restore = []
        if self.task.get("record_layers"):
            restore = self.layers.install_hooks(records)
        try:
            outputs = self.runtime.profile.call(self.model, self.model_args(), self.batch_size)
        finally:
            self.layers.remove_hooks(restore)
        self.call_outputs = outputs
        self.result["outputs"] = [
            self.store(f"out{i}", tensor, name) for i, (name, tensor) in enumerate(flatten(outputs))
        ]
        self.result["layers"] = []
        for i, (path, class_name, tensors) in enumerate(records):
            entry = {"path": path, "class": class_name, "arrays": []}
            for k, tensor in enumerate(tensors):
                entry["arrays"].append(self.store(f"layer{i}_{k}", tensor, str(k)))
            self.result["layers"].append(entry)

    def check_predict(self) -> None:
        """``model.predict``: the compiled path (``jit_compile`` as the backend defaults it)."""
        outputs = self.runtime.profile.predict(self.model, self.model_args(), self.batch_size)
        self.result["predict"] = {
            "jit_compile": str(getattr(self.model, "jit_compile", None)),
            "outputs": [
                self.store(f"pred{i}", tensor, name)
                for i, (name, tensor) in enumerate(flatten(outputs))
            ],
        }
        if "outputs" not in self.result:  # no eager call (inference-only): shape targets here
            self.call_outputs = outputs

    def check_train(self) -> None:
        """One SGD step from the shared weights (see `train_step`)."""
        self.result["train"] = {}  # present even if the step raises
        if self.call_outputs is None:
            raise StageError("the training step needs the outputs of the eager call, which failed")
        self.result["train"] = TrainingCheck(self).run(self.call_outputs)

    def store(self, key: str, tensor, name: str) -> dict:
        dtype = self.dtype_name(tensor)
        array = self.to_numpy(tensor)
        self.arrays[key] = savable(array)
        return {"name": name, "dtype": dtype, "shape": list(array.shape)}


def run_task(task: dict, stage_file: str | None, position: int = 0) -> None:
    """Run one model (the job's `position`-th) and write its arrays, then its result
    (atomically, last)."""
    if stage_file:
        task = {**task, "stage_file": stage_file, "position": position}
    worker = Worker(task)
    worker.run()
    np.savez(task["arrays"], **worker.arrays)
    temporary = task["result"] + ".tmp"
    Path(temporary).write_text(json.dumps(worker.result, default=str), encoding="utf-8")
    os.replace(temporary, task["result"])  # the parent never sees half a result


def drop_working_folder_from_path() -> None:
    """``python -m`` puts the current folder first on ``sys.path``; it may hold the other
    side's tree (run from the project root, where ``mylayers.py`` is the rewritten one), so
    a worker imports only from its own model's folder (what ``-P`` does on Python 3.11+)."""
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.realpath(os.getcwd()):
        del sys.path[0]


def main(argv: list[str] | None = None) -> int:
    """Run the job's tasks in order (same backend, one framework import): several in forked
    children of this process (`fork_server`) where that is safe, else in this process, each
    model isolated from the others (`isolation`)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m kmigrate.parity.worker JOB.json", file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    drop_working_folder_from_path()
    tasks = job["tasks"]
    stage_file = job.get("stage_file")
    prepare_process(tasks)
    forking = len(tasks) > 1
    for i, task in enumerate(tasks):
        # a fork server while it is safe (`fork_server`); once a model ran here, never again
        forking = forking and can_fork()
        if forking:
            run_in_child(task, lambda: run_task(task, stage_file, i))  # noqa: B023 - run now
            continue
        restore_blas_threads()  # what the server kept single-threaded, for this process
        if i and needs_fresh_process(tasks[i:]):
            return FRESH_PROCESS_EXIT  # the parent runs the rest in a new process
        with ModelIsolation(task):  # the next model finds the process as this one did
            run_task(task, stage_file, i)
    return 0


if __name__ == "__main__":
    sys.exit(main())
