"""kmigrate's speed, side by side with its floor and its peer, in one command::

    .venv/bin/python benchmarks/run.py            # 3 runs each, writes benchmarks/RESULTS.md
    .venv/bin/python benchmarks/run.py --runs 5 --tree /path/to/repo --tree /path/to/other
    .venv/bin/python benchmarks/run.py --no-corpus --tree . --quick --output /tmp/bench.md

On the generated corpus (``make_corpus.py``, rebuilt when missing or stale) and on
any folder given with ``--tree`` (copied first, so the original is never written),
it times:

- the floor: a bare ``python`` that reads every file and ``ast.parse``-s it;
- ``kmigrate scan --jobs 1`` and ``--jobs 2`` with no cache, ``--jobs 2`` filling an
  empty cache, and the warm-cache re-scan;
- ``kmigrate apply --jobs 2`` on a fresh copy of the tree;
- the peer: ``tf_upgrade_v2 --intree`` on the same tree (it ships with TensorFlow);
- ``kmigrate check one_file.py``, process start included, with a cold and a warm cache;

and prints the ratios the issues set as targets, per tree.

Every command runs as its own process; the table shows the median wall time of the
runs, the CPU time (user + system, all processes), the largest process's peak RSS
(``wait4`` rusage) and the peak of the RSS summed over the whole process tree
(sampled from ``/proc`` every 50 ms, so worker processes count; a poll reads only the
tree's own entries, so the sampler does not take CPU from the workers). The parse
floor and the four scans run interleaved, one of each per round (and so do apply and
tf_upgrade_v2), so drift in the
machine's speed hits them alike. The machine's load average before and after is
recorded: on a busy machine wall times stretch, CPU times much less.
"""

from __future__ import annotations

import argparse
import importlib.util
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

# The issues' targets (docs/performance.md explains them).
TARGET_PEER_SPEEDUP = 20.0  # scan --jobs 2 cold at least 20x faster than tf_upgrade_v2
TARGET_APPLY_SPEEDUP = 3.0  # apply --jobs 2 at least 3x faster than tf_upgrade_v2
TARGET_WARM_SHARE = 0.20  # warm re-scan at most 20% of the cold scan
TARGET_CHECK_SECONDS = 0.3  # kmigrate check one_file.py, warm cache, process start included
TARGET_CHECK_COLD_SECONDS = 0.4  # the same with no cache
TARGET_MEMORY_MB = 300.0  # peak memory of a corpus scan

# Real trees hold files that do not parse (Python 2): the floor skips them too.
PARSE_SCRIPT_ANY = """
import ast, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
paths = sorted(p for p in Path(sys.argv[1]).rglob("*.py") if ".kmigrate_cache" not in p.parts)
start = time.perf_counter()
lines = 0
for path in paths:
    data = path.read_bytes()
    lines += data.count(b"\\n")
    try:
        ast.parse(data)
    except (SyntaxError, ValueError):
        pass
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
    # The tree's proportional set size at its sampled peak: a page shared by n processes
    # (forked workers share the parent's) counts 1/n in each, so the sum is the memory the
    # tree occupies; the RSS sum counts a shared page once per process.
    tree_pss_mb: float = 0.0


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


def _proc_kb(path: str, field: bytes) -> int:
    """The kB figure of ``field`` in a /proc file (0 where the process is gone)."""
    try:
        with open(path, "rb") as handle:
            for line in handle:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _rss_kb(pid: int) -> int:
    return _proc_kb(f"/proc/{pid}/status", b"VmRSS:")


def _pss_kb(pid: int) -> int:
    return _proc_kb(f"/proc/{pid}/smaps_rollup", b"Pss:")


class TreeSampler(threading.Thread):
    """Polls the RSS of a process and all its descendants; keeps the peak sums (RSS, and
    PSS every ``pss_every``-th poll)."""

    # Polling must stay cheap: the machine has two cores and `scan --jobs 2` uses both.
    # Reading smaps_rollup walks the page tables (~2.4 ms for a 400 MB process), so PSS is
    # read less often than RSS; the kernel time is the sampler's, not the measured tree's.
    def __init__(self, pid: int, interval: float = 0.05, pss_every: int = 4) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.pss_every = pss_every
        self.peak_kb = 0
        self.peak_pss_kb = 0
        self.done = threading.Event()
        self.available = Path("/proc/self/status").exists()

    def run(self) -> None:
        polls = 0
        while self.available and not self.done.is_set():
            table: dict[int, list[int]] | None = None
            todo, total, pss = [self.pid], 0, 0
            with_pss = polls % self.pss_every == 0
            polls += 1
            while todo:
                pid = todo.pop()
                total += _rss_kb(pid)
                pss += _pss_kb(pid) if with_pss else 0
                children = _children_of(pid)
                if children is None:
                    table = table if table is not None else _children_map()
                    children = table.get(pid, [])
                todo.extend(children)
            self.peak_kb = max(self.peak_kb, total)
            self.peak_pss_kb = max(self.peak_pss_kb, pss)
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
        tree_pss_mb=sampler.peak_pss_kb / 1024,
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
    crashed: str = ""  # the error that ended a run early: its times mean nothing

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

    @property
    def tree_pss(self) -> float:
        return max(s.tree_pss_mb for s in self.samples)


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


def crash_of(sample: Sample) -> str:
    """The last line of a Python traceback the command printed, or "".

    ``tf_upgrade_v2`` exits 1 both for files it cannot parse (it goes on) and when it
    crashes on one (pasta fails on some f-strings): a crashed run stopped early, and
    its time is no measure of the tree."""
    text = sample.stderr
    if "Traceback (most recent call last)" not in text:
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "a traceback"


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


def _tf_upgrade() -> list[str]:
    """The peer's command: its console script, else the module it runs."""
    script = Path(sys.executable).with_name("tf_upgrade_v2")
    if script.exists():
        return [str(script)]
    if importlib.util.find_spec("tensorflow") is None:
        return []
    return [sys.executable, "-m", "tensorflow.tools.compatibility.tf_upgrade_v2_main"]


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


@dataclass
class Tree:
    """One folder to measure: the generated corpus, or a real repository (copied
    into the scratch folder first, so apply and the cache never touch the original)."""

    label: str
    path: Path
    described: str  # what the report says about it
    files: int = 0
    lines: int = 0


def _describe(path: Path) -> tuple[int, int, int]:
    files = sorted(path.rglob("*.py"))
    data = [p.read_bytes() for p in files]
    return len(files), sum(d.count(b"\n") for d in data), sum(len(d) for d in data)


def _generated_tree(args: argparse.Namespace) -> Tree:
    if not _corpus_is_current(args.files, args.seed):
        print(f"generating the corpus ({args.files} files) ...", flush=True)
        make_corpus.generate(CORPUS, args.files, args.seed)
    manifest = json.loads((CORPUS / "MANIFEST.json").read_text())
    described = (
        f"{manifest['files']} generated legacy TF/Keras 2 modules, {manifest['lines']:,} lines, "
        f"{manifest['bytes'] / 1e6:.1f} MB (`benchmarks/make_corpus.py`, seed "
        f"{manifest['seed']}, sha256 `{str(manifest['sha256'])[:12]}`)"
    )
    return Tree("generated corpus", CORPUS, described)


def _real_tree(source: Path, scratch: Path) -> Tree:
    copy = scratch / f"tree-{source.name}"
    shutil.copytree(source, copy, symlinks=True, ignore=shutil.ignore_patterns(".kmigrate_cache"))
    return Tree(source.name, copy, f"`{source.name}` (a real repository, copied from `{source}`)")


def _changed_files(original: Path, copy: Path) -> int:
    changed = 0
    for path in original.rglob("*.py"):
        twin = copy / path.relative_to(original)
        if twin.is_file() and twin.read_bytes() != path.read_bytes():
            changed += 1
    return changed


def measured_env() -> dict[str, str]:
    """The environment of every measured command: TensorFlow's logging quiet, the bytecode
    cache on as in a user's install (a shell with ``PYTHONDONTWRITEBYTECODE`` set made each
    run compile kmigrate's modules again), no backend or cache folder chosen by the caller."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for name in ("PYTHONDONTWRITEBYTECODE", "KERAS_BACKEND", "KMIGRATE_CACHE_DIR"):
        env.pop(name, None)
    return env


def run_tree(tree: Tree, args: argparse.Namespace, scratch: Path) -> dict:
    """Every measurement on one tree; scans, the floor, apply and tf_upgrade_v2 in
    rounds (one of each per round) so a machine whose speed drifts moves them alike."""
    runs = 1 if args.quick else args.runs
    heavy_runs = max(1, runs if args.apply_runs is None else args.apply_runs)
    root = tree.path
    tree.files, tree.lines, _ = _describe(root)
    env = measured_env()
    kmigrate = _kmigrate()
    work = scratch / f"work-{root.name}"
    work.mkdir()
    report = work / "report.json"
    cache = root / ".kmigrate_cache"
    load_before = os.getloadavg()
    results: dict[str, Measurement] = {}

    def clear_cache():
        shutil.rmtree(cache, ignore_errors=True)
        return root

    try:
        # Warm the OS page cache and Python's bytecode caches once, unmeasured.
        run_measured(
            [*kmigrate, "scan", ".", "-q", "--no-cache", "-f", "json", "-o", str(report)],
            root,
            env,
        )
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
            print(f"[{tree.label}] round {number + 1} of {runs}: floor and scans", flush=True)
            sample = measure(
                parse, [sys.executable, "-c", PARSE_SCRIPT_ANY, "."], root, env, capture=True
            )
            inner.append(float(sample.stdout.split()[0]))
            for key, _, options, before in plan:
                measure(results[key], [*scan, *options], root, env, before)
        parse.note = f"parsing alone (in-process): {statistics.median(inner):.2f} s"
        findings = json.loads(report.read_text())["summary"]["findings"]

        applied = work / "apply"

        def fresh_copy():
            shutil.rmtree(applied, ignore_errors=True)
            shutil.copytree(root, applied, ignore=shutil.ignore_patterns(".kmigrate_cache"))
            return applied

        out = work / "tf_upgrade_out"

        def fresh_out():
            shutil.rmtree(out, ignore_errors=True)
            return root

        heavy = []
        if not args.skip_apply:
            apply_command = [*kmigrate, "apply", ".", "-q", "--jobs", "2", "--allow-dirty"]
            results["apply"] = Measurement(
                "kmigrate apply --jobs 2 (fresh copy, empty cache)", " ".join(apply_command)
            )
            heavy.append(("apply", apply_command, fresh_copy, (0,)))
        upgrade = _tf_upgrade()
        if upgrade and not args.skip_tf_upgrade:
            upgrade_command = [
                *upgrade,
                "--intree",
                ".",
                "--outtree",
                str(out),
                "--reportfile",
                str(work / "tf_upgrade_report.txt"),
            ]
            results["tf_upgrade"] = Measurement(
                "tf_upgrade_v2 --intree (same tree)", " ".join(upgrade_command)
            )
            # It exits 1 on files it cannot parse (Python 2 code in real trees).
            heavy.append(("tf_upgrade", upgrade_command, fresh_out, (0, 1)))
        for number in range(heavy_runs):
            print(f"[{tree.label}] round {number + 1} of {heavy_runs}: apply, tf_upgrade_v2")
            for key, command, before, codes in heavy:
                if results[key].crashed:
                    continue
                sample = measure(results[key], command, root, env, before, ok_codes=codes)
                results[key].crashed = crash_of(sample)
                if results[key].crashed:
                    results[key].note = f"crashed: {results[key].crashed[:120]}"
        if "apply" in results:
            rewritten = _changed_files(root, applied)
            cpu = results["apply"].cpu
            results["apply"].note = (
                f"{rewritten} files rewritten; {cpu / max(rewritten, 1):.3f} s CPU per "
                "rewritten file"
            )
            results["apply"].rewritten = rewritten  # type: ignore[attr-defined]

        target = _check_target(root)
        relative = target.relative_to(root).as_posix()
        check = [*kmigrate, "check", relative, "-q"]
        print(f"[{tree.label}] kmigrate check", flush=True)
        run_measured(check, root, env)  # fills the cache entry of the file
        results["check_cold"] = repeat(
            "kmigrate check one_file.py, cold (--no-cache)",
            [*check, "--no-cache"],
            max(5, runs),
            root,
            env,
            ok_codes=(0, 1),
        )
        results["check_warm"] = repeat(
            "kmigrate check one_file.py, warm cache",
            check,
            max(5, runs),
            root,
            env,
            ok_codes=(0, 1),
        )
        original = target.read_bytes()
        edits = iter(range(1, 1_000_000))

        def edited() -> Path:
            # what the hook sees: the file it checks was just edited (a new line each run)
            target.write_bytes(original + b"\n_benchmark_edit = %d\n" % next(edits))
            return root

        try:
            results["check_edited"] = repeat(
                "kmigrate check one_file.py, warm cache, that file just edited",
                check,
                max(5, runs),
                root,
                env,
                before=edited,
                ok_codes=(0, 1),
            )
        finally:
            target.write_bytes(original)
        lines = original.count(b"\n")
        results["check_cold"].note = f"{relative}: {lines} lines; exit 1 = new findings"
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "tree": tree,
        "results": results,
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


def ratios(results: dict[str, Measurement], tree: Tree) -> list[tuple[str, str, str, str]]:
    """(what, target, measured, status) rows."""
    rows = []
    scan2, parse = results["scan2"], results["parse"]
    peer = results.get("tf_upgrade")
    if peer is not None and peer.crashed:
        rows.append(
            (
                "`scan --jobs 2` cold vs `tf_upgrade_v2 --intree`",
                f">= {TARGET_PEER_SPEEDUP:.0f}x faster",
                f"no comparison: tf_upgrade_v2 crashed after {peer.wall:.1f} s "
                f"(`{peer.crashed[:80]}`)",
                "",
            )
        )
    elif peer is not None:
        speedup = results["tf_upgrade"].wall / scan2.wall
        rows.append(
            (
                "`scan --jobs 2` cold vs `tf_upgrade_v2 --intree`",
                f">= {TARGET_PEER_SPEEDUP:.0f}x faster",
                f"{speedup:.1f}x faster",
                _status(speedup >= TARGET_PEER_SPEEDUP),
            )
        )
        cpu = results["tf_upgrade"].cpu / scan2.cpu
        rows.append(("the same in CPU time (all processes)", "(info)", f"{cpu:.1f}x", ""))
        if "apply" in results:
            speedup = results["tf_upgrade"].wall / results["apply"].wall
            rows.append(
                (
                    "`apply --jobs 2` vs `tf_upgrade_v2 --intree`",
                    f">= {TARGET_APPLY_SPEEDUP:.0f}x faster",
                    f"{speedup:.1f}x faster",
                    _status(speedup >= TARGET_APPLY_SPEEDUP),
                )
            )
            rounds = [
                u.wall / a.wall
                for a, u in zip(results["apply"].samples, results["tf_upgrade"].samples)
            ]
            if len(rounds) > 1:
                rows.append(
                    (
                        "the same, round by round",
                        "(info)",
                        ", ".join(f"{r:.1f}x" for r in rounds),
                        "",
                    )
                )
            cpu = results["tf_upgrade"].cpu / results["apply"].cpu
            rows.append(("the same in CPU time (all processes)", "(info)", f"{cpu:.1f}x", ""))
    floor = scan2.wall / parse.wall
    rows.append(
        (
            "`scan --jobs 2` cold vs bare `ast.parse` of the same files",
            "(info)",
            f"{floor:.2f}x",
            "",
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
    per_file = scan2.cpu / max(tree.files, 1) * 1000
    rows.append(("`scan --jobs 2` CPU per file", "(info)", f"{per_file:.1f} ms", ""))
    share = results["warm"].wall / scan2.wall
    rows.append(
        (
            "warm-cache re-scan / cold scan (`--jobs 2`)",
            f"<= {TARGET_WARM_SHARE:.0%}",
            f"{share:.1%}",
            _status(share <= TARGET_WARM_SHARE),
        )
    )
    for key, label, target in (
        ("check_cold", "cold cache", TARGET_CHECK_COLD_SECONDS),
        ("check_warm", "warm cache", TARGET_CHECK_SECONDS),
        ("check_edited", "warm cache, that file just edited", TARGET_CHECK_SECONDS),
    ):
        seconds = results[key].wall
        rows.append(
            (
                f"`check one_file.py`, {label}, process start included",
                f"<= {target} s",
                f"{seconds:.3f} s",
                _status(seconds <= target),
            )
        )
    memory = max(results[k].tree_rss for k in ("scan1", "scan2", "scan2_fill", "warm"))
    rows.append(
        (
            "peak memory of a scan (all processes)",
            f"< {TARGET_MEMORY_MB:.0f} MB",
            f"{memory:.0f} MB",
            _status(memory < TARGET_MEMORY_MB),
        )
    )
    if "apply" in results:
        memory = results["apply"].tree_rss
        rows.append(("peak memory of apply (all processes)", "(info)", f"{memory:.0f} MB", ""))
    jobs = results["scan1"].wall / scan2.wall
    rows.append(("`--jobs 2` speed-up over `--jobs 1`", "(info)", f"{jobs:.2f}x", ""))
    return rows


def render_tree(data: dict) -> list[str]:
    results: dict[str, Measurement] = data["results"]
    tree: Tree = data["tree"]
    (before, after) = data["load"]
    lines = [
        f"## {tree.label}",
        "",
        f"{tree.described}: {tree.files:,} Python files, {tree.lines:,} lines; the scan "
        f"reports {data['findings']:,} findings. Load average before / after: "
        f"{before[0]:.2f} / {after[0]:.2f}"
        + (
            " (a busy machine: wall times are stretched, CPU times much less)"
            if max(before[0], after[0]) > (os.cpu_count() or 1) * 0.75
            else ""
        )
        + f". Median of {data['runs']} runs (apply and tf_upgrade_v2: of "
        f"{len(results['apply'].samples) if 'apply' in results else 0}; check: of "
        f"{len(results['check_cold'].samples)}).",
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
    lines += ["", "| what | target | measured | |", "| :-- | :-- | --: | :-- |"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in ratios(results, tree)]
    lines += [""]
    return lines


def _summary(all_data: list[dict]) -> list[str]:
    lines = [
        "| tree | files | scan vs tf_upgrade_v2 | apply vs tf_upgrade_v2 | warm / cold "
        "| check warm | scan CPU per file | apply CPU per rewritten file |",
        "| :-- | --: | --: | --: | --: | --: | --: | --: |",
    ]
    for data in all_data:
        results, tree = data["results"], data["tree"]
        peer = results.get("tf_upgrade")
        scan2 = results["scan2"]
        if peer is not None and peer.crashed:
            peer = None  # no ratio against a run that stopped early
        scan_ratio = f"{peer.wall / scan2.wall:.1f}x" if peer else "-"
        apply = results.get("apply")
        apply_ratio = f"{peer.wall / apply.wall:.1f}x" if peer and apply else "-"
        rewritten = getattr(apply, "rewritten", 0) if apply else 0
        per_rewritten = f"{apply.cpu / max(rewritten, 1):.3f} s" if apply else "-"
        lines.append(
            f"| {tree.label} | {tree.files:,} | {scan_ratio} | {apply_ratio} | "
            f"{results['warm'].wall / scan2.wall:.1%} | {results['check_warm'].wall:.2f} s | "
            f"{scan2.cpu / max(tree.files, 1) * 1000:.1f} ms | {per_rewritten} |"
        )
    return lines


def render(all_data: list[dict]) -> str:
    lines = [
        "# kmigrate benchmark",
        "",
        "Generated by `benchmarks/run.py` (do not edit by hand). Machine: "
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), Python "
        f"{platform.python_version()}, {platform.system()}; kmigrate `{_git_revision()}`.",
        "",
        "Every command runs as its own process. The floor and the four scans run in "
        "rounds, one of each per round, and so do `apply` and `tf_upgrade_v2`: a shared "
        "machine whose speed drifts moves both sides of a ratio alike. CPU time (user + "
        "system of the whole process tree) stretches much less than wall time on a busy "
        "machine.",
        "",
        *_summary(all_data),
        "",
    ]
    for data in all_data:
        lines += render_tree(data)
    lines += ["## Commands", ""]
    first = all_data[0]
    for measurement in first["results"].values():
        command = measurement.command
        for long, short in first.get("aliases", {}).items():
            command = command.replace(long, short)
        lines.append(f"- {measurement.name}: `{command}`")
    return "\n".join(lines) + "\n"


def _raw(all_data: list[dict]) -> list[dict]:
    """Every sample, for re-reading a run without running it again."""
    return [
        {
            "tree": data["tree"].label,
            "files": data["tree"].files,
            "lines": data["tree"].lines,
            "load": data["load"],
            "samples": {
                key: [(s.wall, s.cpu, s.max_rss_mb, s.tree_rss_mb) for s in m.samples]
                for key, m in data["results"].items()
            },
        }
        for data in all_data
    ]


def run_benchmark(args: argparse.Namespace) -> list[dict]:
    scratch = Path(tempfile.mkdtemp(prefix="kmigrate-bench-"))
    try:
        trees = [] if args.no_corpus else [_generated_tree(args)]
        trees += [_real_tree(Path(path).resolve(), scratch) for path in args.tree]
        all_data = []
        for tree in trees:
            all_data.append(run_tree(tree, args, scratch))
            for line in ratios(all_data[-1]["results"], tree):
                print(f"  {tree.label}: {line[0]}: {line[2]} {line[3]}", flush=True)
        return all_data
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


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
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="FOLDER",
        help="also measure this folder (copied first; repeatable)",
    )
    parser.add_argument("--no-corpus", action="store_true", help="measure only the --tree folders")
    parser.add_argument("--output", type=Path, default=RESULTS, help="[benchmarks/RESULTS.md]")
    args = parser.parse_args(argv)
    if args.no_corpus and not args.tree:
        parser.error("--no-corpus needs at least one --tree")
    data = run_benchmark(args)
    text = render(data)
    args.output.write_text(text, encoding="utf-8")
    raw = args.output.with_suffix(".json")
    raw.write_text(json.dumps(_raw(data), indent=1) + "\n", encoding="utf-8")
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
