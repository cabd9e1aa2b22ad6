"""Run the workers of a parity run at once, under a time limit, and collect what they wrote.

All workers start together: the targets import their framework and build the model while
the reference runs, then wait for a "go" file before reading the weights, the input batch
and the training targets the reference wrote; the slow imports overlap. The reference's
outcome decides the rest: it ran (go, fresh time limits), it failed on Keras 3 where Keras 2
may run it (one more attempt), or it failed (every other worker is stopped, its tasks
skipped).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

import numpy as np

from kmigrate.parity import backends as registry
from kmigrate.parity.jobs import Outcome, Running, Task, WorkerPlan
from kmigrate.parity.plan import module_available
from kmigrate.parity.report import ErrorInfo

POLL_SECONDS = 0.05
STDERR_TAIL_LINES = 25


class WorkerPool:
    """Starts, watches and collects the worker processes of one `ParityRun`."""

    def __init__(self, run):  # a `runner.ParityRun` (not imported: it imports this)
        self.run = run
        self.attempts: list[Outcome] = []
        self.outcomes: dict[str, Outcome] = {}
        self.reference_state = "running"  # -> "ok" | "failed"

    def _start(self, plan: WorkerPlan) -> Running:
        stage_file = self.run.workdir / f"worker-{plan.name}.stage"
        job_file = self.run.workdir / f"worker-{plan.name}.job.json"
        job = {"tasks": [t.payload for t in plan.tasks], "stage_file": str(stage_file)}
        job_file.write_text(json.dumps(job, indent=1), encoding="utf-8")
        logs = [
            open(self.run.workdir / f"worker-{plan.name}.{kind}", "wb")  # noqa: SIM115
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
        self.run.progress(f"started {plan.backend}{keras}: {labels}")
        return Running(plan, process, now, now + self.run.options.timeout, logs, list(plan.tasks))

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
                message=f"no result after {self.run.options.timeout:g} s",
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
        path = self.run.workdir / f"worker-{running.plan.name}.stage"
        try:
            return path.read_text(encoding="utf-8").strip() or "start"
        except OSError:
            return "start"

    def _stderr_tail(self, running: Running) -> str:
        path = self.run.workdir / f"worker-{running.plan.name}.stderr"
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-STDERR_TAIL_LINES:])

    def execute(self) -> tuple[list[Outcome], dict[str, Outcome]]:
        """Run every worker; return (reference attempts in order, target outcomes by name)."""
        limit = self.run.options.jobs or len(self.run.workers)
        pending = deque(self.run.workers)
        running: list[Running] = []
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
            shutil.copyfile(outcome.task.payload["result"], self.run.final_reference)
            self.run.go_file.write_text("go", encoding="utf-8")
            fresh = time.monotonic() + self.run.options.timeout
            for other in running:  # the wait is over: a fresh time limit from now
                other.deadline = max(other.deadline, fresh)
        elif self._should_fall_back(outcome):
            running.append(self._start(self.run.fallback_worker()))
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
            self.run.mode == "before_after"
            and self.run.options.reference_keras == "auto"
            and outcome.task.keras == 3
            and outcome.status == "error"
            and registry.resolve(self.run.reference_backend).runs_keras2
            and module_available("tf_keras")
        )

    def _skipped(self, task: Task) -> Outcome:
        return Outcome(
            task,
            "skipped",
            error=ErrorInfo(stage="wait", type="Skipped", message="the reference did not run"),
        )
