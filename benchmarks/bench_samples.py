"""Which backend is fastest for each sample: ``kmigrate parity --bench`` on every factory
sample after ``kmigrate apply``, beside its Keras 2 original, one sample at a time.

Copies samples/ into WORKDIR, rewrites the copy with ``kmigrate apply``, then runs
``kmigrate parity COPY/S/models.py --reference samples/S/models.py --bench --format json``
for each sample (tensorflow, jax and torch; the original on Keras 2 through tf_keras). The
verdict and the bench part of each report go to ``OUT`` (one object per sample, with the
load average before and after each run), and a Markdown table of the bench goes to stdout
(pasted into benchmarks/RESULTS.md by hand). ``OMP_NUM_THREADS=1`` in the environment reaches
every worker (torch's intra-op threads: see RESULTS.md).

    .venv/bin/python benchmarks/bench_samples.py /tmp/bench-samples benchmarks/bench_results.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
sys.path.insert(0, str(ROOT / "benchmarks"))
# the samples with a build_model() factory: one list, kept by the batching benchmark
from parity_batch import FACTORY_SAMPLES  # noqa: E402 - a sibling script, not a package


def kmigrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kmigrate", *args], capture_output=True, text=True, timeout=1800
    )


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def bench_sample(converted: Path, sample: str, runs: int, batch: int) -> dict:
    before, started = load(), time.monotonic()
    result = kmigrate(
        "parity",
        str(converted / sample / "models.py"),
        "--reference",
        f"{SAMPLES / sample / 'models.py'}:build_model",
        "--backends",
        "tensorflow,jax,torch",
        "--bench",
        "--bench-runs",
        str(runs),
        "--bench-batch-size",
        str(batch),
        "--format",
        "json",
    )
    if not result.stdout.strip():
        return {"error": result.stderr[-4000:]}
    report = json.loads(result.stdout)
    return {  # the parity verdict and the bench; the rest of the report is not kept
        "passed": report["passed"],
        "bench": report["bench"],
        "load_before_after": [before, load()],
        "wall_s": round(time.monotonic() - started, 1),
    }


def _ms(part: dict) -> str:
    if "median_s" not in part:
        return "not timed"
    return f"{part['median_s'] * 1e3:.3g} ({part['q1_s'] * 1e3:.3g}–{part['q3_s'] * 1e3:.3g})"


def _ratio(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def markdown(reports: dict[str, dict]) -> str:
    lines = [
        "| sample | side | parity | predict ms, median (IQR) | x orig | train step ms, "
        "median (IQR) | x orig | flag | slowest layer (eager) |",
        "| :-- | :-- | :-- | --: | --: | --: | --: | :-- | :-- |",
    ]
    for sample, report in reports.items():
        bench = report.get("bench")
        if not bench:
            lines.append(f"| {sample} | — | no report | | | | | | |")
            continue
        for row in bench["rows"]:
            ratio = row["ratio_to_original"]
            slowest = row["slowest_layer"]
            layer = f"'{slowest['path']}' ({slowest['class']})" if slowest else ""
            lines.append(
                f"| {sample} | {row['label']} | {row['parity']} | {_ms(row['predict'])} | "
                f"{_ratio(ratio['predict'])} | {_ms(row['train'])} | {_ratio(ratio['train'])} | "
                f"{'SLOW' if row['flagged'] else ''} | {layer} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--samples", default=",".join(FACTORY_SAMPLES))
    args = parser.parse_args(argv)
    converted = args.workdir / "samples"
    shutil.rmtree(converted, ignore_errors=True)
    shutil.copytree(SAMPLES, converted)
    applied = kmigrate("apply", str(converted), "-q", "--jobs", "2")
    if applied.returncode != 0:
        print(applied.stderr, file=sys.stderr)
        return 1
    reports = {}
    for sample in args.samples.split(","):
        reports[sample] = bench_sample(converted, sample, args.runs, args.batch_size)
        print(f"{sample}: {reports[sample]['wall_s']} s", file=sys.stderr)
    args.out.write_text(json.dumps(reports, indent=1) + "\n", encoding="utf-8")
    print(markdown(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
