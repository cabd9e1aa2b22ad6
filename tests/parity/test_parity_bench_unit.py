"""`kmigrate parity --bench` without a backend: medians, ratios, the 2x flag, the slowest
layer and the table, from fake timings; the worker's timing helpers with plain callables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from kmigrate.parity import bench as bench_module
from kmigrate.parity.bench import BackendBench, repeat_rows, time_runs
from kmigrate.parity.bench_report import SLOWER_THAN, BenchTable, Timing, duration, times
from kmigrate.parity.report import BackendRun, ParityReport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "parity"


def _bench(predict, train=None, layers=None, **extra) -> dict:
    """What a worker writes under ``bench``: seconds per run (fake)."""
    entry = {"batch_size": 32, "runs": len(predict), "warmup": 3, "device": "cpu"}
    entry["predict"] = {"seconds": predict, "jit_compile": "True"}
    entry["train"] = {"seconds": train} if train else {"skipped": "the model has no weights"}
    if layers:
        entry["layers"] = {
            "mode": "eager",
            "runs": 1,
            "total_seconds": [sum(layers.values())],
            "layers": [{"path": p, "class": p.title(), "seconds": [s]} for p, s in layers.items()],
        }
    entry.update(extra)
    return entry


def _report(*targets: tuple[str, str]) -> ParityReport:
    reference = BackendRun(
        "tensorflow", "reference", "original m.py", "reference", "2.21 (tf_keras)"
    )
    runs = [BackendRun(backend, "target", "converted m.py", status) for backend, status in targets]
    return ParityReport(subject="m.py", mode="before_after", reference=reference, runs=runs)


ORIGINAL = _bench([0.010, 0.012, 0.011], [0.020] * 3, {"dense": 0.004, "center": 0.001})


def test_median_quartiles_and_extremes_of_the_runs():
    timing = Timing((0.004, 0.001, 0.003, 0.002, 0.100))
    data = timing.to_dict()
    assert data["median_s"] == 0.003
    assert (data["q1_s"], data["q3_s"]) == (0.002, 0.004)
    assert (data["min_s"], data["max_s"], data["runs"]) == (0.001, 0.100, 5)
    assert timing.cell() == "3 ms (2–4)"


def test_ratio_to_the_original_and_the_flag_above_two():
    report = _report(("jax", "pass"), ("torch", "pass"))
    table = BenchTable.build(
        report,
        ORIGINAL,
        [
            _bench([0.021] * 3, [0.039] * 3),  # 1.91x predict, 1.95x train: not flagged
            _bench([0.011] * 3, [0.041] * 3),  # 1.0x predict, 2.05x train: flagged
        ],
    )
    original, jax, torch = table.rows
    assert jax.ratios["predict"] == pytest.approx(0.021 / 0.011)
    assert not jax.flagged and not original.flagged
    assert torch.ratios["train"] == pytest.approx(2.05)
    assert torch.flagged
    data = table.to_dict()
    assert data["flagged"] == ["torch"]
    assert data["slower_than"] == SLOWER_THAN == 2.0
    assert data["rows"][2]["ratio_to_original"]["train"] == pytest.approx(2.05)
    assert data["rows"][0]["predict"]["median_s"] == 0.011
    assert data["rows"][0]["predict"]["jit_compile"] == "True"


def test_a_flagged_row_names_the_layer_that_grew_most_over_the_original():
    # 'dense' is the largest layer here and in the original; 'center' grew 40x
    slow = _bench([0.050] * 3, [0.020] * 3, {"dense": 0.006, "center": 0.040, "head": 0.001})
    table = BenchTable.build(_report(("torch", "pass")), ORIGINAL, [slow])
    torch = table.rows[1]
    assert torch.flagged
    assert torch.slowest_layer.path == "center"
    assert torch.slowest_layer.original_seconds == 0.001
    lines = "\n".join(table.lines())
    assert "SLOW torch: more than 2x slower than the original (predict 4.55x)" in lines
    assert (
        "slowest layer: 'center' (Center): 40 ms of the 47 ms eager call (the original's: 1 ms)"
        in lines
    )
    assert "in eager calls" in lines


def test_unflagged_rows_name_no_layer_and_missing_parts_say_why():
    fast = _bench([0.005] * 3, None, {"center": 0.5})
    failed = {"device": "cpu", "predict": {"error": {"type": "ValueError", "message": "bad\nx"}}}
    report = _report(("jax", "pass"), ("torch", "pass"), ("tensorflow", "error"))
    table = BenchTable.build(report, ORIGINAL, [fast, failed, None])
    jax, torch, tensorflow = table.rows[1:]
    assert jax.slowest_layer is None and "train" not in jax.ratios
    assert jax.missing == {"train": "the model has no weights"}
    assert torch.missing["predict"] == "raised ValueError: bad"
    assert tensorflow.missing["predict"] == "the model did not run here (error)"
    lines = table.lines()
    assert "jax: train step not timed: the model has no weights" in lines
    assert "torch: predict not timed: raised ValueError: bad" in lines


def test_the_fastest_backend_is_among_those_whose_parity_passed():
    report = _report(("jax", "fail"), ("torch", "pass"), ("tensorflow", "pass"))
    table = BenchTable.build(
        report,
        ORIGINAL,
        [_bench([0.001] * 3, [0.001] * 3), _bench([0.009] * 3), _bench([0.008] * 3)],
    )
    assert table.fastest("predict").backend == "tensorflow"  # jax is faster, but differs
    assert table.to_dict()["fastest"] == {"predict": "tensorflow", "train": None}


def test_no_ratio_when_the_original_was_not_timed():
    table = BenchTable.build(_report(("jax", "pass")), None, [_bench([0.5] * 3, [0.5] * 3)])
    assert table.rows[1].ratios == {} and not table.rows[1].flagged
    assert table.batch_size == 32  # the header comes from any side that wrote one


def test_the_table_and_the_parity_report_json():
    report = _report(("torch", "pass"))
    slow = _bench([0.050] * 3, [0.020] * 3, {"center": 0.040})
    report.bench = BenchTable.build(report, ORIGINAL, [slow])
    console = Console(width=200, record=True)
    report.bench.render(console)
    text = console.export_text()
    assert "│ tensorflow (reference)" in text
    row = next(line for line in text.splitlines() if line.startswith("│ torch"))
    assert "50 ms (50–50)" in row and "4.55x" in row and "SLOW" in row
    assert report.to_dict()["bench"]["rows"][1]["flagged"] is True
    assert _report().to_dict()["bench"] is None  # without --bench


def test_number_formats():
    assert [duration(s) for s in (2.5, 0.0123, 0.000184, None)] == [
        "2.5 s",
        "12.3 ms",
        "184 µs",
        "—",
    ]
    assert [times(r) for r in (2.345, 0.0031, None)] == ["2.35x", "0.0031x", "—"]


def test_time_runs_warms_up_then_times_each_run():
    calls = []
    seconds = time_runs(lambda: calls.append(1), warmup=3, runs=5)
    assert len(calls) == 8 and len(seconds) == 5 and all(s >= 0 for s in seconds)


def test_the_timed_batch_repeats_the_parity_rows():
    ids = np.array([[1], [2], [3]])
    (repeated,) = repeat_rows([ids], 7)
    assert repeated[:, 0].tolist() == [1, 2, 3, 1, 2, 3, 1]
    assert repeat_rows([ids], 2)[0].tolist() == [[1], [2]]


class _FakeWorker:
    """Just what `BackendBench._timed_call` uses."""

    def to_numpy(self, value):
        return np.asarray(value)


def test_layer_time_is_its_own_time_without_its_sub_layers(monkeypatch):
    clock = [0.0]  # a fake clock: each layer "runs" by moving it
    monkeypatch.setattr(bench_module, "perf_counter", lambda: clock[0])
    bench = BackendBench.__new__(BackendBench)
    bench.worker = _FakeWorker()
    own, stack, classes = {}, [0.0], {}

    def inner_call(x):
        clock[0] += 0.02
        return x

    inner = bench._timed_call("a/b", object(), inner_call, own=own, stack=stack, classes=classes)

    def outer_call(x):
        clock[0] += 0.01
        return inner(inner(x))  # called twice: its times add up

    outer = bench._timed_call("a", object(), outer_call, own=own, stack=stack, classes=classes)
    outer(np.zeros(2))
    assert own == {"a/b": pytest.approx(0.04), "a": pytest.approx(0.01)}
    assert stack == [pytest.approx(0.05)]  # what the model's own time is measured against
    assert classes == {"a/b": "object", "a": "object"}


def test_bench_options_reach_every_worker_and_stay_out_without_bench(tmp_path):
    from kmigrate.parity.plan import ParityOptions, installed_backends, parse_model_spec
    from kmigrate.parity.runner import ParityRun

    assert ParityOptions().bench_job() is None
    if len(installed_backends()) < 2:
        pytest.skip("needs two installed backends to plan a run")
    model = parse_model_spec(str(FIXTURES / "portable_layers.py"))
    options = ParityOptions(bench=True, bench_runs=5, bench_batch_size=8)
    run = ParityRun(model, options, reference=None, workdir=tmp_path)
    for task in [run.reference_task, *run.targets]:
        assert task.payload["bench"] == {"runs": 5, "batch_size": 8}


def test_a_busy_machine_is_said_so():
    quiet = BenchTable.build(_report(("jax", "pass")), ORIGINAL, [_bench([0.01] * 3)])
    assert not quiet.busy
    busy = _bench([0.01] * 3, load_average=[14.2, 13.0, 9.0], cpus=2)
    table = BenchTable.build(_report(("jax", "pass")), ORIGINAL, [busy])
    assert table.busy and table.to_dict()["load_average"] == 14.2
    assert any("busy while timing (load average 14.2 on 2 CPUs)" in line for line in table.lines())


class _BrokenWorker:
    """A worker whose model ran but whose batch cannot be repeated."""

    task = {"bench": {"runs": 2, "batch_size": 4}}
    model = None
    inputs = []  # no input arrays: repeat_rows raises IndexError
    runtime = type("Runtime", (), {"profile": None})()

    def __init__(self):
        self.result = {"status": "ok", "checks": {"predict": {"status": "ok"}}}

    def model_args(self, inputs):
        return inputs


def test_a_bench_that_raises_is_reported_and_never_loses_the_result():
    worker = _BrokenWorker()
    info = BackendBench(worker).run()
    assert worker.result["bench"] is info
    assert info["skipped"].startswith("the bench raised IndexError")
    assert info["device"].startswith("unknown")  # a profile hook that raises: a note only
