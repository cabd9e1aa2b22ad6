"""``kmigrate parity --bench``, the report's side: the timings the workers wrote (`bench`),
as medians with their spread, as ratios to the original, and as a table and JSON.

The original is the reference row (the legacy model on Keras 2 / TensorFlow in a
before/after check, else the reference backend). A converted model more than
`SLOWER_THAN` times slower than the original on any backend (``predict`` or the training
step, by median) is flagged: a rewrite that stops compilation or runs Python-side loops
shows here. A flagged row names its slowest layer from the eager per-layer timings: the
layer whose own time grew most over the original's layer of the same path (its own time
when the original has no such layer). Eager timings are a hint, not the compiled profile.

The bench never changes the parity verdict or the exit status; a row whose numbers did not
agree is still timed (marked in the Parity column) but never named the fastest.
Plain Python and NumPy: no framework is imported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kmigrate.parity.bench import MODEL_OWN

SLOWER_THAN = 2.0  # flag a converted model this many times slower than the original
PARTS = ("predict", "train")
PART_TITLES = {"predict": "predict", "train": "train step"}


def _median(values) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


@dataclass(frozen=True)
class Timing:
    """The seconds of N timed runs of one thing on one side."""

    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return _median(self.seconds)

    @property
    def quartiles(self) -> tuple[float, float]:
        q1, q3 = np.percentile(np.asarray(self.seconds, dtype=float), [25, 75])
        return float(q1), float(q3)

    def to_dict(self) -> dict:
        q1, q3 = self.quartiles
        return {
            "median_s": self.median,
            "q1_s": q1,
            "q3_s": q3,
            "min_s": min(self.seconds),
            "max_s": max(self.seconds),
            "runs": len(self.seconds),
            "seconds": list(self.seconds),
        }

    def cell(self) -> str:
        """'12.3 ms (11.9–13.4)': the median, then the quartiles in the median's unit."""
        q1, q3 = self.quartiles
        scale, unit = _unit(self.median)
        return f"{self.median * scale:.3g} {unit} ({q1 * scale:.3g}–{q3 * scale:.3g})"


@dataclass(frozen=True)
class LayerTime:
    """One layer's own eager seconds per call of the model (median over the eager runs)."""

    path: str
    class_name: str
    seconds: float
    original_seconds: float | None = None  # the original's layer of the same path

    @property
    def growth(self) -> float:
        return self.seconds - (self.original_seconds or 0.0)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "class": self.class_name,
            "median_s": self.seconds,
            "original_median_s": self.original_seconds,
        }

    def describe(self, eager_seconds: float | None) -> str:
        """ "'center' (CenterRows): 40 ms of the 41 ms eager call (the original's: 1 ms)"."""
        name = "the model's own code" if self.path == MODEL_OWN else f"'{self.path}'"
        of = f" of the {duration(eager_seconds)} eager call" if eager_seconds else ""
        text = f"{name} ({self.class_name}): {duration(self.seconds)}{of}"
        if self.original_seconds is not None:
            text += f" (the original's: {duration(self.original_seconds)})"
        return text


@dataclass
class BenchRow:
    """One side's timings: the original (``role == "reference"``) or a converted model."""

    label: str  # as the parity table shows the side
    backend: str
    role: str
    parity: str  # the side's parity status ("pass", "fail", "reference", ...)
    keras: str = ""
    device: str = ""
    timings: dict[str, Timing] = field(default_factory=dict)  # "predict" / "train"
    jit_compile: dict[str, str] = field(default_factory=dict)  # part -> the model's setting
    missing: dict[str, str] = field(default_factory=dict)  # part -> why it was not timed
    layers: list[LayerTime] = field(default_factory=list)  # eager, own time per layer
    eager_seconds: float | None = None  # median eager call, every layer included
    ratios: dict[str, float] = field(default_factory=dict)  # part -> median / original's
    slowest_layer: LayerTime | None = None

    @classmethod
    def from_result(cls, run, bench: dict | None) -> BenchRow:
        """`run`: the side's `report.BackendRun`; `bench`: what its worker wrote."""
        row = cls(run.label, run.backend, run.role, run.status, keras=run.keras)
        if not bench or bench.get("skipped"):
            why = (bench or {}).get("skipped") or f"the model did not run here ({run.status})"
            row.missing = dict.fromkeys(PARTS, why)
            return row
        row.device = str(bench.get("device", ""))
        for part in PARTS:
            entry = bench.get(part) or {}
            if entry.get("seconds"):
                row.timings[part] = Timing(tuple(float(s) for s in entry["seconds"]))
                row.jit_compile[part] = str(entry.get("jit_compile"))
            elif entry.get("error"):
                error = entry["error"]
                row.missing[part] = (
                    f"raised {error.get('type', 'an error')}: "
                    + str(error.get("message", "")).strip().partition("\n")[0]
                )
            else:
                row.missing[part] = entry.get("skipped", "not timed")
        layers = bench.get("layers") or {}
        if layers.get("total_seconds"):
            row.eager_seconds = _median(layers["total_seconds"])
        row.layers = [
            LayerTime(entry["path"], entry.get("class", ""), _median(entry["seconds"]))
            for entry in layers.get("layers", [])
            if entry.get("seconds")
        ]
        return row

    @property
    def flagged(self) -> bool:
        return self.role != "reference" and any(r > SLOWER_THAN for r in self.ratios.values())

    def compare_with(self, original: BenchRow) -> None:
        """Ratios to the original's medians; for a flagged row, its slowest layer."""
        for part, timing in self.timings.items():
            base = original.timings.get(part)
            if base is not None and base.median > 0:
                self.ratios[part] = timing.median / base.median
        if self.flagged and self.layers:
            before = {layer.path: layer.seconds for layer in original.layers}
            grown = [
                LayerTime(layer.path, layer.class_name, layer.seconds, before.get(layer.path))
                for layer in self.layers
            ]
            self.slowest_layer = max(grown, key=lambda layer: layer.growth)

    def to_dict(self) -> dict:
        parts = {}
        for part in PARTS:
            timing = self.timings.get(part)
            parts[part] = (
                {**timing.to_dict(), "jit_compile": self.jit_compile.get(part)}
                if timing
                else {"not_timed": self.missing.get(part)}
            )
        return {
            "backend": self.backend,
            "role": self.role,
            "label": self.label,
            "keras": self.keras,
            "parity": self.parity,
            "device": self.device,
            **parts,
            "ratio_to_original": {part: self.ratios.get(part) for part in PARTS},
            "flagged": self.flagged,
            "slowest_layer": self.slowest_layer.to_dict() if self.slowest_layer else None,
            "eager": {
                "median_s": self.eager_seconds,
                "layers": [
                    layer.to_dict()
                    for layer in sorted(self.layers, key=lambda layer: -layer.seconds)
                ],
            },
        }


@dataclass
class BenchTable:
    """Every side's `BenchRow`, the original first."""

    batch_size: int
    runs: int
    warmup: int
    rows: list[BenchRow]
    load: float | None = None  # the highest 1-minute load average a worker saw
    cpus: int | None = None

    @classmethod
    def build(cls, report, reference_bench: dict | None, target_benches: list) -> BenchTable:
        """`report`: the `report.ParityReport`; `target_benches`: what each target worker
        wrote under ``bench``, in the order of the report's target rows."""
        targets = [run for run in report.runs if run.role == "target"]
        original = BenchRow.from_result(report.reference, reference_bench)
        rows = [original]
        for run, bench in zip(targets, target_benches):
            row = BenchRow.from_result(run, bench)
            row.compare_with(original)
            rows.append(row)
        benches = [b for b in [reference_bench, *target_benches] if b]
        header = benches[0] if benches else {}
        loads = [b["load_average"][0] for b in benches if b.get("load_average")]
        return cls(
            batch_size=int(header.get("batch_size", 0)),
            runs=int(header.get("runs", 0)),
            warmup=int(header.get("warmup", 0)),
            rows=rows,
            load=max(loads, default=None),
            cpus=next((b["cpus"] for b in benches if b.get("cpus")), None),
        )

    @property
    def busy(self) -> bool:
        """More runnable processes than CPUs while timing: the figures are stretched."""
        return self.load is not None and bool(self.cpus) and self.load > self.cpus

    @property
    def flagged(self) -> list[BenchRow]:
        return [row for row in self.rows if row.flagged]

    def fastest(self, part: str = "predict") -> BenchRow | None:
        """The converted side with the lowest median, among those whose parity passed."""
        timed = [
            row
            for row in self.rows
            if row.role != "reference" and row.parity == "pass" and part in row.timings
        ]
        return min(timed, key=lambda row: row.timings[part].median, default=None)

    def to_dict(self) -> dict:
        fastest = {part: getattr(self.fastest(part), "backend", None) for part in PARTS}
        return {
            "batch_size": self.batch_size,
            "runs": self.runs,
            "warmup": self.warmup,
            "slower_than": SLOWER_THAN,
            "layer_timing": "eager",
            "rows": [row.to_dict() for row in self.rows],
            "flagged": [row.backend for row in self.flagged],
            "fastest": fastest,
            "load_average": self.load,
            "cpus": self.cpus,
            "busy": self.busy,
        }

    def lines(self) -> list[str]:
        """What the table cannot say: flags with their layer, parts not timed, the winner."""
        lines = []
        for row in self.flagged:
            slower = ", ".join(
                f"{PART_TITLES[p]} {times(r)}" for p, r in row.ratios.items() if r > SLOWER_THAN
            )
            lines.append(
                f"SLOW {row.label}: more than {SLOWER_THAN:g}x slower than the original ({slower})"
            )
            if row.slowest_layer is not None:
                lines.append(
                    f"  slowest layer: {row.slowest_layer.describe(row.eager_seconds)}; "
                    f"timed layer by layer in eager calls, a hint: compiled code may differ"
                )
        for row in self.rows:
            for part, why in row.missing.items():
                lines.append(f"{row.label}: {PART_TITLES[part]} not timed: {why}")
        if self.busy:
            lines.append(
                f"note: the machine was busy while timing (load average {self.load:.1f} on "
                f"{self.cpus} CPUs): times are stretched and noisy, and a backend whose thread "
                f"pool waits for busy cores (torch) can be flagged for that alone; time again "
                f"on a quiet machine before acting on a flag"
            )
        for part in PARTS:
            best = self.fastest(part)
            if best is not None:
                ratio = best.ratios.get(part)
                versus = f", {times(ratio)} the original" if ratio is not None else ""
                lines.append(
                    f"fastest converted backend for {PART_TITLES[part]}: {best.backend} "
                    f"({duration(best.timings[part].median)}{versus})"
                )
        return lines

    def render(self, console) -> None:
        from rich.table import Table  # noqa: PLC0415 - rich only when printing a table

        table = Table(
            title="kmigrate parity --bench",
            caption=(
                f"batch of {self.batch_size} rows (the parity batch repeated); median "
                f"(quartiles) of {self.runs} timed runs after {self.warmup} warm-up runs, "
                f"compiled as each backend compiles by default; predict = model.predict_on_batch, "
                f"train step = one train_on_batch (SGD, mean squared error); x orig = "
                f"median / the original's median; SLOW: more than {SLOWER_THAN:g}x slower"
            ),
            caption_justify="left",
        )
        for title in ("Backend", "Device", "Parity"):
            table.add_column(title, no_wrap=True)
        for part in PARTS:
            table.add_column(PART_TITLES[part], justify="right", no_wrap=True)
            table.add_column("x orig", justify="right", no_wrap=True)
        table.add_column("Flag", no_wrap=True)
        for row in self.rows:
            cells = [row.label, row.device or "—", row.parity]
            for part in PARTS:
                timing = row.timings.get(part)
                cells.append(timing.cell() if timing else "—")
                ratio = row.ratios.get(part)
                cells.append(times(ratio))
            cells.append("[bold red]SLOW[/]" if row.flagged else "")
            table.add_row(*cells)
        console.print(table)
        for line in self.lines():
            console.print(line, highlight=False, markup=False, soft_wrap=True)


def _unit(seconds: float) -> tuple[float, str]:
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def duration(seconds: float | None) -> str:
    """0.01234 -> '12.3 ms'; 1.5 -> '1.5 s'."""
    if seconds is None:
        return "—"
    scale, unit = _unit(seconds)
    return f"{seconds * scale:.3g} {unit}"


def times(ratio: float | None) -> str:
    """2.345 -> '2.35x'; 0.00312 -> '0.0031x' (two significant digits below 0.1)."""
    if ratio is None:
        return "—"
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"
