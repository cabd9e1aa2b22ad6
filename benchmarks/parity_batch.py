"""Parity of many models: one batch (one worker per side and backend, every model in turn)
against the same models one by one (a reference and a worker per backend for each), on the
same backends, with the verdicts of both compared model by model (issue 34).

The models: the five factory samples (original vs `kmigrate apply`'s conversion), the
parity fixtures with an original (tests/fixtures/parity: the approximate-gelu false pass,
the hand-converted Keras 2 sample, the Keras 2.x import paths), then, with ``--real``, the
``build_*()`` factories of real repositories' ``rp_models.py`` (each repository copied twice,
``orig`` and ``conv`` = applied, as `real_parity.py` does), up to ``--limit`` models.

    .venv/bin/python benchmarks/parity_batch.py /tmp/pb --real /tmp/rp_src/keras-tcn ...

The JAX compilation cache is off on both sides (it would carry compilations from one side
to the other). Prints one line per model (verdict alone, batched, same or not) and the wall
times; ``--json`` writes everything.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--real", nargs="*", default=[], type=Path, help="rp_models.py repos")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--backends", default="tensorflow,jax,torch")
    parser.add_argument("--rounds", type=int, default=1, help="alone and batched, in turn")
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
    for number in range(1, args.rounds + 1):
        load = _load()
        alone, seconds = [], []
        cpu = _children_cpu()
        started = time.perf_counter()
        for label, entry in zip(labels, entries):
            begun = time.perf_counter()
            alone.append(run_parity(entry.model, reference=entry.reference, options=options))
            seconds.append(time.perf_counter() - begun)
            print(f"  alone {seconds[-1]:6.1f} s  {label}", flush=True)
        alone_wall = time.perf_counter() - started
        alone_cpu, cpu = _children_cpu() - cpu, _children_cpu()
        started = time.perf_counter()
        batched = run_parity_batch(entries, options=options)
        batch_wall = time.perf_counter() - started
        batch_cpu = _children_cpu() - cpu
        same = [a.statuses() == b.statuses() for a, b in zip(alone, batched)]
        for label, a, b, equal in zip(labels, alone, batched, same):
            print(
                f"  {'same' if equal else 'DIFFERENT':9s} {a.exit_code} {b.exit_code}  {label}",
                flush=True,
            )
        print(
            f"round {number}: alone {alone_wall:.1f} s, batched {batch_wall:.1f} s "
            f"({alone_wall / batch_wall:.1f}x); CPU alone {alone_cpu:.0f} s, batched "
            f"{batch_cpu:.0f} s ({alone_cpu / batch_cpu:.1f}x); verdicts identical for "
            f"{sum(same)} of {len(same)}; load {load} -> {_load()}",
            flush=True,
        )
        rounds.append(
            {
                "alone_wall": alone_wall,
                "batched_wall": batch_wall,
                "alone_cpu": alone_cpu,
                "batched_cpu": batch_cpu,
                "alone_stages": _stage_seconds(alone),
                "batched_stages": _stage_seconds(batched),
                "alone_seconds": dict(zip(labels, seconds)),
                "load_before": load,
                "load_after": _load(),
                "same_verdicts": dict(zip(labels, same)),
                "alone": [r.statuses() for r in alone],
                "batched": [r.statuses() for r in batched],
            }
        )
    if args.json:
        data = {"models": labels, "backends": args.backends, "rounds": rounds}
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0 if all(all(r["same_verdicts"].values()) for r in rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
