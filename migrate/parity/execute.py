"""Run the workers of one or several parity runs at once, under a time limit, and collect
what they wrote.

All workers start together: the targets import their framework and build the model while
the reference runs, then wait for a "go" file before reading the weights, the input batch
and the training targets the reference wrote; the slow imports overlap. The reference's
outcome decides the rest of its model: it ran (go, fresh time limits), it failed on Keras 3
where Keras 2 may run it (one more attempt), or it failed (the go file says "skip": its
targets are skipped, and a worker with nothing else left is stopped).

With several models (`runner.run_parity_batch`) a worker runs its side of every model, one
after the other, each in a child forked from it (`fork_server`) or, where forking is not
safe, in the worker itself. A model's time limit starts when the worker reaches it; a
model that crashes or times out costs only itself: it is reported (crashed, timed out, with
the stage); a crashed child leaves its server running the rest, and a worker that crashed
or was killed at a time-out (with its process group: a child too) is replaced by a fresh
process for the rest.
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
from kmigrate.parity.fork_server import LOST_SUFFIX
from kmigrate.parity.isolation import FRESH_PROCESS_EXIT
from kmigrate.parity.jobs import Outcome, Running, Task, WorkerPlan
from kmigrate.parity.plan import module_available
from kmigrate.parity.report import ErrorInfo

POLL_SECONDS = 0.05
STDERR_TAIL_LINES = 25
GO, SKIP = "go", "skip"  # what a model's go file says (`worker.Worker.wait_for_reference`)
LABELS_SHOWN = 3  # a worker's progress line names its models up to this many


class WorkerPool:
    """Starts, watches and collects the worker processes of one or several `ParityRun`s
    (`runs[i]` owns the tasks whose ``model`` is ``i``)."""

    def __init__(self, runs: list, plans: list[WorkerPlan], workdir: Path):
        self.runs = runs  # `runner.ParityRun`s (not imported: it imports this)
        self.plans = plans
        self.workdir = workdir
        self.options = runs[0].options  # shared: timeout, jobs
        self.progress = runs[0].progress
        self.attempts: list[list[Outcome]] = [[] for _ in runs]
        self.outcomes: list[dict[str, Outcome]] = [{} for _ in runs]
        self.reference_state = ["running"] * len(runs)  # -> "ok" | "failed", per model

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
        labels = [f"{t.spec.label} ({t.role})" for t in plan.tasks]
        if len(labels) > LABELS_SHOWN:
            labels = [*labels[:LABELS_SHOWN], f"{len(labels) - LABELS_SHOWN} more"]
        keras = " with Keras 2 (tf_keras)" if plan.keras == 2 else ""
        self.progress(f"started {plan.backend}{keras}: {', '.join(labels)}")
        deadline = now + self.options.timeout
        return Running(plan, process, now, deadline, logs, list(plan.tasks), since=now)

    def _kill(self, running: Running) -> None:
        try:
            os.killpg(running.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        running.process.wait()

    def _collect(self, task: Task, running: Running) -> Outcome | None:
        """The task's outcome if its result file is there, or if a fork server's child died
        on it without one (its lost file: `fork_server.run_in_child`)."""
        result_path = Path(task.payload["result"])
        if not result_path.exists():
            lost = Path(task.payload["result"] + LOST_SUFFIX)
            if not lost.exists():
                return None
            status = json.loads(lost.read_text(encoding="utf-8"))["returncode"]
            return self._lost(running, task, timed_out=False, returncode=status)
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

    def _lost(
        self, running: Running, task: Task, *, timed_out: bool, returncode: int | None = None
    ) -> Outcome:
        """A task without a result: its process (`returncode`: the forked child's status, by
        default the worker's) timed out or died while running it."""
        if returncode is None:
            returncode = running.process.returncode
        elapsed = time.monotonic() - running.since
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
            message=(f"the worker exited with status {returncode} and wrote no result"),
            traceback=self._stderr_tail(running),
        )
        return Outcome(task, "error", error=error, seconds=elapsed)

    def _stage(self, running: Running) -> str:
        """The stage a worker is in (it writes it to a file, after the model's position)."""
        return self._position(running)[1]

    def _position(self, running: Running) -> tuple[int, str]:
        """(position in its job of the model a worker runs, stage)."""
        path = self.workdir / f"worker-{running.plan.name}.stage"
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError:
            return 0, "start"
        position, _, stage = text.partition(" ")
        return (int(position), stage or "start") if position.isdigit() else (0, text or "start")

    def _stderr_tail(self, running: Running) -> str:
        path = self.workdir / f"worker-{running.plan.name}.stderr"
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-STDERR_TAIL_LINES:])

    def execute(self) -> list[tuple[list[Outcome], dict[str, Outcome]]]:
        """Run every worker; per model, (reference attempts in order, target outcomes by
        name)."""
        limit = self.options.jobs or len(self.plans)
        pending = deque(self.plans)
        running: list[Running] = []
        while running or pending:
            while pending and len(running) < limit:
                plan = pending.popleft()
                plan.tasks = [t for t in plan.tasks if not self._settled(t)]
                if plan.tasks:
                    running.append(self._start(plan))
            time.sleep(POLL_SECONDS)
            for item in list(running):
                if item in running:  # not stopped by another worker's reference failure
                    self._watch(item, running, pending)
        for index, run in enumerate(self.runs):
            for task in [run.reference_task, *run.targets]:
                if task.role == "target":
                    self.outcomes[index].setdefault(task.name, self._skipped(task))
        return list(zip(self.attempts, self.outcomes))

    def _settled(self, task: Task) -> bool:
        """A target whose reference failed before the target's worker started."""
        return task.role == "target" and task.name in self.outcomes[task.model]

    def _watch(self, item: Running, running: list[Running], pending: deque) -> None:
        """Collect what `item` wrote; replace it when it died or timed out with models left."""
        exited = item.process.poll() is not None  # before collecting: no result is missed
        for task in list(item.waiting):
            if task not in item.waiting:  # skipped meanwhile (its reference failed)
                continue
            outcome = self._collect(task, item)
            if outcome is not None:
                item.waiting.remove(task)
                self._record(outcome, running)
        if item not in running:
            return
        now = time.monotonic()
        position, stage = self._position(item)
        if position != item.position:  # a model's time limit starts when the worker reaches it
            item.position, item.since, item.deadline = position, now, now + self.options.timeout
        timed_out = not exited and now > item.deadline
        if timed_out and stage == "wait":  # waiting for a reference that is still running
            item.deadline = now + self.options.timeout
            return
        if not (exited or timed_out):
            return
        if timed_out:
            self._kill(item)
        running.remove(item)
        self._close(item)
        current = self._current(item)
        fresh_process = not timed_out and item.process.returncode == FRESH_PROCESS_EXIT
        if current in item.waiting and not fresh_process:  # the model it died on
            item.waiting.remove(current)
            self._record(self._lost(item, current, timed_out=timed_out), running)
        left = [t for t in item.waiting if not self._settled(t)]
        if left:
            pending.appendleft(item.plan.replacement(left))

    def _current(self, running: Running) -> Task:
        """The model a worker is running (as far as its stage file said)."""
        return running.plan.tasks[min(running.position, len(running.plan.tasks) - 1)]

    def _close(self, running: Running) -> None:
        for log in running.logs:
            log.close()

    def _record(self, outcome: Outcome, running: list[Running]) -> None:
        """File an outcome; a reference outcome decides what happens to its model's targets."""
        task = outcome.task
        if task.role == "target":
            self.outcomes[task.model][task.name] = outcome
            return
        run = self.runs[task.model]
        self.attempts[task.model].append(outcome)
        if outcome.status == "ok":
            self.reference_state[task.model] = "ok"
            shutil.copyfile(task.payload["result"], run.final_reference)
            run.go_file.write_text(GO, encoding="utf-8")
            fresh = time.monotonic() + self.options.timeout
            for other in running:  # their wait is over: a fresh time limit from now
                if self._current(other).model == task.model:
                    other.deadline = max(other.deadline, fresh)
        elif self._should_fall_back(outcome):
            plan = run.fallback_worker()
            if len(self.runs) > 1:  # its own worker files
                plan.name = f"{plan.name}-{task.model + 1}"
            running.append(self._start(plan))
        else:
            self._reference_failed(task.model, running)

    def _reference_failed(self, model: int, running: list[Running]) -> None:
        """Nothing to compare with: the model's targets are skipped; a worker left with
        nothing else to do is stopped."""
        self.reference_state[model] = "failed"
        self.runs[model].go_file.write_text(SKIP, encoding="utf-8")
        for task in self.runs[model].targets:
            self.outcomes[model].setdefault(task.name, self._skipped(task))
        for other in list(running):
            other.waiting = [t for t in other.waiting if not self._settled(t)]
            if not other.waiting:
                self._kill(other)
                running.remove(other)
                self._close(other)

    def _should_fall_back(self, outcome: Outcome) -> bool:
        run = self.runs[outcome.task.model]
        return (
            run.mode == "before_after"
            and run.options.reference_keras == "auto"
            and outcome.task.keras == 3
            and outcome.status == "error"
            and registry.resolve(run.reference_backend).runs_keras2
            and module_available("tf_keras")
        )

    def _skipped(self, task: Task) -> Outcome:
        return Outcome(
            task,
            "skipped",
            error=ErrorInfo(stage="wait", type="Skipped", message="the reference did not run"),
        )
