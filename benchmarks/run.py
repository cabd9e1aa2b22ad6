"""kmigrate's speed, side by side with its floor and its peer, in one command::

    .venv/bin/python benchmarks/run.py            # 3 runs each, writes benchmarks/RESULTS.md
    .venv/bin/python benchmarks/run.py --runs 5
    .venv/bin/python benchmarks/run.py --quick    # 1 run each, for a smoke test

On the generated corpus (``make_corpus.py``, rebuilt when missing or stale) it times:

- the floor: a bare ``python`` that reads every file and ``ast.parse``-s it;
- ``kmigrate scan --jobs 1`` and ``--jobs 2`` with no cache, ``--jobs 2`` filling an
  empty cache, and the warm-cache re-scan;
- ``kmigrate apply --jobs 2`` on a fresh copy of the corpus;
- the peer: ``tf_upgrade_v2 --intree`` on the same tree (it ships with TensorFlow);
- ``kmigrate check one_file.py``, process start included, with a cold and a warm cache.

Every command runs as its own process; the table shows the median wall time of the
runs, the CPU time (user + system, all processes), the largest process's peak RSS
(``wait4`` rusage) and the peak of the RSS summed over the whole process tree
(sampled from ``/proc`` every 50 ms, so worker processes count; a poll reads only the
tree's own entries, so the sampler does not take CPU from the workers). The parse
floor and the four scans run interleaved, one of each per round, so drift in the
machine's speed hits them alike. The machine's load average before and after is
recorded: on a busy machine wall times stretch, CPU times much less.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = HERE / "corpus"
RESULTS = HERE / "RESULTS.md"
sys.path.insert(0, str(HERE))

import make_corpus  # noqa: E402

# The targets (docs/performance.md explains them).
TARGET_PEER_SPEEDUP = 10.0  # scan --jobs 2 cold at least 10x faster than tf_upgrade_v2
TARGET_FLOOR_RATIO = 3.0  # ... and at most 3x the bare ast.parse
TARGET_WARM_SHARE = 0.20  # warm re-scan at most 20% of the cold scan
TARGET_CHECK_SECONDS = 0.4  # kmigrate check one_file.py, process start included
TARGET_MEMORY_MB = 300.0  # peak memory of a corpus scan

PARSE_SCRIPT = """
import ast, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
paths = sorted(Path(sys.argv[1]).rglob("*.py"))
start = time.perf_counter()
lines = 0
for path in paths:
    data = path.read_bytes()
    lines += data.count(b"\\n")
    ast.parse(data)
print(time.perf_counter() - start, len(paths), lines)
"""


# ---------------------------------------------------------------------------
# Running and measuring one process (tree).
# ---------------------------------------------------------------------------


@dataclass
class Sample:
    wall: float
    cpu: float
    max_rss_mb: float  # the largest single process (wait4 rusage)
    tree_rss_mb: float  # the whole process tree at its sampled peak
    returncode: int
    stdout: str = ""
    stderr: str = ""


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def _children_of(pid: int) -> list[int] | None:
    """Child pids of ``pid`` from ``/proc/PID/task/*/children``; None where the kernel
    does not offer that file (then the whole process table is read)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found.extend(int(child) for child in handle.read().split())
        except FileNotFoundError:
            return None
        except OSError:
            continue
    return found


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeSampler(threading.Thread):
    """Polls the RSS of a process and all its descendants; keeps the peak sum."""

    # Polling must stay cheap: the machine has two cores and `scan --jobs 2` uses both.
    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak_kb = 0
        self.done = threading.Event()
        self.available = Path("/proc/self/status").exists()

    def run(self) -> None:
        while self.available and not self.done.is_set():
            table: dict[int, list[int]] | None = None
            todo, total = [self.pid], 0
            while todo:
                pid = todo.pop()
                total += _rss_kb(pid)
                children = _children_of(pid)
                if children is None:
                    table = table if table is not None else _children_map()
                    children = table.get(pid, [])
                todo.extend(children)
            self.peak_kb = max(self.peak_kb, total)
            self.done.wait(self.interval)


def run_measured(
    command: list[str], cwd: Path, env: dict[str, str], capture: bool = False
) -> Sample:
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=errors)
        sampler = TreeSampler(process.pid)
        sampler.start()
        stdout = process.stdout.read().decode() if capture and process.stdout else ""
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        sampler.done.set()
        sampler.join()
        if process.stdout:
            process.stdout.close()
        errors.seek(0)
        error_text = errors.read().decode(errors="replace")
    sample = Sample(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        max_rss_mb=usage.ru_maxrss / 1024,
        tree_rss_mb=max(sampler.peak_kb, usage.ru_maxrss) / 1024,
        returncode=process.returncode,
        stdout=stdout,
        stderr=error_text,
    )
    return sample


@dataclass
class Measurement:
    name: str
    command: str
    samples: list[Sample] = field(default_factory=list)
    note: str = ""

    @property
    def wall(self) -> float:
        return statistics.median(s.wall for s in self.samples)

    @property
    def cpu(self) -> float:
        return statistics.median(s.cpu for s in self.samples)

    @property
    def max_rss(self) -> float:
        return max(s.max_rss_mb for s in self.samples)

    @property
    def tree_rss(self) -> float:
        return max(s.tree_rss_mb for s in self.samples)


def measure(
    measurement: Measurement,
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    before=None,
    ok_codes=(0,),
    capture: bool = False,
) -> Sample:
    """Run ``command`` once and add the sample to ``measurement``."""
    workdir = before() if before else cwd
    sample = run_measured(command, workdir or cwd, env, capture)
    if sample.returncode not in ok_codes:
        raise SystemExit(
            f"{measurement.name}: `{' '.join(command)}` exited {sample.returncode}:\n"
            + sample.stderr[-3000:]
        )
    measurement.samples.append(sample)
    print(f"  {measurement.name}: {sample.wall:.2f} s wall, {sample.cpu:.2f} s CPU", flush=True)
    return sample


def repeat(
    name: str,
    command: list[str],
    runs: int,
    cwd: Path,
    env: dict[str, str],
    before=None,
    ok_codes=(0,),
    shown: str | None = None,
) -> Measurement:
    measurement = Measurement(name, shown or " ".join(command))
    for _ in range(runs):
        measure(measurement, command, cwd, env, before, ok_codes)
    return measurement


# ---------------------------------------------------------------------------
# The benchmark.
# ---------------------------------------------------------------------------


def _kmigrate() -> list[str]:
    script = Path(sys.executable).with_name("kmigrate")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kmigrate"]


def _corpus_is_current(files: int, seed: int) -> bool:
    manifest = CORPUS / "MANIFEST.json"
    if not manifest.is_file():
        return False
    data = json.loads(manifest.read_text())
    return (data.get("files"), data.get("seed"), data.get("generator")) == (
        files,
        seed,
        make_corpus.generator_version(),
    )


def _check_target(corpus: Path) -> Path:
    """A typical module of the corpus: the median-sized TF file."""
    candidates = sorted(
        (p for p in corpus.rglob("*.py") if b"tensorflow" in p.read_bytes()),
        key=lambda p: (p.stat().st_size, str(p)),
    )
    return candidates[len(candidates) // 2]


def _git_revision() -> str:
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return done.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run_benchmark(args: argparse.Namespace) -> dict:
    runs = 1 if args.quick else args.runs
    if not _corpus_is_current(args.files, args.seed):
        print(f"generating the corpus ({args.files} files) ...", flush=True)
        make_corpus.generate(CORPUS, args.files, args.seed)
    manifest = json.loads((CORPUS / "MANIFEST.json").read_text())
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONDONTWRITEBYTECODE="")
    env.pop("KERAS_BACKEND", None)
    env.pop("KMIGRATE_CACHE_DIR", None)
    kmigrate = _kmigrate()
    scratch = Path(tempfile.mkdtemp(prefix="kmigrate-bench-"))
    report = scratch / "report.json"
    cache = CORPUS / ".kmigrate_cache"
    load_before = os.getloadavg()
    results: dict[str, Measurement] = {}

    def clear_cache():
        shutil.rmtree(cache, ignore_errors=True)
        return CORPUS

    try:
        # Warm the OS page cache and Python's bytecode caches once, unmeasured.
        run_measured(
            [*kmigrate, "scan", ".", "-q", "--no-cache", "-f", "json", "-o", str(report)],
            CORPUS,
            env,
        )

        # The parse floor and the scans run in rounds, one of each per round, so a
        # machine that speeds up or slows down (shared VMs do) moves them alike and
        # the ratios between their medians hold.
        scan = [*kmigrate, "scan", ".", "-q", "--format", "json", "-o", str(report)]
        parse = Measurement("bare ast.parse (python: read + parse every file)", "")
        parse.command = "python -c 'for f in files: ast.parse(f.read_bytes())'"
        plan = [
            ("scan1", "kmigrate scan --jobs 1 (no cache)", ["--jobs", "1", "--no-cache"], None),
            ("scan2", "kmigrate scan --jobs 2 (no cache)", ["--jobs", "2", "--no-cache"], None),
            (
                "scan2_fill",
                "kmigrate scan --jobs 2, empty cache (fills it)",
                ["--jobs", "2"],
                clear_cache,
            ),
            ("warm", "kmigrate scan --jobs 2, warm cache", ["--jobs", "2"], None),
        ]
        results["parse"] = parse
        for key, name, options, _ in plan:
            results[key] = Measurement(name, " ".join([*scan, *options]))
        inner = []
        for number in range(runs):
            print(f"round {number + 1} of {runs}: bare ast.parse, then kmigrate scan", flush=True)
            sample = measure(
                parse, [sys.executable, "-c", PARSE_SCRIPT, "."], CORPUS, env, capture=True
            )
            inner.append(float(sample.stdout.split()[0]))
            for key, _, options, before in plan:
                measure(results[key], [*scan, *options], CORPUS, env, before)
        parse.note = f"parsing alone (in-process): {statistics.median(inner):.2f} s"
        findings = json.loads(report.read_text())["summary"]["findings"]

        def fresh_copy():
            target = scratch / "apply"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(CORPUS, target, ignore=shutil.ignore_patterns(".kmigrate_cache"))
            return target

        if not args.skip_apply:
            print("kmigrate apply", flush=True)
            results["apply"] = repeat(
                "kmigrate apply --jobs 2 (fresh copy, empty cache)",
                [*kmigrate, "apply", ".", "-q", "--jobs", "2", "--allow-dirty"],
                max(1, runs if args.apply_runs is None else args.apply_runs),
                CORPUS,
                env,
                before=fresh_copy,
            )

        upgrade = Path(sys.executable).with_name("tf_upgrade_v2")
        if upgrade.exists() and not args.skip_tf_upgrade:
            out = scratch / "tf_upgrade_out"

            def fresh_out():
                shutil.rmtree(out, ignore_errors=True)
                return CORPUS

            print("tf_upgrade_v2", flush=True)
            results["tf_upgrade"] = repeat(
                "tf_upgrade_v2 --intree (same tree)",
                [
                    str(upgrade),
                    "--intree",
                    ".",
                    "--outtree",
                    str(out),
                    "--reportfile",
                    str(scratch / "tf_upgrade_report.txt"),
                ],
                max(1, runs if args.tf_runs is None else args.tf_runs),
                CORPUS,
                env,
                before=fresh_out,
            )

        target = _check_target(CORPUS)
        relative = target.relative_to(CORPUS).as_posix()
        has_check = (REPO / "migrate/check.py").is_file()
        check = (
            [*kmigrate, "check", relative, "-q"]
            if has_check
            else [*kmigrate, "scan", relative, "-q", "--format", "json", "-o", str(report)]
        )
        label = "kmigrate check" if has_check else "kmigrate scan (no check command yet)"
        print("kmigrate check", flush=True)
        run_measured(check, CORPUS, env)  # fills the cache entry of the file
        results["check_cold"] = repeat(
            f"{label} one_file.py, cold (--no-cache)",
            [*check, "--no-cache"],
            max(5, runs),
            CORPUS,
            env,
            ok_codes=(0, 1),
        )
        results["check_warm"] = repeat(
            f"{label} one_file.py, warm cache",
            check,
            max(5, runs),
            CORPUS,
            env,
            ok_codes=(0, 1),
        )
        lines = target.read_bytes().count(b"\n")
        results["check_cold"].note = f"{relative}: {lines} lines; exit 1 = new findings"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "results": results,
        "manifest": manifest,
        "findings": findings,
        "load": (load_before, os.getloadavg()),
        "runs": runs,
        "aliases": {str(scratch): "$TMP", kmigrate[0]: "kmigrate", sys.executable: "python"},
    }


# ---------------------------------------------------------------------------
# The report.
# ---------------------------------------------------------------------------


def _status(ok: bool) -> str:
    return "met" if ok else "**missed**"


def ratios(results: dict[str, Measurement]) -> list[tuple[str, str, str, str]]:
    """(what, target, measured, status) rows."""
    rows = []
    scan2, parse = results["scan2"], results["parse"]
    if "tf_upgrade" in results:
        speedup = results["tf_upgrade"].wall / scan2.wall
        rows.append(
            (
                "`scan --jobs 2` cold vs `tf_upgrade_v2 --intree`",
                f">= {TARGET_PEER_SPEEDUP:.0f}x faster",
                f"{speedup:.1f}x faster",
                _status(speedup >= TARGET_PEER_SPEEDUP),
            )
        )
    floor = scan2.wall / parse.wall
    rows.append(
        (
            "`scan --jobs 2` cold vs bare `ast.parse` of the same files",
            f"<= {TARGET_FLOOR_RATIO:.0f}x",
            f"{floor:.2f}x",
            _status(floor <= TARGET_FLOOR_RATIO),
        )
    )
    rounds = [s.wall / p.wall for s, p in zip(scan2.samples, parse.samples)]
    if len(rounds) > 1:  # the spread: how much one round's ratio can be trusted
        rows.append(
            (
                "the same, round by round (each round's own ratio)",
                "(info)",
                ", ".join(f"{r:.2f}x" for r in rounds),
                "",
            )
        )
    share = results["warm"].wall / scan2.wall
    rows.append(
        (
            "warm-cache re-scan / cold scan (`--jobs 2`)",
            f"<= {TARGET_WARM_SHARE:.0%}",
            f"{share:.1%}",
            _status(share <= TARGET_WARM_SHARE),
        )
    )
    for key, label in (("check_cold", "cold cache"), ("check_warm", "warm cache")):
        seconds = results[key].wall
        rows.append(
            (
                f"`check one_file.py`, {label}, process start included",
                f"< {TARGET_CHECK_SECONDS} s",
                f"{seconds:.3f} s",
                _status(seconds < TARGET_CHECK_SECONDS),
            )
        )
    memory = max(results[k].tree_rss for k in ("scan1", "scan2", "scan2_fill", "warm"))
    rows.append(
        (
            "peak memory of a corpus scan (all processes)",
            f"< {TARGET_MEMORY_MB:.0f} MB",
            f"{memory:.0f} MB",
            _status(memory < TARGET_MEMORY_MB),
        )
    )
    jobs = results["scan1"].wall / scan2.wall
    rows.append(("`--jobs 2` speed-up over `--jobs 1`", "(info)", f"{jobs:.2f}x", ""))
    return rows


def render(data: dict) -> str:
    results: dict[str, Measurement] = data["results"]
    manifest = data["manifest"]
    (before, after) = data["load"]
    lines = [
        "# kmigrate benchmark",
        "",
        "Generated by `benchmarks/run.py` (do not edit by hand). Corpus: "
        f"{manifest['files']} generated legacy TF/Keras 2 modules, {manifest['lines']:,} "
        f"lines, {manifest['bytes'] / 1e6:.1f} MB (`benchmarks/make_corpus.py`, seed "
        f"{manifest['seed']}, sha256 `{str(manifest['sha256'])[:12]}`); the scan reports "
        f"{data['findings']:,} findings.",
        "",
        f"Machine: {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), "
        f"Python {platform.python_version()}, {platform.system()}; kmigrate "
        f"`{_git_revision()}`. Load average before / after: "
        f"{before[0]:.2f} / {after[0]:.2f}"
        + (
            " (a busy machine: wall times are stretched, CPU times much less)"
            if max(before[0], after[0]) > (os.cpu_count() or 1) * 0.75
            else ""
        )
        + ".",
        "",
        f"Median of {data['runs']} runs (check: of {len(results['check_cold'].samples)}).",
        "",
        "| measurement | wall (s) | CPU (s) | largest process (MB) | all processes (MB) |",
        "| :-- | --: | --: | --: | --: |",
    ]
    for measurement in results.values():
        runs = ", ".join(f"{s.wall:.2f}" for s in measurement.samples)
        lines.append(
            f"| {measurement.name}<br><sub>runs: {runs}"
            + (f"; {measurement.note}" if measurement.note else "")
            + f"</sub> | {measurement.wall:.2f} | {measurement.cpu:.2f} | "
            f"{measurement.max_rss:.0f} | {measurement.tree_rss:.0f} |"
        )
    lines += [
        "",
        "## Targets (issue 9)",
        "",
        "| what | target | measured | |",
        "| :-- | :-- | --: | :-- |",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in ratios(results)]
    lines += ["", "## Commands", ""]
    for measurement in results.values():
        command = measurement.command
        for long, short in data.get("aliases", {}).items():
            command = command.replace(long, short)
        lines.append(f"- {measurement.name}: `{command}`")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement [3]")
    parser.add_argument("--tf-runs", type=int, help="runs of tf_upgrade_v2 [--runs]")
    parser.add_argument("--apply-runs", type=int, help="runs of kmigrate apply [--runs]")
    parser.add_argument("--quick", action="store_true", help="one run of each")
    parser.add_argument("--skip-tf-upgrade", action="store_true", help="do not run the peer")
    parser.add_argument("--skip-apply", action="store_true", help="do not time kmigrate apply")
    parser.add_argument("--files", type=int, default=make_corpus.DEFAULT_FILES, help="corpus size")
    parser.add_argument("--seed", type=int, default=make_corpus.DEFAULT_SEED, help="corpus seed")
    parser.add_argument("--output", type=Path, default=RESULTS, help="[benchmarks/RESULTS.md]")
    args = parser.parse_args(argv)
    data = run_benchmark(args)
    text = render(data)
    args.output.write_text(text, encoding="utf-8")
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
