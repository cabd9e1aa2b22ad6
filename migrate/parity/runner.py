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

Several models (`run_parity_batch`) are planned one `ParityRun` each and run together: one
worker per side and backend runs its side of every model in turn (`group_workers`), so each
framework is imported once, not once per model.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kmigrate.parity import backends as registry
from kmigrate.parity.assemble import ReportBuilder
from kmigrate.parity.backends import ALL_CHECKS
from kmigrate.parity.execute import WorkerPool
from kmigrate.parity.flavour import keras2_importer
from kmigrate.parity.jobs import Task, WorkerPlan
from kmigrate.parity.original import original_tree, reference_from_source
from kmigrate.parity.plan import (
    ModelSpec,
    ParityOptions,
    ParityUsageError,
    canonical_backend,
    installed_backends,
    module_available,
    parse_model_spec,
    require_backend,
)
from kmigrate.parity.report import ParityReport

__all__ = [
    "ParityEntry",
    "ParityOptions",
    "ParityRun",
    "original_tree",
    "run_parity",
    "run_parity_batch",
]

Progress = Callable[[str], None]
RUN_COMPILE_CACHE = "compile-cache"  # under the run's folder, when --no-cache (group_workers)


def keras2_backend() -> str:
    """The backend the Keras 2 (tf_keras) reference runs on."""
    return next(p.name for p in registry.profiles() if p.runs_keras2)


class ParityRun:
    """One run: plan the workers (here), execute them (`execute.WorkerPool`), build the
    report (`assemble.ReportBuilder`)."""

    def __init__(
        self,
        subject: ModelSpec,
        options: ParityOptions,
        *,
        reference: ModelSpec | None,
        workdir: Path,
        progress: Progress | None = None,
        model: int = 0,
    ):
        self.model = model  # its index in a batch of models (`run_parity_batch`)
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

    # -- planning ------------------------------------------------------------------------

    def _reference_backend(self) -> str:
        """Asked for, else the backend the legacy runtime (Keras 2) runs on when selected or
        for a before/after check, else the first selected one."""
        legacy = keras2_backend()
        if self.options.reference_backend:
            backend = canonical_backend(self.options.reference_backend)
        elif self.mode == "before_after" or legacy in self.backends:
            backend = legacy
        else:
            backend = self.backends[0]
        require_backend(backend, self.installed)
        if registry.resolve(backend).inference_only:
            usable = [p.name for p in registry.profiles() if not p.inference_only]
            raise ParityUsageError(
                f"{backend} is inference-only and cannot be the reference: use "
                f"--reference-backend {usable[0]} (or {' / '.join(usable[1:]) or 'another'})"
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
        importer = keras2_importer(source, folder, spec.path if spec else None)
        runs_keras2 = registry.resolve(self.reference_backend).runs_keras2
        if importer and runs_keras2 and module_available("tf_keras"):
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
        if not registry.resolve(self.reference_backend).runs_keras2:
            raise ParityUsageError(
                f"a Keras 2 (tf_keras) reference runs on {keras2_backend()} only"
            )
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
            if registry.resolve(task.backend).exports_saved_model and task.keras == 3:
                task.payload["export_dir"] = self.export_dir
                return
        raise ParityUsageError(
            "--export needs the tensorflow backend in the run (model.export writes a TF "
            "SavedModel): add it to --backends"
        )

    def _checks(self, backend: str) -> list[str]:
        profile = registry.resolve(backend)
        if profile.inference_only:  # runs what it can, whatever --checks says
            return list(profile.checks)
        return [c for c in ALL_CHECKS if c in self.options.checks and c in profile.checks]

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
        task = Task(name=name, role=role, backend=backend, keras=keras, spec=spec, model=self.model)
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
            "profile_module": registry.home(backend),
            "watch_tensorflow": role == "target" and registry.resolve(backend).watch_tensorflow,
            "forbidden_roots": self._forbidden_roots(spec),
            "weights": {
                "mode": ("save" if is_reference else "load") if shares_weights else None,
                "path": str(self.workdir / "weights.npz"),
                "meta": str(self.workdir / "weights.json"),
            },
            "wait_for": None if is_reference else str(self.go_file),
            "record_layers": options.localize,
            "export_dir": None,
            "bench": options.bench_job(),
            "result": str(self.workdir / f"{name}.result.json"),
            "arrays": str(self.workdir / f"{name}.arrays.npz"),
        }
        return task

    def _group_workers(self) -> list[WorkerPlan]:
        """This run's workers when it runs alone (`group_workers`)."""
        return group_workers([self], self.workdir)

    def fallback_worker(self) -> WorkerPlan:
        """A second attempt at the reference, on Keras 2, when Keras 3 could not run it."""
        backend = keras2_backend()
        task = self._make_task("reference-keras2", "reference", backend, keras=2)
        self.reference_reason = "Keras 2 (tf_keras): Keras 3 could not run the original"
        return WorkerPlan("reference-keras2", backend, 2, [task])

    def report(self) -> ParityReport:
        return execute_runs([self], self.workdir)[0]


def group_workers(runs: Sequence[ParityRun], workdir: Path | None = None) -> list[WorkerPlan]:
    """One process per side and backend, running its side of every model in turn: the
    references first (a Keras 2 and a Keras 3 reference apart: Keras is chosen at import),
    then each target backend. The reference and the targets never share a process, even on
    the same backend: a target would reuse the reference's modules from ``sys.modules``.
    Within a process, each model runs in its own forked child (`fork_server`), or, where
    the process cannot fork safely, is kept apart by `isolation.ModelIsolation`.

    Without the persistent compilation cache (``--no-cache``) the workers get one in the
    run's own folder (`workdir`), deleted with it: what the run compiles twice (the training
    check's repeated step, a model after a worker was replaced) is compiled once. A hit is
    the executable of the same program compiled with the same options, so no number changes;
    nothing is kept for the next run."""
    groups: dict[tuple[str, str, int], list[Task]] = {}
    for run in runs:
        for task in [run.reference_task, *run.targets]:
            groups.setdefault((task.role, task.backend, task.keras), []).append(task)
    ordered = sorted(groups.items(), key=lambda item: item[0][0] != "reference")
    cache = runs[0].options.compile_cache
    if not cache and workdir is not None:
        cache = str(workdir / RUN_COMPILE_CACHE)
    names = [tasks[0].name for _, tasks in ordered]
    return [  # a Keras 2 and a Keras 3 reference are both "reference": their files must differ
        WorkerPlan(
            name if names.count(name) == 1 else f"{name}-keras{keras}", backend, keras, tasks, cache
        )
        for name, ((_, backend, keras), tasks) in zip(names, ordered)
    ]


def execute_runs(runs: Sequence[ParityRun], workdir: Path) -> list[ParityReport]:
    """Run the planned runs' workers together (`execute.WorkerPool`); a report per run."""
    pool = WorkerPool(list(runs), group_workers(runs, workdir), workdir)
    results = pool.execute()
    return [ReportBuilder(run).build(*result) for run, result in zip(runs, results)]


@dataclass(frozen=True)
class ParityEntry:
    """One model of a batch: the model (a ``.keras`` file or a factory) and, for a
    before/after check, its original as a factory spec (`reference`) or as the text
    `kmigrate apply` kept (`reference_source`, with `reference_originals`: absolute path ->
    original text of the other files the rewrite changed)."""

    model: str | ModelSpec
    reference: str | ModelSpec | None = None
    reference_source: str | None = None
    reference_originals: Mapping[str, str] | None = None


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
    entry = ParityEntry(model, reference, reference_source, reference_originals)
    return run_parity_batch([entry], options=options, progress=progress)[0]


def run_parity_batch(
    entries: Sequence[ParityEntry],
    *,
    options: ParityOptions | None = None,
    progress: Progress | None = None,
    on_usage_error: Callable[[int, ParityUsageError], None] | None = None,
) -> list[ParityReport | None]:
    """Several models at the cost of one framework import per backend: one worker per side
    and backend runs every model in turn (`group_workers`), each model kept apart from the
    others (a forked child per model, `fork_server`, else `isolation`), a crash or
    time-out costing only the model it hit.
    The reports are those the models get one by one.

    A model that cannot start (a usage error) raises, or, with `on_usage_error`, is passed
    to it with its index and gets None instead of a report while the others run.
    """
    options = options or ParityOptions()
    if options.timeout <= 0:
        raise ParityUsageError("--timeout must be a positive number of seconds")
    if options.export_dir and len(entries) > 1:
        raise ParityUsageError("--export writes one SavedModel: give it one model at a time")
    keep = options.workdir is not None
    workdir = Path(options.workdir) if keep else Path(tempfile.mkdtemp(prefix="kmigrate-parity-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        runs: list[ParityRun] = []
        planned: list[int] = []
        for index, entry in enumerate(entries):
            folder = workdir if len(entries) == 1 else workdir / f"model-{index + 1:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            try:
                runs.append(_plan(entry, options, folder, progress, len(runs)))
            except ParityUsageError as error:
                if on_usage_error is None:
                    raise
                on_usage_error(index, error)
                continue
            planned.append(index)
        reports: list[ParityReport | None] = [None] * len(entries)
        for index, report in zip(planned, execute_runs(runs, workdir) if runs else []):
            reports[index] = report
        return reports
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _plan(
    entry: ParityEntry,
    options: ParityOptions,
    workdir: Path,
    progress: Progress | None,
    model: int,
) -> ParityRun:
    """One model's run, planned (no worker started yet)."""
    subject = entry.model if isinstance(entry.model, ModelSpec) else parse_model_spec(entry.model)
    has_reference = entry.reference is not None or entry.reference_source is not None
    if entry.reference is not None and entry.reference_source is not None:
        raise ParityUsageError("give the original as reference or reference_source, not both")
    if has_reference and subject.is_keras_file:
        raise ParityUsageError(
            "a before/after check compares two model factories (the original and the "
            "converted build_model); a .keras file carries its own weights"
        )
    reference_spec = None
    if entry.reference_source is not None:
        reference_spec = reference_from_source(
            entry.reference_source, subject, workdir, entry.reference_originals
        )
    elif entry.reference is not None:
        reference = entry.reference
        reference_spec = (
            reference if isinstance(reference, ModelSpec) else parse_model_spec(reference)
        )
        if reference_spec.is_keras_file:
            raise ParityUsageError("--reference takes the original factory, not a .keras file")
    return ParityRun(
        subject, options, reference=reference_spec, workdir=workdir, progress=progress, model=model
    )
