"""The result of a parity run, as data, as a rich table and as JSON.

A `ParityReport` holds one `BackendRun` per worker that ran (the reference first) plus one
row for the served SavedModel when ``--export`` was given. Rendering never changes the
verdict: `ParityReport.passed` and `exit_code` are the contract (0 every backend agrees, 1
anything else: a mismatch, a backend that fails to build, a time-out, a failed reference).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kmigrate.parity.compare import FLOAT_TOLERANCES, ArrayDiff, LayerDivergence

if TYPE_CHECKING:
    from kmigrate.parity.bench_report import BenchTable

JSON_VERSION = 1
USER_FACING_ERRORS = frozenset(
    {"StageError", "ParityUsageError", "Skipped", "Keras2ModuleNotFoundError"}
)
STATUS_STYLE = {
    "pass": ("PASS", "bold green"),
    "fail": ("FAIL", "bold red"),
    "error": ("ERROR", "bold red"),
    "timeout": ("TIMEOUT", "bold red"),
    "skipped": ("skipped", "yellow"),
    "not compared": ("NOT COMPARED", "bold yellow"),
    "reference": ("reference", "cyan"),
}
STAGE_WORDS = {
    "load": "importing the model code",
    "import": "importing Keras",
    "build": "building the model",
    "wait": "waiting for the reference",
    "inputs": "preparing the input batch",
    "weights": "loading the reference weights",
    "predict": "model.predict (compiled)",
    "call": "calling model(x, training=False)",
    "train": "the training step (train_on_batch, SGD)",
    "export": "exporting / serving the SavedModel",
    "bench": "timing predict and a training step (--bench)",
    "crash": "running",
    "start": "starting",
}


@dataclass
class ErrorInfo:
    stage: str
    type: str
    message: str
    traceback: str = ""
    cause: str | None = None  # the original error when another one surfaced while handling it

    @classmethod
    def from_dict(cls, data: dict) -> ErrorInfo:
        return cls(
            stage=data.get("stage", "crash"),
            type=data.get("type", "Error"),
            message=data.get("message", ""),
            traceback=data.get("traceback", ""),
            cause=data.get("cause"),
        )

    @property
    def headline(self) -> str:
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        if self.type in USER_FACING_ERRORS:  # kmigrate's own message: no class name needed
            return first or self.type
        surfaced = f"{self.type}: {first}" if first else self.type
        return f"{self.cause} (then {surfaced})" if self.cause else surfaced

    def to_dict(self) -> dict:
        return {
            "stage": self.stage,
            "type": self.type,
            "message": self.message,
            "cause": self.cause,
            "traceback": self.traceback,
        }


CHECK_TITLES = {"call": "call", "predict": "predict", "train": "train"}


@dataclass
class CheckResult:
    """One way of running the model (eager call, predict, training step) on one backend."""

    name: str  # "call" | "predict" | "train"
    # "pass" | "fail" | "error" | "skipped" (could not be compared: the reference failed it)
    # | "n/a" (nothing to compare on either side: a model with no trainable weights)
    status: str
    diffs: list[ArrayDiff] = field(default_factory=list)
    layer: str | None = None  # the layer named by the failure, as "'path' (Class)"
    detail: list[str] = field(default_factory=list)
    error: ErrorInfo | None = None

    @property
    def ok(self) -> bool:
        """Agrees, or has nothing to compare on either side; a skipped check is not ok."""
        return self.status in ("pass", "n/a")

    def fail(self, path: str, message: str) -> None:
        self.status = "fail"
        self.layer = self.layer or f"'{path}'"
        self.detail.append(message)

    def to_dict(self) -> dict:
        return {
            "check": self.name,
            "status": self.status,
            "layer": self.layer,
            "detail": list(self.detail),
            "outputs": [d.to_dict() for d in self.diffs],
            "error": self.error.to_dict() if self.error else None,
        }


@dataclass
class BackendRun:
    """One row of the report: a worker's verdict against the reference."""

    backend: str
    role: str  # "reference" | "target" | "export"
    model: str  # what ran (the converted factory, the original, a .keras file)
    # "pass" | "fail" | "error" | "timeout" | "skipped" | "reference" | "not compared" (no
    # check failed but one was skipped: not a PASS unless skips are accepted)
    status: str
    keras: str = ""  # "3.15.1" or "2.21.0 (tf_keras)"
    seconds: float | None = None
    outputs: list[ArrayDiff] = field(default_factory=list)
    divergence: LayerDivergence | None = None
    error: ErrorInfo | None = None
    notes: list[str] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    tensorflow: dict | None = None  # jax/torch: who imported tensorflow, if anyone
    timings: dict[str, float] = field(default_factory=dict)  # seconds per worker stage
    hint: str | None = None  # what to do about the error (a failed reference: its causes)

    def check(self, name: str) -> CheckResult | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def label(self) -> str:
        if self.role == "export":
            return f"{self.backend} SavedModel"
        if self.role == "reference":
            return f"{self.backend} (reference)"
        return self.backend

    @property
    def ok(self) -> bool:
        return self.status in ("pass", "reference")

    @property
    def max_abs(self) -> float | None:
        return max((d.max_abs for d in self.outputs), default=None)

    @property
    def max_rel(self) -> float | None:
        return max((d.max_rel for d in self.outputs), default=None)

    def to_dict(self) -> dict:
        return {
            "backend": self.backend,
            "role": self.role,
            "model": self.model,
            "status": self.status,
            "keras": self.keras,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "max_abs_err": _json_number(self.max_abs),
            "max_rel_err": _json_number(self.max_rel),
            "outputs": [d.to_dict() for d in self.outputs],
            "first_divergent_layer": self.divergence.to_dict() if self.divergence else None,
            "error": self.error.to_dict() if self.error else None,
            "notes": list(self.notes),
            "checks": [c.to_dict() for c in self.checks],
            "tensorflow": self.tensorflow,
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
            "hint": self.hint,
        }


def _json_number(value: float | None):
    if value is None:
        return None
    return value if value == value and abs(value) != float("inf") else str(value)


@dataclass
class ParityReport:
    subject: str  # the model under test, as given
    mode: str  # "keras_file" | "factory" | "before_after"
    reference: BackendRun
    runs: list[BackendRun] = field(default_factory=list)
    inputs: list[dict] = field(default_factory=list)  # [{"shape": [...], "dtype": ...}]
    seed: int = 0
    inputs_file: str | None = None  # the batch came from this file instead of the seed
    atol: float | None = None
    rtol: float | None = None
    workdir: str | None = None
    reference_reason: str = ""  # why the reference ran on this Keras
    bench: BenchTable | None = None  # --bench: the timings (never part of the verdict)

    @property
    def passed(self) -> bool:
        return self.reference.ok and bool(self.runs) and all(r.ok for r in self.runs)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def all_runs(self) -> list[BackendRun]:
        return [self.reference, *self.runs]

    def statuses(self) -> dict:
        """The verdicts alone, without numbers or times: the reference's status and, per
        backend row, its status, each check's and whether it still imports TensorFlow (two
        runs of the same models compare equal exactly when they reached the same verdicts)."""
        rows = {
            f"{r.role}:{r.backend}": {
                "status": r.status,
                "checks": {c.name: c.status for c in r.checks},
                "needs_tensorflow": (r.tensorflow or {}).get("needs_tensorflow"),
            }
            for r in self.runs
        }
        return {"subject": self.subject, "reference": self.reference.status, "runs": rows}

    def tolerance_text(self) -> str:
        if self.atol is not None or self.rtol is not None:
            base = FLOAT_TOLERANCES["float32"]
            atol = base.atol if self.atol is None else self.atol
            rtol = base.rtol if self.rtol is None else self.rtol
            return f"atol={atol:g} rtol={rtol:g} (floats; integers exact)"
        return "by dtype (float32 atol=1e-05 rtol=0.0001; float16/bfloat16 looser; ints exact)"

    def inputs_text(self) -> str:
        parts = [
            f"{x.get('name', '') + ' ' if x.get('name') else ''}{tuple(x['shape'])} {x['dtype']}"
            + (f" in [{x['low']:g}, {x['high']:g})" if x.get("high") is not None else "")
            for x in self.inputs
        ]
        origin = f"from {self.inputs_file}" if self.inputs_file else f"seed {self.seed}"
        return f"{', '.join(parts) or 'unknown'} {origin}"

    def to_dict(self) -> dict:
        return {
            "version": JSON_VERSION,
            "passed": self.passed,
            "subject": self.subject,
            "mode": self.mode,
            "inputs": self.inputs,
            "seed": self.seed,
            "inputs_file": self.inputs_file,
            "tolerance": {"atol": self.atol, "rtol": self.rtol, "by_dtype": self.atol is None},
            "reference": self.reference.to_dict(),
            "reference_keras": self.reference.keras,
            "reference_reason": self.reference_reason,
            "runs": [r.to_dict() for r in self.runs],
            "workdir": self.workdir,
            "bench": self.bench.to_dict() if self.bench else None,
        }


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    if value == 0:
        return "0"
    return f"{value:.2e}"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} s"


def render(report: ParityReport, console) -> None:
    """Print the table, the details of every row that did not pass, and a verdict."""
    from rich.table import Table  # noqa: PLC0415 - rich only when printing a table

    table = Table(
        title=f"kmigrate parity: {report.subject}",
        caption=(
            f"reference: {report.reference.model} on {report.reference.backend} · batch "
            f"{report.inputs_text()} · tolerance {report.tolerance_text()} · checks: call = "
            f"model(x, training=False), predict = model.predict (compiled), train = one SGD "
            f"step; ✓ agrees, ✗ differs, ! raised, – not compared"
        ),
        caption_justify="left",
    )
    # max rel err is in the details and the JSON; the table keeps to 80 columns
    table.add_column("Backend", no_wrap=True)
    table.add_column("Keras", no_wrap=True)
    table.add_column("Max abs err", justify="right")
    table.add_column("Checks", no_wrap=True)
    table.add_column("Needs TF")
    table.add_column("Result", no_wrap=True)
    table.add_column("Time", justify="right", no_wrap=True)
    for run in report.all_runs:
        word, style = STATUS_STYLE.get(run.status, (run.status, ""))
        table.add_row(
            run.label,
            run.keras or "—",
            _number(run.max_abs),
            _checks_cell(run),
            _tensorflow_cell(run),
            f"[{style}]{word}[/]" if style else word,
            _seconds(run.seconds),
        )
    console.print(table)
    if report.reference_reason:
        console.print(f"reference: {report.reference_reason}", highlight=False, soft_wrap=True)
    for run in report.all_runs:  # not wrapped: tracebacks and paths stay greppable
        for line in explain(run):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    if report.bench is not None:
        report.bench.render(console)
    console.print(verdict(report), highlight=False, soft_wrap=True)


CHECK_MARKS = {
    "pass": ("✓", "green"),
    "fail": ("✗", "bold red"),
    "error": ("!", "bold red"),
    "skipped": ("–", "yellow"),
    "n/a": ("–", "dim"),
}


def _checks_cell(run: BackendRun) -> str:
    """'call✓ predict✓ train✗': each check run on this backend with its outcome."""
    if not run.checks:
        return "—"
    cells = []
    for check in run.checks:
        mark, style = CHECK_MARKS.get(check.status, ("?", ""))
        cells.append(f"[{style}]{CHECK_TITLES[check.name]}{mark}[/]")
    return " ".join(cells)


def _tensorflow_cell(run: BackendRun) -> str:
    if not run.tensorflow:
        return "—"
    return "[yellow]yes[/]" if run.tensorflow.get("needs_tensorflow") else "[green]no[/]"


def tensorflow_line(run: BackendRun) -> str | None:
    """Does the converted model still need TensorFlow on this backend, and why."""
    if not run.tensorflow:
        return None
    importer = run.tensorflow.get("importer")
    if not run.tensorflow.get("needs_tensorflow") or not importer:
        return (
            f"{run.label}: runs without TensorFlow (never imported while building, calling, "
            f"predicting and training)"
        )
    where = f"{importer.get('file')}:{importer.get('line')}"
    code = f" `{importer['code']}`" if importer.get("code") else ""
    who = "" if importer.get("user_code") else " (library code, not the model's)"
    return f"{run.label}: still needs TensorFlow: imported at {where}{code}{who}"


def explain_check(run: BackendRun, check: CheckResult) -> list[str]:
    title = f"{run.label} {CHECK_TITLES[check.name]}"
    if check.status == "error" and check.error:
        stage = STAGE_WORDS.get(check.error.stage, check.error.stage)
        where = f" in layer {check.layer}" if check.layer else ""
        lines = [f"{title}: ERROR while {stage}{where}: {check.error.headline}"]
        lines.extend(f"    {t}" for t in check.error.traceback.splitlines())
        return lines
    if check.status == "fail":
        where = f" (layer {check.layer})" if check.layer else ""
        lines = [f"{title}: FAIL{where}"]
        lines.extend(f"  {d}" for d in check.detail)
        lines.extend(f"  {describe_diff(d)}" for d in check.diffs if not d.passed)
        return lines
    if check.status == "skipped":
        return [f"{title}: not compared ({'; '.join(check.detail)})"]
    if check.status == "n/a":
        return [f"{title}: nothing to compare ({'; '.join(check.detail)})"]
    return []


def explain(run: BackendRun) -> list[str]:
    """Plain-text lines about one row: notes, mismatches, the diverging layer, errors."""
    lines = [f"{run.label}: {note}" for note in run.notes]
    for check in run.checks:
        if check.name != "call" or check.status == "error":
            lines.extend(explain_check(run, check))
    tensorflow = tensorflow_line(run)
    if tensorflow:
        lines.append(tensorflow)
    call = run.check("call")
    if run.status == "fail" and (call is None or call.status == "fail"):
        for diff in run.outputs:
            if not diff.passed:
                lines.append(f"{run.label}: {describe_diff(diff)}")
        if run.divergence:
            lines.extend(f"  {line}" for line in describe_divergence(run.divergence))
        elif run.role != "export":
            lines.append(
                "  no layer-by-layer trace to compare (subclassed call not traced, or "
                "--no-localize)"
            )
    elif run.status in ("error", "timeout") and run.error:
        stage = STAGE_WORDS.get(run.error.stage, run.error.stage)
        lines.append(f"{run.label}: {run.status.upper()} while {stage}: {run.error.headline}")
        if run.error.traceback:
            lines.extend(f"    {t}" for t in run.error.traceback.splitlines())
        hint = error_hint(run)
        if hint:
            lines.append(f"  next: {hint}")
    elif run.status == "skipped" and run.error:
        lines.append(f"{run.label}: skipped ({run.error.message})")
    return lines


def describe_diff(diff: ArrayDiff) -> str:
    if diff.problem:
        return f"output '{diff.name}': {diff.problem}"
    text = (
        f"output '{diff.name}' {tuple(diff.shape)} {diff.dtype}: {diff.mismatched} of "
        f"{diff.size} values outside {diff.tolerance.describe()}, max abs err "
        f"{_number(diff.max_abs)}"
    )
    if diff.worst:
        text += (
            f"; worst at {diff.worst['index']}: {diff.worst['value']} vs reference "
            f"{diff.worst['reference']}"
        )
    return text


def describe_divergence(div: LayerDivergence) -> list[str]:
    worst = div.worst
    name = f"'{div.path}' ({div.class_name})"
    if div.reference_path != div.path:
        name += f", reference layer '{div.reference_path}'"
    if worst.problem:
        head = f"first diverging layer: {name}: {worst.problem}"
    else:
        head = (
            f"first diverging layer: {name}: max abs err {_number(worst.max_abs)}, max rel err "
            f"{_number(worst.max_rel)}, {worst.mismatched} of {worst.size} values outside "
            f"{worst.tolerance.describe()}"
        )
        if worst.worst:
            head += (
                f"; worst at {worst.worst['index']}: {worst.worst['value']} vs reference "
                f"{worst.worst['reference']}"
            )
    lines = [head]
    if div.last_agreeing:
        lines.append(
            f"layers before it agree (last: '{div.last_agreeing}', max abs err "
            f"{_number(div.last_agreeing_max_abs)})"
        )
    else:
        lines.append("it is the first layer compared: check the inputs it receives")
    lines.append(
        f"next: read the call() of {div.class_name}; usual causes are approximate vs exact "
        f"gelu, a different axis default, a dtype change (int64 vs int32), or a random op "
        f"active at inference; `kmigrate scan` flags known ones"
    )
    return lines


def error_hint(run: BackendRun) -> str | None:
    error = run.error
    if error is None:
        return None
    if run.status == "timeout":
        return "raise --timeout (seconds), or look for a hang in the model code"
    if "custom_objects" in error.message or "Could not locate" in error.message:
        return "give the module that defines the custom layers: --custom-objects layers.py"
    if run.role == "reference":
        return run.hint or (
            "the reference must run before anything can be compared; fix the error above or "
            "choose another reference (--reference-backend, --reference-keras)"
        )
    if error.stage == "weights":
        return (
            "the model built here does not have the same layers/weights as the reference; "
            "compare the layer names and shapes in the message above"
        )
    if error.stage in ("build", "load", "predict"):
        return (
            f"the model code does not run on {run.backend}: `kmigrate scan` lists the "
            f"TensorFlow-only calls and `kmigrate apply` rewrites the ones it can"
        )
    if error.stage == "export":
        return "model.export() needs a model that traces with tf.function on the TF backend"
    return None


def render_summary(reports: list[ParityReport], console) -> None:
    """After the reports of several models: one line per model, then how many passed."""
    console.print()
    for report in reports:
        mark = verdict(report).split(":", 1)[0]  # PASS, FAIL or NOT COMPARED, coloured
        console.print(f"{mark}  {report.subject}", highlight=False)
    passed = sum(r.passed for r in reports)
    console.print(f"{passed} of {len(reports)} models pass")


def verdict(report: ParityReport) -> str:
    targets = [r for r in report.runs if r.role == "target"]
    if report.passed:
        names = ", ".join(r.label for r in report.runs)
        # only checks that compared something: a skipped one (no trainable weights,
        # an integer output) passes without saying anything about the numbers
        ran = sorted(
            {CHECK_TITLES[c.name] for r in report.runs for c in r.checks if c.status == "pass"}
        )
        how = f" ({', '.join(ran)})" if ran else ""
        return f"[bold green]PASS[/]: the outputs agree with the reference on {names}{how}"
    if not report.reference.ok:
        return "[bold red]FAIL[/]: the reference did not run, so nothing was compared"
    bad = [r.label for r in report.runs if not r.ok]
    if report.runs and all(r.ok or r.status == "not compared" for r in report.runs):
        return (
            f"[bold yellow]NOT COMPARED[/]: no check failed, but checks were skipped on "
            f"{', '.join(bad)} (see above), so this is not a PASS; --accept-skips accepts them"
        )
    return (
        f"[bold red]FAIL[/]: {len(bad)} of {len(report.runs)} checks failed: "
        + ", ".join(bad)
        + ("" if targets else " (no backend ran)")
    )
