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

import shutil
import tempfile
from collections.abc import Callable, Mapping
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

__all__ = ["ParityOptions", "ParityRun", "original_tree", "run_parity"]

Progress = Callable[[str], None]


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
        """One fresh process per side: the reference, and each target on its own, even the
        one on the reference's backend (sharing would let it reuse the reference's modules
        from ``sys.modules``)."""
        cache = self.options.compile_cache
        return [
            WorkerPlan(task.name, task.backend, task.keras, [task], cache)
            for task in [self.reference_task, *self.targets]
        ]

    def fallback_worker(self) -> WorkerPlan:
        """A second attempt at the reference, on Keras 2, when Keras 3 could not run it."""
        backend = keras2_backend()
        task = self._make_task("reference-keras2", "reference", backend, keras=2)
        self.reference_reason = "Keras 2 (tf_keras): Keras 3 could not run the original"
        return WorkerPlan("reference-keras2", backend, 2, [task])

    def report(self) -> ParityReport:
        pool = WorkerPool(self)
        attempts, targets = pool.execute()
        return ReportBuilder(self).build(attempts, targets)


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
