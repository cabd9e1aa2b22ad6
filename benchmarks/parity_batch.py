"""Parity of many models: one batch (one worker per side and backend, every model in turn)
against the same models one by one (a reference and a worker per backend for each), on the
same backends, with the verdicts of both compared model by model (issue 34).

The models: the five factory samples (original vs `kmigrate apply`'s conversion), the
parity fixtures with an original (tests/fixtures/parity: the approximate-gelu false pass,
the hand-converted Keras 2 sample, the Keras 2.x import paths), then, with ``--real``, the
``build_*()`` factories of real repositories' ``rp_models.py`` (each repository copied twice,
``orig`` and ``conv`` = applied, as `real_parity.py` does), up to ``--limit`` models.

    .venv/bin/python benchmarks/parity_batch.py /tmp/pb --real /tmp/rp_src/keras-tcn ...

The persistent JAX compilation cache is off on both sides (it would carry compilations from
one side to the other; each run compiles into a cache of its own, deleted with it). Prints
one line per model (verdict alone, batched, same or not), then the table of
benchmarks/RESULTS.md: wall, CPU of all workers (user + system), and the workers' stages
summed over processes (the training check also in its parts: ``train.search``,
``train.compared``, ``train.random``), medians over ``--repeat N`` rounds, the load
average of each. ``--batch-only`` skips the one-by-one runs (an A/B of two versions of
kmigrate on the batch); ``--json`` writes everything.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAMPLES = ROOT / "samples"
FIXTURES = ROOT / "tests" / "fixtures" / "parity"
FACTORY_SAMPLES = (
    "custom_layers",
    "vae_sampling",
    "losses_metrics",
    "training_script",
    "keras2_legacy",
)
sys.path.insert(0, str(HERE))
from real_parity import factories  # noqa: E402 - a sibling script, not a package

from kmigrate.parity.plan import ParityOptions  # noqa: E402
from kmigrate.parity.runner import ParityEntry, run_parity, run_parity_batch  # noqa: E402


def _apply(folder: Path) -> None:
    kmigrate = Path(sys.executable).with_name("kmigrate")
    command = [str(kmigrate)] if kmigrate.exists() else [sys.executable, "-m", "kmigrate"]
    subprocess.run([*command, "apply", ".", "-q", "--no-cache"], cwd=folder, check=False)


def sample_entries(workdir: Path) -> list[tuple[str, ParityEntry]]:
    converted = workdir / "samples"
    shutil.rmtree(converted, ignore_errors=True)
    shutil.copytree(SAMPLES, converted)
    _apply(converted)
    return [
        (
            f"samples/{name}",
            ParityEntry(
                f"{converted / name / 'models.py'}:build_model",
                reference=f"{SAMPLES / name / 'models.py'}:build_model",
            ),
        )
        for name in FACTORY_SAMPLES
    ]


def fixture_entries() -> list[tuple[str, ParityEntry]]:
    pairs = [
        ("gelu_converted_wrong.py", FIXTURES / "gelu_original.py"),
        ("keras2_legacy_converted.py", SAMPLES / "keras2_legacy" / "models.py"),
        ("keras2_paths/converted/models.py", FIXTURES / "keras2_paths" / "original" / "models.py"),
    ]
    return [
        (f"fixtures/{model}", ParityEntry(str(FIXTURES / model), reference=str(original)))
        for model, original in pairs
    ]


def real_entries(workdir: Path, repo: Path) -> list[tuple[str, ParityEntry]]:
    target = workdir / "real" / repo.name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(repo, target / "orig", symlinks=True)
    shutil.copytree(repo, target / "conv", symlinks=True)
    _apply(target / "conv")
    return [
        (
            f"{repo.name}:{name}",
            ParityEntry(
                f"{target / 'conv' / 'rp_models.py'}:{name}",
                reference=f"{target / 'orig' / 'rp_models.py'}:{name}",
            ),
        )
        for name in factories(target / "orig" / "rp_models.py")
    ]


def _children_cpu() -> float:
    """CPU seconds (user + system) of the workers this process has waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _stage_seconds(reports: list) -> dict[str, float]:
    """Seconds per worker stage (import, build, call...), summed over every row."""
    totals: dict[str, float] = {}
    for report in reports:
        for row in report.all_runs:
            for stage, seconds in (row.timings or {}).items():
                totals[stage] = totals.get(stage, 0.0) + seconds
    return {k: round(v, 1) for k, v in sorted(totals.items())}


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _run_alone(labels: list[str], entries: list[ParityEntry], options: ParityOptions) -> dict:
    """Every model on its own (`run_parity`: a reference and a worker per backend each)."""
    reports, seconds = [], []
    cpu, started = _children_cpu(), time.perf_counter()
    for label, entry in zip(labels, entries):
        begun = time.perf_counter()
        reports.append(run_parity(entry.model, reference=entry.reference, options=options))
        seconds.append(time.perf_counter() - begun)
        print(f"  alone {seconds[-1]:6.1f} s  {label}", flush=True)
    wall = time.perf_counter() - started
    return {"reports": reports, "wall": wall, "cpu": _children_cpu() - cpu, "seconds": seconds}


def _run_batched(entries: list[ParityEntry], options: ParityOptions) -> dict:
    """All models in one batch (`run_parity_batch`: one worker per side and backend)."""
    cpu, started = _children_cpu(), time.perf_counter()
    reports = run_parity_batch(entries, options=options)
    wall = time.perf_counter() - started
    print(f"  batched {wall:6.1f} s", flush=True)
    return {"reports": reports, "wall": wall, "cpu": _children_cpu() - cpu}


def _round(labels, entries, options, *, batch_only: bool) -> dict:
    """One round: the models one by one (unless `batch_only`), then in one batch."""
    load = _load()
    alone = None if batch_only else _run_alone(labels, entries, options)
    batched = _run_batched(entries, options)
    result = {
        "load_before": load,
        "load_after": _load(),
        "batched_wall": batched["wall"],
        "batched_cpu": batched["cpu"],
        "batched_stages": _stage_seconds(batched["reports"]),
        "batched": [r.statuses() for r in batched["reports"]],
    }
    if alone is not None:
        same = [a.statuses() == b.statuses() for a, b in zip(alone["reports"], batched["reports"])]
        for label, a, b, equal in zip(labels, alone["reports"], batched["reports"], same):
            word = "same" if equal else "DIFFERENT"
            print(f"  {word:9s} {a.exit_code} {b.exit_code}  {label}", flush=True)
        result.update(
            alone_wall=alone["wall"],
            alone_cpu=alone["cpu"],
            alone_stages=_stage_seconds(alone["reports"]),
            alone_seconds=dict(zip(labels, alone["seconds"])),
            same_verdicts=dict(zip(labels, same)),
            alone=[r.statuses() for r in alone["reports"]],
        )
    return result


def table(rounds: list[dict], models: int) -> str:
    """The RESULTS.md table (medians over the rounds): wall, CPU of all workers, the
    import stage, then the batch's other stages (build, call, predict, train, and the
    training check's parts), each summed over every process."""
    med = {
        key: _median([r[key] for r in rounds if key in r])
        for key in ("alone_wall", "batched_wall", "alone_cpu", "batched_cpu")
    }

    def stage(side: str, name: str) -> float:
        return _median(
            [r[f"{side}_stages"].get(name, 0.0) for r in rounds if f"{side}_stages" in r]
        )

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.1f}x" if a == a and b else ""

    def seconds(value: float) -> str:
        return "" if value != value else f"{value:.1f} s"

    n = len(rounds)
    head = f"median of {n}" if n > 1 else "one run"
    lines = [
        f"| ({head}) | one by one ({models} × `run_parity`) "
        "| one batch (`run_parity_batch`) | ratio |",
        "| :-- | --: | --: | --: |",
        f"| wall | {seconds(med['alone_wall'])} | {seconds(med['batched_wall'])} "
        f"| {ratio(med['alone_wall'], med['batched_wall'])} |",
        f"| CPU of all workers (user + system) | {seconds(med['alone_cpu'])} "
        f"| {seconds(med['batched_cpu'])} | {ratio(med['alone_cpu'], med['batched_cpu'])} |",
    ]
    stages = sorted({k for r in rounds for k in r["batched_stages"]} - {"total", "wait"})
    for name in ["import", *(s for s in stages if s != "import")]:
        alone, batched = stage("alone", name), stage("batched", name)
        lines.append(
            f"| seconds in the workers' {name} stage, summed over processes "
            f"| {seconds(alone) if 'alone_stages' in rounds[0] else ''} | {seconds(batched)} "
            f"| {ratio(alone, batched) if 'alone_stages' in rounds[0] else ''} |"
        )
    loads = ", ".join(f"{r['load_before']} -> {r['load_after']}" for r in rounds)
    lines.append(f"\nload average (1/5/15 min) before -> after each round: {loads}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--real", nargs="*", default=[], type=Path, help="rp_models.py repos")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--backends", default="tensorflow,jax,torch")
    parser.add_argument(
        "--repeat", "--rounds", type=int, default=1, help="rounds (alone, then batched); medians"
    )
    parser.add_argument(
        "--batch-only", action="store_true", help="only the batch (A/B of two versions)"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    named = [*sample_entries(args.workdir), *fixture_entries()]
    for repo in args.real:
        named.extend(real_entries(args.workdir, repo.resolve()))
    named = named[: args.limit]
    labels, entries = [n for n, _ in named], [e for _, e in named]
    options = ParityOptions(backends=args.backends.split(","), compile_cache=None)
    print(f"{len(entries)} models on {args.backends}", flush=True)
    rounds = []
    for number in range(1, args.repeat + 1):
        result = _round(labels, entries, options, batch_only=args.batch_only)
        rounds.append(result)
        text = f"batched {result['batched_wall']:.1f} s wall, {result['batched_cpu']:.0f} s CPU"
        if "alone_wall" in result:
            text = (
                f"alone {result['alone_wall']:.1f} s wall, {result['alone_cpu']:.0f} s CPU; "
                f"{text}; verdicts identical for {sum(result['same_verdicts'].values())} "
                f"of {len(entries)}"
            )
        print(f"round {number}: {text}; load {result['load_before']} -> {result['load_after']}")
    print(table(rounds, len(entries)), flush=True)
    if args.json:
        data = {"models": labels, "backends": args.backends, "rounds": rounds}
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    same = [r["batched"] == rounds[0]["batched"] for r in rounds]  # batched verdicts stable
    same += [all(r["same_verdicts"].values()) for r in rounds if "same_verdicts" in r]
    return 0 if all(same) else 1


if __name__ == "__main__":
    sys.exit(main())
