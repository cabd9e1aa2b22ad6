"""The benchmark must not compare against a peer run that crashed part-way.

``tf_upgrade_v2`` exits 1 both when it skips files it cannot parse and when it dies
on one (tf-keras: pasta fails on an f-string after 11 s of a much longer job). Its
time in the second case is no measure of the tree, so no ratio is printed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("kmigrate_bench_run", ROOT / "benchmarks/run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


CRASH = """Traceback (most recent call last):
  File "/x/tf_upgrade_v2", line 8, in <module>
    sys.exit(main())
  File "/x/pasta/base/annotate.py", line 1326, in visit_JoinedStr
    self.visit(next(values))
StopIteration
"""
SKIPPED = "ERROR: Failed to parse.\nTraceback is not printed for this one\n"


def _sample(bench, stderr: str, wall: float = 10.0):
    return bench.Sample(
        wall=wall, cpu=wall, max_rss_mb=1, tree_rss_mb=1, returncode=1, stderr=stderr
    )


def test_a_traceback_is_a_crash_and_a_parse_error_is_not():
    bench = _bench()
    assert bench.crash_of(_sample(bench, CRASH)) == "StopIteration"
    assert bench.crash_of(_sample(bench, SKIPPED)) == ""


def _results(bench, peer_stderr: str):
    def measured(name: str, wall: float, stderr: str = ""):
        m = bench.Measurement(name, name)
        m.samples.append(_sample(bench, stderr, wall))
        m.crashed = bench.crash_of(m.samples[0])
        return m

    keys = ("scan1", "scan2", "scan2_fill", "warm", "check_cold", "check_warm", "check_edited")
    results = {key: measured(key, 1.0) for key in keys}
    results["parse"] = measured("parse", 0.5)
    results["tf_upgrade"] = measured("tf_upgrade", 11.5, peer_stderr)
    return results


def test_no_ratio_against_a_crashed_peer():
    bench = _bench()
    tree = bench.Tree("t", ROOT, "t", files=10, lines=100)
    crashed = {row[0]: row for row in bench.ratios(_results(bench, CRASH), tree)}
    row = crashed["`scan --jobs 2` cold vs `tf_upgrade_v2 --intree`"]
    assert row[2].startswith("no comparison: tf_upgrade_v2 crashed") and row[3] == ""
    summary = bench._summary([{"results": _results(bench, CRASH), "tree": tree}])
    assert "| t | 10 | - |" in summary[-1]
    finished = {row[0]: row for row in bench.ratios(_results(bench, SKIPPED), tree)}
    assert finished["`scan --jobs 2` cold vs `tf_upgrade_v2 --intree`"][2] == "11.5x faster"
