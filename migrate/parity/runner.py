"""Plan the workers of a parity run, run them under a time limit, compare what they wrote.

The parent never imports a deep-learning framework: Keras picks its backend at import
time, so every side runs in its own fresh subprocess (`kmigrate.parity.worker`) with
``KERAS_BACKEND`` set, and a Keras 2 reference with ``TF_USE_LEGACY_KERAS=1``: the reference
and each target never share a process or an import root (a target on the reference's
backend gets its own process too; the before and after trees often hold modules of the same
name). All of them start at once: the targets import their framework and build the model
while the reference runs, then wait for a "go" file before reading the weights, the input
batch and the training targets the reference wrote; the slow imports overlap.

Three forms:
- ``keras_file``: every backend loads the same ``.keras`` file; the reference backend writes
  the input batch.
- ``factory``: the reference backend builds the model and writes its weights; every other
  backend rebuilds it and loads them.
- ``before_after``: the original (pre-migration) factory on TensorFlow is the reference:
  Keras 2 through tf_keras when the original is Keras 2 code (it imports TensorFlow) and
  tf_keras is installed, else Keras 3 (and Keras 2 when Keras 3 cannot run it); the
  converted factory runs on every backend with the original's weights.

Every side runs the checks users depend on (`worker`): the eager call, ``model.predict``
and one training step; OpenVINO, inference-only, runs ``predict``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import kmigrate
from kmigrate.parity.compare import (
    ArrayDiff,
    LayerDivergence,
    LayerRecord,
    RecordedArray,
    find_divergence,
)
from kmigrate.parity.flavour import keras2_importer
from kmigrate.parity.plan import (
    INFERENCE_ONLY,
    ModelSpec,
    ParityOptions,
    ParityUsageError,
    canonical_backend,
    find_factory,
    installed_backends,
    module_available,
    parse_model_spec,
    require_backend,
)
from kmigrate.parity.reference_help import Attempt, attempt_notes, reference_hint
from kmigrate.parity.report import BackendRun, CheckResult, ErrorInfo, ParityReport
from kmigrate.parity.verdicts import (
    check_entry,
    compare_checks,
    compare_output_lists,
    error_result,
)

POLL_SECONDS = 0.05
STDERR_TAIL_LINES = 25
PACKAGE_ROOT = str(Path(kmigrate.__file__).resolve().parent.parent)

Progress = Callable[[str], None]


@dataclass
class Task:
    """One model run inside a worker process (its result and arrays are its own files)."""

    name: str  # file stem in the work dir: "reference", "reference-keras2", "jax", ...
    role: str  # "reference" | "target"
    backend: str
    keras: int  # 3, or 2 for tf_keras
    spec: ModelSpec
    payload: dict = field(default_factory=dict)


@dataclass
class WorkerPlan:
    """One subprocess: a backend (and Keras version) and the tasks it runs in order."""

    name: str
    backend: str
    keras: int
    tasks: list[Task]
    compile_cache: str | None = None

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["KERAS_BACKEND"] = self.backend
        if self.backend == "jax" and self.compile_cache:
            env.setdefault("JAX_COMPILATION_CACHE_DIR", self.compile_cache)
            env.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
            env.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
        if self.keras == 2:
            env["TF_USE_LEGACY_KERAS"] = "1"
        else:
            env.pop("TF_USE_LEGACY_KERAS", None)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p
        )
        return env


@dataclass
class Running:
    plan: WorkerPlan
    process: subprocess.Popen
    started: float
    deadline: float
    logs: list  # open stdout / stderr files
    waiting: list[Task]  # tasks whose result has not been collected yet


@dataclass
class Outcome:
    """What came back for one task: its result JSON and arrays, or why there is none."""

    task: Task
    status: str  # "ok" | "error" | "timeout" | "skipped"
    result: dict = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    error: ErrorInfo | None = None
    seconds: float | None = None


class ParityRun:
    """One run: plan the workers, execute them, build the report."""

    def __init__(
        self,
        subject: ModelSpec,
        options: ParityOptions,
        *,
        reference: ModelSpec | None,
        workdir: Path,
        progress: Progress | None = None,
    ):
        self.subject = subject
        self.reference_spec = reference
        self.options = options
        self.workdir = workdir
        self.progress = progress or (lambda message: None)
        self.go_file = workdir / "reference.done"
        self.installed = installed_backends()
        self.backends = options.resolved_backends(self.installed)
        self.mode = (
            "before_after"
            if reference is not None
            else "keras_file"
            if subject.is_keras_file
            else "factory"
        )
        self.reference_backend = self._reference_backend()
        self.final_reference = workdir / "reference.final.json"  # the attempt that ran
        self.reference_reason = ""
        self.export_dir = str(Path(options.export_dir).resolve()) if options.export_dir else None
        self.reference_task = self._make_task("reference", "reference", self.reference_backend)
        self.targets = [
            self._make_task(backend, "target", backend) for backend in self._target_backends()
        ]
        self._check_export()
        self.workers = self._group_workers()

    # -- planning ------------------------------------------------------------------------

    def _reference_backend(self) -> str:
        if self.options.reference_backend:
            backend = canonical_backend(self.options.reference_backend)
        elif self.mode == "before_after" or "tensorflow" in self.backends:
            backend = "tensorflow"
        else:
            backend = self.backends[0]
        require_backend(backend, self.installed)
        if backend in INFERENCE_ONLY:
            raise ParityUsageError(
                f"{backend} is inference-only and cannot be the reference: use "
                f"--reference-backend tensorflow (or jax / torch)"
            )
        return backend

    def _target_backends(self) -> list[str]:
        if self.mode == "before_after":
            return list(self.backends)
        targets = [b for b in self.backends if b != self.reference_backend]
        if not targets:
            raise ParityUsageError(
                f"only the reference backend ({self.reference_backend}) would run: parity "
                f"needs a second one (installed: {', '.join(self.installed)}); "
                f"e.g. --backends tensorflow,jax,torch"
            )
        return targets

    def _reference_keras(self) -> int:
        if self.mode != "before_after" or self.options.reference_keras == "3":
            self.reference_reason = (
                "chosen with --reference-keras 3" if self.mode == "before_after" else ""
            )
            return 3
        if self.options.reference_keras == "2":
            self._require_tf_keras()
            self.reference_reason = "chosen with --reference-keras 2"
            return 2
        # "auto": the legacy code's own runtime when it is Keras 2 code
        spec = self.reference_spec
        source = Path(spec.path).read_text(encoding="utf-8") if spec and spec.path else ""
        folder = spec.sys_path[0] if spec and spec.sys_path else None
        importer = keras2_importer(source, folder)
        if importer and self.reference_backend == "tensorflow" and module_available("tf_keras"):
            self.reference_reason = (
                f"Keras 2 (tf_keras) because the original is Keras 2 code ({importer} imports "
                f"TensorFlow); --reference-keras 3 runs it on Keras 3 instead"
            )
            return 2
        self.reference_reason = (
            "Keras 3: the original does not import TensorFlow"
            if not importer
            else "Keras 3: tf_keras is not installed (pip install tf-keras for a Keras 2 reference)"
        )
        return 3

    def _require_tf_keras(self) -> None:
        if self.reference_backend != "tensorflow":
            raise ParityUsageError("a Keras 2 (tf_keras) reference runs on tensorflow only")
        if not module_available("tf_keras"):
            raise ParityUsageError(
                "a Keras 2 reference needs tf_keras: pip install 'tf-keras' (same minor "
                "version as tensorflow)"
            )

    def _check_export(self) -> None:
        if not self.export_dir:
            return
        candidates = [self.reference_task] if self.mode != "before_after" else []
        for task in [*candidates, *self.targets]:
            if task.backend == "tensorflow" and task.keras == 3:
                task.payload["export_dir"] = self.export_dir
                return
        raise ParityUsageError(
            "--export needs the tensorflow backend in the run (model.export writes a TF "
            "SavedModel): add it to --backends"
        )

    def _checks(self, backend: str) -> list[str]:
        if backend in INFERENCE_ONLY:
            return ["predict"]
        return [c for c in ("call", "predict", "train") if c in self.options.checks]

    def _forbidden_roots(self, spec: ModelSpec) -> list[str]:
        """The other side's import roots (before/after only), minus the ones shared."""
        if self.mode != "before_after":
            return []
        other = self.subject if spec is self.reference_spec else self.reference_spec
        mine = set(spec.sys_path)
        return [root for root in other.sys_path if root not in mine]

    def _make_task(self, name: str, role: str, backend: str, keras: int | None = None) -> Task:
        is_reference = role == "reference"
        spec = self.reference_spec if (is_reference and self.reference_spec) else self.subject
        if keras is None:
            keras = self._reference_keras() if is_reference else 3
        task = Task(name=name, role=role, backend=backend, keras=keras, spec=spec)
        shares_weights = self.mode != "keras_file"
        options = self.options
        task.payload = {
            "role": role,
            "backend": backend,
            "keras": keras,
            "model": spec.to_job(),
            "custom_objects": options.custom_objects,
            "factory_kwargs": dict(options.factory_kwargs),
            "safe_mode": options.safe_mode,
            "inputs": {
                "path": str(self.workdir / "inputs.npz"),
                "write": is_reference,
                "source": options.inputs_file,
                "shapes": [list(s) for s in options.input_shapes] if options.input_shapes else None,
                "dtypes": list(options.input_dtypes) if options.input_dtypes else None,
                "batch_size": options.batch_size,
                "seed": options.seed,
                "int_high": options.int_high,
                "specs": [s.to_dict() for s in options.input_specs or []],
            },
            "checks": self._checks(backend),
            "train": {
                "targets": str(self.workdir / "train_targets.npz"),
                "reference_result": None if is_reference else str(self.final_reference),
            },
            "watch_tensorflow": role == "target" and backend in ("jax", "torch"),
            "forbidden_roots": self._forbidden_roots(spec),
            "weights": {
                "mode": ("save" if is_reference else "load") if shares_weights else None,
                "path": str(self.workdir / "weights.npz"),
                "meta": str(self.workdir / "weights.json"),
            },
            "wait_for": None if is_reference else str(self.go_file),
            "record_layers": options.localize,
            "export_dir": None,
            "result": str(self.workdir / f"{name}.result.json"),
            "arrays": str(self.workdir / f"{name}.arrays.npz"),
        }
        return task

    def _group_workers(self) -> list[WorkerPlan]:
        """One fresh process per side: the reference, and each target on its own, even the
        one on the reference's backend (sharing would let it reuse the reference's modules
        from ``sys.modules``)."""
        cache = self.options.compile_cache
        return [
            WorkerPlan(task.name, task.backend, task.keras, [task], cache)
            for task in [self.reference_task, *self.targets]
        ]

    def _fallback_worker(self) -> WorkerPlan:
        task = self._make_task("reference-keras2", "reference", "tensorflow", keras=2)
        self.reference_reason = "Keras 2 (tf_keras): Keras 3 could not run the original"
        return WorkerPlan("reference-keras2", "tensorflow", 2, [task])

    # -- execution -----------------------------------------------------------------------

    def _start(self, plan: WorkerPlan) -> Running:
        stage_file = self.workdir / f"worker-{plan.name}.stage"
        job_file = self.workdir / f"worker-{plan.name}.job.json"
        job = {"tasks": [t.payload for t in plan.tasks], "stage_file": str(stage_file)}
        job_file.write_text(json.dumps(job, indent=1), encoding="utf-8")
        logs = [
            open(self.workdir / f"worker-{plan.name}.{kind}", "wb")  # noqa: SIM115
            for kind in ("stdout", "stderr")
        ]
        process = subprocess.Popen(
            # the worker drops the current folder from sys.path (it may hold the other tree)
            [sys.executable, "-m", "kmigrate.parity.worker", str(job_file)],
            env=plan.environment(),
            stdout=logs[0],
            stderr=logs[1],
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: a time-out kills its children too
        )
        now = time.monotonic()
        labels = ", ".join(f"{t.spec.label} ({t.role})" for t in plan.tasks)
        keras = " with Keras 2 (tf_keras)" if plan.keras == 2 else ""
        self.progress(f"started {plan.backend}{keras}: {labels}")
        return Running(plan, process, now, now + self.options.timeout, logs, list(plan.tasks))

    def _kill(self, running: Running) -> None:
        try:
            os.killpg(running.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        running.process.wait()

    def _collect(self, running: Running, task: Task) -> Outcome | None:
        """The task's outcome if its result file is there."""
        result_path = Path(task.payload["result"])
        if not result_path.exists():
            return None
        result = json.loads(result_path.read_text(encoding="utf-8"))
        arrays: dict[str, np.ndarray] = {}
        arrays_path = Path(task.payload["arrays"])
        if arrays_path.exists():
            with np.load(arrays_path) as data:
                arrays = {key: data[key] for key in data.files}
        timings = result.get("timings", {})
        seconds = timings.get("total", 0.0) - timings.get("wait", 0.0)
        if result.get("status") != "ok":
            error = ErrorInfo.from_dict(result.get("error") or {})
            return Outcome(task, "error", result, arrays, error=error, seconds=seconds)
        return Outcome(task, "ok", result, arrays, seconds=seconds)

    def _lost(self, running: Running, task: Task, *, timed_out: bool) -> Outcome:
        """A task without a result: its process timed out or died."""
        elapsed = time.monotonic() - running.started
        if timed_out:
            error = ErrorInfo(
                stage=self._stage(running),
                type="TimeoutError",
                message=f"no result after {self.options.timeout:g} s",
                traceback=self._stderr_tail(running),
            )
            return Outcome(task, "timeout", error=error, seconds=elapsed)
        error = ErrorInfo(
            stage="crash",
            type="WorkerCrashed",
            message=(
                f"the worker exited with status {running.process.returncode} and wrote no result"
            ),
            traceback=self._stderr_tail(running),
        )
        return Outcome(task, "error", error=error, seconds=elapsed)

    def _stage(self, running: Running) -> str:
        """The stage a timed-out worker was in (it writes each one to a file)."""
        path = self.workdir / f"worker-{running.plan.name}.stage"
        try:
            return path.read_text(encoding="utf-8").strip() or "start"
        except OSError:
            return "start"

    def _stderr_tail(self, running: Running) -> str:
        path = self.workdir / f"worker-{running.plan.name}.stderr"
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-STDERR_TAIL_LINES:])

    def execute(self) -> tuple[list[Outcome], dict[str, Outcome]]:
        """Run every worker; return (reference attempts in order, target outcomes by name)."""
        limit = self.options.jobs or len(self.workers)
        pending = deque(self.workers)
        running: list[Running] = []
        self.attempts: list[Outcome] = []
        self.outcomes: dict[str, Outcome] = {}
        self.reference_state = "running"  # -> "ok" | "failed"
        while running or (pending and self.reference_state != "failed"):
            while pending and self.reference_state != "failed" and len(running) < limit:
                running.append(self._start(pending.popleft()))
            time.sleep(POLL_SECONDS)
            for item in list(running):
                for task in list(item.waiting):
                    if task not in item.waiting:  # the reference failed: tasks were skipped
                        break
                    outcome = self._collect(item, task)
                    if outcome is not None:
                        item.waiting.remove(task)
                        self._record(outcome, running)
                if item not in running:  # killed because the reference failed
                    continue
                exited = item.process.poll() is not None
                timed_out = not exited and time.monotonic() > item.deadline
                if not (exited or timed_out):
                    continue
                if timed_out:
                    self._kill(item)
                running.remove(item)
                self._close(item)
                for task in item.waiting:
                    self._record(self._lost(item, task, timed_out=timed_out), running)
        for plan in pending:
            for task in plan.tasks:
                self.outcomes.setdefault(task.name, self._skipped(task))
        return self.attempts, self.outcomes

    def _close(self, running: Running) -> None:
        for log in running.logs:
            log.close()

    def _record(self, outcome: Outcome, running: list[Running]) -> None:
        """File an outcome; a reference outcome decides what happens to everything else."""
        if outcome.task.role == "target":
            self.outcomes[outcome.task.name] = outcome
            return
        self.attempts.append(outcome)
        if outcome.status == "ok":
            self.reference_state = "ok"
            shutil.copyfile(outcome.task.payload["result"], self.final_reference)
            self.go_file.write_text("go", encoding="utf-8")
            fresh = time.monotonic() + self.options.timeout
            for other in running:  # the wait is over: a fresh time limit from now
                other.deadline = max(other.deadline, fresh)
        elif self._should_fall_back(outcome):
            running.append(self._start(self._fallback_worker()))
        else:
            self.reference_state = "failed"
            for other in list(running):
                self._kill(other)
                running.remove(other)
                self._close(other)
                for task in other.waiting:
                    self.outcomes.setdefault(task.name, self._skipped(task))
                other.waiting.clear()

    def _should_fall_back(self, outcome: Outcome) -> bool:
        return (
            self.mode == "before_after"
            and self.options.reference_keras == "auto"
            and outcome.task.keras == 3
            and outcome.status == "error"
            and self.reference_backend == "tensorflow"
            and module_available("tf_keras")
        )

    def _skipped(self, task: Task) -> Outcome:
        return Outcome(
            task,
            "skipped",
            error=ErrorInfo(stage="wait", type="Skipped", message="the reference did not run"),
        )

    # -- comparison ----------------------------------------------------------------------

    def report(self) -> ParityReport:
        attempts, targets = self.execute()
        reference = attempts[-1]
        reference_run = self._reference_run(attempts)
        report = ParityReport(
            subject=self.subject.label,
            mode=self.mode,
            reference=reference_run,
            inputs=reference.result.get("inputs", []),
            seed=self.options.seed,
            inputs_file=self.options.inputs_file,
            atol=self.options.atol,
            rtol=self.options.rtol,
            workdir=str(self.workdir) if self.options.workdir else None,
            reference_reason=self.reference_reason,
        )
        if reference.status == "ok" and reference.task.payload.get("export_dir"):
            report.runs.append(self._export_run(reference, reference))
        for task in self.targets:
            outcome = targets[task.name]
            report.runs.append(self._target_run(outcome, reference))
            if outcome.status == "ok" and task.payload.get("export_dir"):
                report.runs.append(self._export_run(outcome, reference))
        return report

    def _keras_text(self, outcome: Outcome) -> str:
        version = outcome.result.get("keras_version")
        if not version:
            return "Keras 2 (tf_keras)" if outcome.task.keras == 2 else ""
        package = outcome.result.get("keras_package")
        return f"{version} (tf_keras)" if package == "tf_keras" else version

    def _reference_run(self, attempts: list[Outcome]) -> BackendRun:
        final = attempts[-1]
        run = BackendRun(
            backend=final.task.backend,
            role="reference",
            model=self._model_text(final.task),
            status="reference" if final.status == "ok" else final.status,
            keras=self._keras_text(final),
            seconds=final.seconds,
            error=final.error,
            notes=list(final.result.get("notes", [])),
            timings=dict(final.result.get("timings", {})),
        )
        for name, entry in (final.result.get("checks") or {}).items():
            if entry.get("status") == "error":
                headline = ErrorInfo.from_dict(entry.get("error") or {}).headline
                run.notes.append(f"the original's {name} check failed, not compared: {headline}")
        if final.status == "ok" and len(attempts) > 1:
            first = attempts[0]
            headline = first.error.headline if first.error else first.status
            run.notes.insert(
                0,
                f"Keras 3 could not run the original ({headline}); it ran on Keras 2 "
                f"through tf_keras instead",
            )
        elif final.status != "ok" and self.mode == "before_after":
            tries = [Attempt(a.task.keras, a.task.backend, a.error) for a in attempts]
            run.notes[:0] = attempt_notes(tries)
            run.hint = reference_hint(
                tries,
                keras_choice=self.options.reference_keras,
                tf_keras=module_available("tf_keras"),
            )
        return run

    def _model_text(self, task: Task) -> str:
        if self.mode == "before_after":
            kind = "original" if task.role == "reference" else "converted"
            return f"{kind} {task.spec.label}"
        return task.spec.label

    def _target_run(self, outcome: Outcome, reference: Outcome) -> BackendRun:
        run = BackendRun(
            backend=outcome.task.backend,
            role="target",
            model=self._model_text(outcome.task),
            status=outcome.status,
            keras=self._keras_text(outcome),
            seconds=outcome.seconds,
            error=outcome.error,
            notes=list(outcome.result.get("notes", [])),
            timings=dict(outcome.result.get("timings", {})),
        )
        if outcome.status != "ok":
            return run
        if outcome.result.get("weights_matched_by") == "order":
            run.notes.append("weights matched to the reference by layer order (names differ)")
        run.tensorflow = outcome.result.get("tensorflow")
        call, run.divergence = self._call_check(outcome, reference)
        if call is not None:
            run.checks.append(call)
            run.outputs = call.diffs
        run.checks.extend(
            compare_checks(outcome, reference, atol=self.options.atol, rtol=self.options.rtol)
        )
        predict = run.check("predict")
        if not run.outputs and predict is not None:
            run.outputs = predict.diffs
        run.status = "pass" if run.checks and all(c.ok for c in run.checks) else "fail"
        return run

    def _call_check(
        self, outcome: Outcome, reference: Outcome
    ) -> tuple[CheckResult | None, LayerDivergence | None]:
        """The eager call against the reference's, with the first diverging layer."""
        entry = check_entry(outcome.result, "call")
        if entry is None:
            return None, None
        if entry["status"] == "error":
            return error_result("call", entry), None
        diffs = self._compare_outputs(
            outcome.result.get("outputs", []), outcome.arrays, "out", reference
        )
        check = CheckResult("call", "pass" if all(d.passed for d in diffs) else "fail", diffs)
        divergence = None
        if check.status == "fail" and self.options.localize:
            divergence = find_divergence(
                _layer_records(reference),
                _layer_records(outcome),
                atol=self.options.atol,
                rtol=self.options.rtol,
            )
            if divergence:
                check.layer = f"'{divergence.path}' ({divergence.class_name})"
        return check, divergence

    def _export_run(self, outcome: Outcome, reference: Outcome) -> BackendRun:
        info = outcome.result.get("export") or {}
        run = BackendRun(
            backend="tensorflow",
            role="export",
            model=f"serving_default of {info.get('dir', self.export_dir)}",
            status="pass",
            keras=self._keras_text(outcome),
            seconds=outcome.result.get("timings", {}).get("export"),
        )
        if info.get("status") != "ok":
            run.status = "error"
            run.error = ErrorInfo.from_dict(info.get("error") or {"stage": "export"})
            return run
        run.outputs = self._compare_outputs(
            info.get("outputs", []), outcome.arrays, "export", reference
        )
        run.status = "pass" if all(d.passed for d in run.outputs) else "fail"
        return run

    def _compare_outputs(
        self, metas: list[dict], arrays: dict, prefix: str, reference: Outcome
    ) -> list[ArrayDiff]:
        return compare_output_lists(
            metas,
            arrays,
            prefix,
            reference.result.get("outputs", []),
            reference.arrays,
            "out",
            atol=self.options.atol,
            rtol=self.options.rtol,
        )


def _layer_records(outcome: Outcome) -> list[LayerRecord]:
    records = []
    for i, layer in enumerate(outcome.result.get("layers", [])):
        arrays = tuple(
            RecordedArray(outcome.arrays[f"layer{i}_{k}"], meta.get("dtype", ""))
            for k, meta in enumerate(layer.get("arrays", []))
        )
        records.append(LayerRecord(layer["path"], layer.get("class", ""), arrays))
    return records


SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist"})
MAX_TREE_FILES = 5000


def original_tree(
    folder: Path, originals: Mapping[str, str], destination: Path
) -> tuple[Path, int]:
    """Rebuild the original tree of `folder` under `destination`: its Python files as they
    are on disk (unchanged by the rewrite), with each rewritten file's original text
    (`originals`: absolute path -> text) put back. Returns (destination, files written).

    The reference imports its siblings from this copy, never from the rewritten folder:
    an original ``models.py`` must meet the original ``layers.py``.
    """
    count = 0
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative.parts[:-1]):
            continue
        if count >= MAX_TREE_FILES:
            raise ParityUsageError(
                f"{folder} holds more than {MAX_TREE_FILES} Python files: point parity at a "
                f"smaller folder (the model's own package)"
            )
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        text = originals.get(str(path.resolve()))
        if text is None:
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
        target.write_text(text, encoding="utf-8", errors="surrogateescape")
        count += 1
    return destination, count


def reference_from_source(
    source: str,
    subject: ModelSpec,
    workdir: Path,
    originals: Mapping[str, str] | None = None,
) -> ModelSpec:
    """The original code (kept in memory by `kmigrate apply`) as a module file to import,
    inside a copy of its folder as it was before the rewrite (`original_tree`)."""
    factory = find_factory(source, subject.factory, where=f"the original of {subject.label}")
    label = f"{subject.label.rsplit(':', 1)[0]}:{factory}"
    if subject.path:
        entry = Path(subject.path).resolve()
        texts = {**(originals or {}), str(entry): source}
        root, _ = original_tree(entry.parent, texts, workdir / "original")
        path = root / entry.name
    else:
        path = workdir / "original" / "original_model.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return ModelSpec(
        kind="factory",
        label=label,
        path=str(path),
        factory=factory,
        sys_path=(str(path.parent),),
    )


def run_parity(
    model: str | ModelSpec,
    *,
    reference: str | ModelSpec | None = None,
    reference_source: str | None = None,
    reference_originals: Mapping[str, str] | None = None,
    options: ParityOptions | None = None,
    progress: Progress | None = None,
) -> ParityReport:
    """Run `model` on every backend and compare; the Python API behind `kmigrate parity`.

    `model` is a ``.keras`` file, ``path/models.py[:factory]`` or ``pkg.mod:factory``.
    For a before/after check give the original either as `reference` (a factory spec) or as
    `reference_source` (the original module's text, e.g. kept in memory by ``kmigrate apply``;
    it is written into a copy of the converted file's folder in which every file named in
    `reference_originals` (absolute path -> original text: the other files the rewrite
    changed) has its original text back; its factory defaults to the converted one's name).

    Raises ParityUsageError when the run cannot start (no entry point, backend missing...);
    everything that goes wrong inside a worker is in the returned report.
    """
    options = options or ParityOptions()
    subject = model if isinstance(model, ModelSpec) else parse_model_spec(model)
    if reference is not None and reference_source is not None:
        raise ParityUsageError("give the original as reference or reference_source, not both")
    if (reference is not None or reference_source is not None) and subject.is_keras_file:
        raise ParityUsageError(
            "a before/after check compares two model factories (the original and the "
            "converted build_model); a .keras file carries its own weights"
        )
    if options.timeout <= 0:
        raise ParityUsageError("--timeout must be a positive number of seconds")
    keep = options.workdir is not None
    workdir = Path(options.workdir) if keep else Path(tempfile.mkdtemp(prefix="kmigrate-parity-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        reference_spec = None
        if reference_source is not None:
            reference_spec = reference_from_source(
                reference_source, subject, workdir, reference_originals
            )
        elif reference is not None:
            reference_spec = (
                reference if isinstance(reference, ModelSpec) else parse_model_spec(reference)
            )
            if reference_spec.is_keras_file:
                raise ParityUsageError("--reference takes the original factory, not a .keras file")
        run = ParityRun(
            subject, options, reference=reference_spec, workdir=workdir, progress=progress
        )
        return run.report()
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
