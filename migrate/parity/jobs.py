"""The units of a parity run: a task (one model on one side), the worker process that runs
it, and what came back. Plain data shared by the planner (`runner`), the process pool
(`execute`) and the report builder (`assemble`)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import kmigrate
from kmigrate.parity import backends as registry
from kmigrate.parity.fork_server import single_threaded_blas
from kmigrate.parity.plan import ModelSpec
from kmigrate.parity.report import ErrorInfo

PACKAGE_ROOT = str(Path(kmigrate.__file__).resolve().parent.parent)


@dataclass
class Task:
    """One model run inside a worker process (its result and arrays are its own files)."""

    name: str  # file stem in the work dir: "reference", "reference-keras2", "jax", ...
    role: str  # "reference" | "target"
    backend: str
    keras: int  # 3, or 2 for tf_keras
    spec: ModelSpec
    payload: dict = field(default_factory=dict)
    model: int = 0  # which model of a batch (`runner.run_parity_batch`) it belongs to


@dataclass
class WorkerPlan:
    """One subprocess: a backend (and Keras version) and the tasks it runs in order."""

    name: str
    backend: str
    keras: int
    tasks: list[Task]
    compile_cache: str | None = None
    generation: int = 1  # 2, 3...: a replacement for a worker that crashed or timed out

    def replacement(self, tasks: list[Task]) -> WorkerPlan:
        """A fresh process for the tasks a dead worker left (its own files: a new name)."""
        base = self.name.rsplit(".", 1)[0] if self.generation > 1 else self.name
        generation = self.generation + 1
        return WorkerPlan(
            f"{base}.{generation}", self.backend, self.keras, tasks, self.compile_cache, generation
        )

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        profile = registry.resolve(self.backend)
        env["KERAS_BACKEND"] = profile.keras_backend
        profile.environment(env, compile_cache=self.compile_cache)
        if self.keras == 2:
            env["TF_USE_LEGACY_KERAS"] = "1"
        else:
            env.pop("TF_USE_LEGACY_KERAS", None)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["PYTHONUNBUFFERED"] = "1"
        if len(self.tasks) > 1:  # a fork server: no thread pool before it forks
            single_threaded_blas(env)
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
    since: float = 0.0  # when it began the model it is running
    position: int = 0  # which of its tasks it is running (read from its stage file)


@dataclass
class Outcome:
    """What came back for one task: its result JSON and arrays, or why there is none."""

    task: Task
    status: str  # "ok" | "error" | "timeout" | "skipped"
    result: dict = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    error: ErrorInfo | None = None
    seconds: float | None = None
