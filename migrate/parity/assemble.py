"""A parity run's report from what its workers wrote: the reference's row (with every attempt
and what to do when none ran) and, per target, each check compared with the reference's:
the eager call with its first diverging layer, ``predict``, the training step, and the
served SavedModel of ``--export``. Plain NumPy: no framework is imported here.
"""

from __future__ import annotations

from kmigrate.parity.bench_report import BenchTable
from kmigrate.parity.compare import (
    ArrayDiff,
    LayerDivergence,
    LayerRecord,
    RecordedArray,
    find_divergence,
)
from kmigrate.parity.jobs import Outcome, Task
from kmigrate.parity.plan import module_available
from kmigrate.parity.reference_help import Attempt, attempt_notes, reference_hint
from kmigrate.parity.report import BackendRun, CheckResult, ErrorInfo, ParityReport
from kmigrate.parity.verdicts import (
    check_entry,
    compare_checks,
    compare_output_lists,
    error_result,
)


class ReportBuilder:
    """Turns the outcomes of one `ParityRun` into its `ParityReport`."""

    def __init__(self, run):  # a `runner.ParityRun` (not imported: it imports this)
        self.run = run

    def build(self, attempts: list[Outcome], targets: dict[str, Outcome]) -> ParityReport:
        reference = attempts[-1]
        reference_run = self._reference_run(attempts)
        report = ParityReport(
            subject=self.run.subject.label,
            mode=self.run.mode,
            reference=reference_run,
            inputs=reference.result.get("inputs", []),
            seed=self.run.options.seed,
            inputs_file=self.run.options.inputs_file,
            atol=self.run.options.atol,
            rtol=self.run.options.rtol,
            workdir=str(self.run.workdir) if self.run.options.workdir else None,
            reference_reason=self.run.reference_reason,
        )
        if reference.status == "ok" and reference.task.payload.get("export_dir"):
            report.runs.append(self._export_run(reference, reference))
        for task in self.run.targets:
            outcome = targets[task.name]
            report.runs.append(self._target_run(outcome, reference))
            if outcome.status == "ok" and task.payload.get("export_dir"):
                report.runs.append(self._export_run(outcome, reference))
        if self.run.options.bench:
            report.bench = BenchTable.build(
                report,
                reference.result.get("bench"),
                [targets[task.name].result.get("bench") for task in self.run.targets],
            )
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
        elif final.status != "ok" and self.run.mode == "before_after":
            tries = [Attempt(a.task.keras, a.task.backend, a.error) for a in attempts]
            run.notes[:0] = attempt_notes(tries)
            run.hint = reference_hint(
                tries,
                keras_choice=self.run.options.reference_keras,
                tf_keras=module_available("tf_keras"),
            )
        return run

    def _model_text(self, task: Task) -> str:
        if self.run.mode == "before_after":
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
            compare_checks(
                outcome, reference, atol=self.run.options.atol, rtol=self.run.options.rtol
            )
        )
        predict = run.check("predict")
        if not run.outputs and predict is not None:
            run.outputs = predict.diffs
        run.status = self._verdict(run)
        return run

    def _verdict(self, run: BackendRun) -> str:
        """Pass only when every check compared and agreed; a skipped check makes the row
        "not compared" (exit 1) unless the user accepted skips."""
        if not run.checks or any(c.status in ("fail", "error") for c in run.checks):
            return "fail"
        skipped = [c.name for c in run.checks if c.status == "skipped"]
        if not skipped:
            return "pass"
        if self.run.options.accept_skips:
            run.notes.append(f"not compared, accepted with --accept-skips: {', '.join(skipped)}")
            return "pass"
        return "not compared"

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
        if check.status == "fail" and self.run.options.localize:
            divergence = find_divergence(
                _layer_records(reference),
                _layer_records(outcome),
                atol=self.run.options.atol,
                rtol=self.run.options.rtol,
            )
            if divergence:
                check.layer = f"'{divergence.path}' ({divergence.class_name})"
        return check, divergence

    def _export_run(self, outcome: Outcome, reference: Outcome) -> BackendRun:
        info = outcome.result.get("export") or {}
        run = BackendRun(
            backend=outcome.task.backend,
            role="export",
            model=f"serving_default of {info.get('dir', self.run.export_dir)}",
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
            atol=self.run.options.atol,
            rtol=self.run.options.rtol,
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
