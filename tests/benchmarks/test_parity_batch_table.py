"""benchmarks/parity_batch.py prints the RESULTS.md table from medians over its rounds, and
leaves the one-by-one column empty when only the batch ran (``--batch-only``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    path = ROOT / "benchmarks" / "parity_batch.py"
    spec = importlib.util.spec_from_file_location("parity_batch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _round(batched_wall: float, **extra) -> dict:
    stages = {"import": 180.0, "train": 100.0, "train.search": 30.0, "total": 1.0, "wait": 2.0}
    return {
        "load_before": "5.0/6.0/7.0",
        "load_after": "6.0/6.0/7.0",
        "batched_wall": batched_wall,
        "batched_cpu": 150.0,
        "batched_stages": stages,
        **extra,
    }


def test_the_table_shows_medians_and_ratios() -> None:
    alone = {"alone_wall": 1000.0, "alone_cpu": 600.0, "alone_stages": {"import": 1800.0}}
    rounds = [_round(w, **alone) for w in (250.0, 200.0, 400.0)]
    text = _script().table(rounds, 20)
    assert "| (median of 3) | one by one (20 × `run_parity`)" in text
    assert "| wall | 1000.0 s | 250.0 s | 4.0x |" in text
    assert "| CPU of all workers (user + system) | 600.0 s | 150.0 s | 4.0x |" in text
    assert "import stage, summed over processes | 1800.0 s | 180.0 s | 10.0x |" in text
    assert "train.search stage" in text and "total stage" not in text and "wait" not in text


def test_a_batch_only_table_leaves_the_one_by_one_column_empty() -> None:
    text = _script().table([_round(200.0)], 19)
    assert "| wall |  | 200.0 s |  |" in text
