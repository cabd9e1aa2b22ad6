"""`kmigrate parity --bench` on the real backends: a sample on tensorflow, jax and torch
beside its Keras 2 original, and a converted layer with a Python loop over the batch.

Each parity run costs ~15 s per backend here: two runs, few timed runs, small batches.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from kmigrate.parity.cli import parity_command
from kmigrate.parity.plan import ParityOptions
from kmigrate.parity.report import render
from kmigrate.parity.runner import run_parity

pytestmark = pytest.mark.backends

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "parity"


def test_bench_times_a_sample_on_three_backends_beside_its_keras2_original():
    # samples/keras2_legacy and its hand-converted Keras 3 version (as in test_parity_backends)
    original = (ROOT / "samples" / "keras2_legacy" / "models.py").read_text(encoding="utf-8")
    report = run_parity(
        str(FIXTURES / "keras2_legacy_converted.py"),
        reference_source=original,
        options=ParityOptions(
            backends=["tensorflow", "jax", "torch"], bench=True, bench_runs=3, bench_batch_size=8
        ),
    )
    data = report.to_dict()
    assert report.passed, json.dumps(data, indent=1)[:3000]
    bench = data["bench"]
    assert (bench["runs"], bench["batch_size"]) == (3, 8)
    rows = {row["backend"] + ":" + row["role"]: row for row in bench["rows"]}
    assert list(rows) == ["tensorflow:reference", "tensorflow:target", "jax:target", "torch:target"]
    assert rows["tensorflow:reference"]["keras"].endswith("(tf_keras)")
    for key, row in rows.items():
        for part in ("predict", "train"):
            assert row[part]["runs"] == 3, (key, part, row[part])
            assert 0 < row[part]["min_s"] <= row[part]["median_s"] <= row[part]["max_s"]
        assert row["device"].startswith("cpu"), row["device"]  # no accelerator here
        assert row["eager"]["layers"], key  # per-layer eager timings
        if row["role"] == "target":
            ratio = row["ratio_to_original"]["predict"]
            median = row["predict"]["median_s"]
            assert ratio == pytest.approx(
                median / rows["tensorflow:reference"]["predict"]["median_s"]
            )
    assert bench["fastest"]["predict"] in ("tensorflow", "jax", "torch")
    console = Console(width=200, record=True)
    render(report, console)
    text = console.export_text()
    assert "kmigrate parity --bench" in text
    for label in ("tensorflow (reference)", "jax", "torch"):
        assert any(line.startswith(f"│ {label}") for line in text.splitlines()), label


def test_a_python_loop_over_the_batch_is_flagged_and_its_layer_named():
    # the converted CenterRows loops over the batch with per-sample ops; torch runs it eagerly
    result = CliRunner().invoke(
        parity_command,
        [
            str(FIXTURES / "slow_loop_converted.py"),
            "--reference",
            str(FIXTURES / "slow_loop_original.py"),
            "--backends",
            "torch",
            "--bench",
            "--bench-runs",
            "3",
            "--bench-batch-size",
            "64",  # the loop grows with the rows; the original's per-call cost does not
            "--format",
            "json",
        ],
        catch_exceptions=False,
    )
    report = json.loads(result.output)
    assert result.exit_code == 0, result.output[-3000:]  # the numbers agree: only slower
    torch = next(row for row in report["bench"]["rows"] if row["backend"] == "torch")
    assert torch["flagged"], json.dumps(torch, indent=1)[:3000]
    assert max(torch["ratio_to_original"].values()) > 2
    assert report["bench"]["flagged"] == ["torch"]
    slowest = torch["slowest_layer"]
    assert (slowest["path"], slowest["class"]) == ("center", "CenterRows")
    assert slowest["median_s"] > 10 * slowest["original_median_s"]
