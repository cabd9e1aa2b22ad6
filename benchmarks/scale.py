"""How kmigrate's cost grows with the size of a repository (issue 34, section 3)::

    .venv/bin/python benchmarks/scale.py /tmp/mono-1k /tmp/mono-5k /tmp/mono
    .venv/bin/python benchmarks/scale.py --repeat 3 --apply-runs 1 --json out.json TREE...

Each TREE is a folder of real Python files (the issue asks for 1k / 5k / 10k files:
subsets of one monorepo of real TF/Keras repositories, see benchmarks/RESULTS.md).
For each tree, in rounds (one of each per round, so drift in a shared machine's speed
hits them alike):

- the floor: one ``python`` that reads and ``ast.parse``-s every file;
- ``kmigrate scan --jobs 2`` with an empty cache (cold; it fills the cache);
- the warm re-scan after one file was edited (a comment appended; put back after);
- ``kmigrate check FILE`` of that one file, warm cache;

then ``kmigrate apply --diff --jobs 2`` (it writes no file). Every figure: median wall,
median CPU (user + system of the whole process tree), the largest process's peak RSS and
the peak RSS summed over the process tree (sampled, see run.py). The slope is the
least-squares fit of CPU seconds against files over the trees. The load average before
and after each tree is recorded: wall times stretch on a busy machine, CPU times much
less. The output is the scaling section's tables of benchmarks/RESULTS.md, headed by the
machine's state (paste it there).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import PARSE_SCRIPT_ANY, Measurement, _kmigrate, measure, measured_env  # noqa: E402

EDIT_MARK = b"\n# kmigrate scale benchmark edit %d\n"


def _edit_target(root: Path) -> Path:
    """The median-sized file that mentions TensorFlow: a typical module to edit."""
    candidates = sorted(
        (p for p in root.rglob("*.py") if ".kmigrate_cache" not in p.parts),
        key=lambda p: (p.stat().st_size, str(p)),
    )
    with_tf = [p for p in candidates if b"tensorflow" in p.read_bytes()]
    pool = with_tf or candidates
    return pool[len(pool) // 2]


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` as a new file renamed over ``path`` (as editors save): the trees
    may share files through hard links, and only this tree's copy must change."""
    spare = path.with_name(path.name + ".scale-tmp")
    spare.write_bytes(data)
    os.replace(spare, path)


def measure_tree(root: Path, runs: int, apply_runs: int, keep: Path | None = None) -> dict:
    """The figures of one tree; ``keep``: a folder to copy the first cold scan's JSON
    report to (as ``<tree name>.json``), to compare a change's reports before/after."""
    env = measured_env()
    kmigrate = _kmigrate()
    files = [p for p in root.rglob("*.py") if ".kmigrate_cache" not in p.parts]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    cache = root / ".kmigrate_cache"
    target = _edit_target(root)
    original = target.read_bytes()
    shown = str(target.relative_to(root))
    report = Path(env.get("TMPDIR", "/tmp")) / f"kmigrate-scale-{os.getpid()}.json"
    scan = [*kmigrate, "scan", ".", "-q", "--jobs", "2", "-f", "json", "-o", str(report)]
    load_before = os.getloadavg()
    parse = Measurement("bare ast.parse", "python: read + ast.parse every file")
    cold = Measurement("scan cold (empty cache, fills it)", " ".join(scan))
    warm = Measurement("scan warm, one file edited", " ".join(scan))
    check = Measurement("check one file, warm cache", f"kmigrate check {shown}")

    def clear_cache() -> Path:
        shutil.rmtree(cache, ignore_errors=True)
        return root

    try:
        for number in range(runs):
            print(f"[{root}] round {number + 1} of {runs}", flush=True)
            measure(parse, [sys.executable, "-c", PARSE_SCRIPT_ANY, "."], root, env, capture=True)
            measure(cold, scan, root, env, clear_cache)
            if keep is not None and not number:
                shutil.copyfile(report, keep / f"{root.name}.json")
            _replace(target, original + EDIT_MARK % number)
            measure(warm, scan, root, env)
            measure(check, [*kmigrate, "check", shown], root, env, ok_codes=(0, 1))
            _replace(target, original)
            measure(Measurement("settle", ""), scan, root, env)  # cache back to the original
        apply = Measurement("apply --diff (writes nothing)", "kmigrate apply --diff")
        apply_command = [*kmigrate, "apply", ".", "--diff", "-q", "--jobs", "2", "--allow-dirty"]
        for _ in range(apply_runs):  # 0: not measured (a busy machine, a large tree)
            measure(apply, apply_command, root, env, clear_cache, ok_codes=(0, 1, 3))
    finally:
        if target.read_bytes() != original:
            _replace(target, original)
        report.unlink(missing_ok=True)
    rows = {m.name: m for m in (parse, cold, warm, check, apply) if m.samples}
    return {
        "tree": str(root),
        "files": len(files),
        "lines": lines,
        "edited": shown,
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in os.getloadavg()],
        "rows": {
            name: {
                "wall": round(m.wall, 3),
                "cpu": round(m.cpu, 3),
                "max_rss_mb": round(m.max_rss, 1),
                "tree_rss_mb": round(m.tree_rss, 1),
                "tree_pss_mb": round(m.tree_pss, 1),
                "walls": [round(s.wall, 2) for s in m.samples],
                "cpus": [round(s.cpu, 2) for s in m.samples],
            }
            for name, m in rows.items()
        },
    }


def slope(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares (slope, intercept) of y against x."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if not spread:
        return 0.0, mean_y
    rise = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread
    return rise, mean_y - rise * mean_x


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(HERE), *args], capture_output=True, text=True)
    return done.stdout.strip()


def machine_state(runs: int, started: time.struct_time) -> str:
    """The line that says where and when the figures were made: a shared machine's
    load moves wall times (the table gives the load before and after each tree)."""
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"`benchmarks/scale.py --repeat {runs}` at kmigrate `{commit or '?'}`"
        f"{' (uncommitted changes)' if dirty else ''}, started "
        f"{time.strftime('%Y-%m-%d %H:%M', started)} UTC, ended "
        f"{time.strftime('%H:%M', time.gmtime())} UTC; {cpus} CPUs, Python "
        f"{sys.version.split()[0]}; every figure the median of {runs} run(s) (apply: see "
        "its wall runs); load average (1/5/15 min) before -> after each tree in the table.\n"
    )


def render(trees: list[dict]) -> str:
    names = [
        "bare ast.parse",
        "scan cold (empty cache, fills it)",
        "scan warm, one file edited",
        "check one file, warm cache",
        "apply --diff (writes nothing)",
    ]
    out = [
        "| files | lines | load before -> after | measurement | wall (s) | CPU (s) "
        "| largest process (MB) | all processes, RSS (MB) | all processes, PSS (MB) |",
        "| --: | --: | :-- | :-- | --: | --: | --: | --: | --: |",
    ]
    for tree in trees:
        load = "/".join(f"{v:.1f}" for v in tree["load_before"])
        load += " -> " + "/".join(f"{v:.1f}" for v in tree.get("load_after", ()))
        for name in names:
            row = tree["rows"].get(name)
            if row is None:
                continue
            runs = ", ".join(f"{w:.2f}" for w in row["walls"])
            out.append(
                f"| {tree['files']:,} | {tree['lines']:,} | {load} | {name}<br><sub>wall runs: "
                f"{runs}</sub> | {row['wall']:.2f} | {row['cpu']:.2f} | {row['max_rss_mb']:.0f} "
                f"| {row['tree_rss_mb']:.0f} | {row.get('tree_pss_mb', 0):.0f} |"
            )
    out += ["", "| what | at | measured |", "| :-- | :-- | --: |"]
    for name in names[1:]:
        points = [(t["files"], t["rows"][name]["cpu"]) for t in trees if name in t["rows"]]
        if not points:
            continue
        rise, base = slope(points)
        out.append(
            f"| CPU slope of {name} | all trees | {rise * 1000:.2f} ms/file + {base:.2f} s |"
        )
    for tree in trees:
        rows = tree["rows"]
        cold, warm, parse = rows[names[1]], rows[names[2]], rows[names[0]]
        at = f"{tree['files']:,} files"
        out.append(
            f"| warm re-scan / cold scan (wall) | {at} | {warm['wall'] / cold['wall']:.1%} |"
        )
        out.append(
            f"| cold scan / bare ast.parse (wall) | {at} | {cold['wall'] / parse['wall']:.2f}x |"
        )
        out.append(
            f"| cold scan / bare ast.parse (CPU) | {at} | {cold['cpu'] / parse['cpu']:.2f}x |"
        )
        out.append(
            f"| peak memory of the cold scan, largest process | {at} "
            f"| {cold['max_rss_mb']:.0f} MB |"
        )
        out.append(
            f"| peak memory of the cold scan, all processes (RSS summed) | {at} "
            f"| {cold['tree_rss_mb']:.0f} MB |"
        )
        out.append(
            f"| peak memory of the cold scan, all processes (PSS summed: shared pages once) "
            f"| {at} | {cold.get('tree_pss_mb', 0):.0f} MB |"
        )
    return "\n".join(out) + "\n" + "\n" + _targets(trees[-1], names)


def _targets(tree: dict, names: list[str]) -> str:
    """Issue 34's targets against the largest tree's figures."""
    rows = tree["rows"]
    parse, cold, warm = rows[names[0]], rows[names[1]], rows[names[2]]
    peak = max(cold["max_rss_mb"], warm["max_rss_mb"])
    warm_share = warm["wall"] / cold["wall"]
    ratio = cold["cpu"] / parse["cpu"]

    def verdict(met: bool) -> str:
        return "met" if met else "**missed**"

    return (
        "\n".join(
            [
                f"| target (issue 34) | measured at {tree['files']:,} files | |",
                "| :-- | --: | :-- |",
                f"| peak memory < 500 MB | {peak:.0f} MB the largest process of a scan "
                f"(cold or warm); all processes of the cold scan: {cold['tree_rss_mb']:.0f} MB "
                f"RSS summed, {cold.get('tree_pss_mb', 0):.0f} MB PSS summed | "
                f"{verdict(peak < 500 and cold.get('tree_pss_mb', 0) < 500)} |",
                f"| warm re-scan after one edit < 10% of cold | {warm_share:.1%} wall, "
                f"{warm['cpu'] / cold['cpu']:.1%} CPU | {verdict(warm_share < 0.1)} |",
                f"| scan within 3x of bare `ast.parse` | {ratio:.2f}x CPU, "
                f"{cold['wall'] / parse['wall']:.2f}x wall | {verdict(ratio <= 3)} |",
            ]
        )
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument(
        "--repeat", "--runs", dest="runs", type=int, default=3, help="runs of each figure (median)"
    )
    parser.add_argument("--apply-runs", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep-reports", type=Path, help="a folder for each tree's JSON report")
    args = parser.parse_args(argv)
    keep = args.keep_reports
    started = time.gmtime()
    trees = [measure_tree(t.resolve(), args.runs, args.apply_runs, keep) for t in args.trees]
    trees.sort(key=lambda t: t["files"])
    text = machine_state(args.runs, started) + "\n" + render(trees)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(trees, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
