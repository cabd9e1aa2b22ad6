"""The batched worker's fork server (issue 34), without a framework: a child that writes its
result, one that exits, one killed by a signal, and when the server does not fork.

Each case runs in its own fresh interpreter (a small script), not in pytest's process: that
one runs other threads (pytest-xdist's), and forking it is exactly what the server avoids.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.parity import fork_server
from kmigrate.parity.jobs import PACKAGE_ROOT

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork servers are Linux only")

SERVER = """
import json, os, signal, sys, threading
from kmigrate.parity.fork_server import can_fork, run_in_child

def write(task):
    open(task["result"], "w").write(json.dumps({{"status": "ok", "pid": os.getpid()}}))

tasks = [{{"result": f"{{sys.argv[1]}}/t{{i}}.json"}} for i in range(4)]
actions = [
    lambda: write(tasks[0]),
    lambda: os._exit(3),
    lambda: os.kill(os.getpid(), signal.SIGKILL),
    lambda: write(tasks[3]),
]
{before}
statuses = [run_in_child(t, a) for t, a in zip(tasks, actions)]
print(json.dumps({{"statuses": statuses, "server": os.getpid(), "can_fork": can_fork()}}))
"""


def run_script(script: str, argument: Path, env: dict[str, str]) -> dict:
    """Run `script` in a fresh interpreter; the JSON of its last output line."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(argument)],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": PACKAGE_ROOT},
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_server(tmp_path: Path, before: str = "") -> dict:
    return run_script(textwrap.dedent(SERVER).format(before=before), tmp_path, dict(os.environ))


def test_each_model_runs_in_its_own_child_and_a_dead_child_leaves_its_status(tmp_path):
    out = run_server(tmp_path)
    assert out["statuses"] == [0, 3, -9, 0]  # the server outlived two dead children
    results = [json.loads((tmp_path / f"t{i}.json").read_text()) for i in (0, 3)]
    assert all(r["pid"] != out["server"] for r in results)
    assert results[0]["pid"] != results[1]["pid"]
    lost = [tmp_path / f"t{i}.json{fork_server.LOST_SUFFIX}" for i in range(4)]
    assert [p.exists() for p in lost] == [False, True, True, False]
    assert [json.loads(p.read_text())["returncode"] for p in lost[1:3]] == [3, -9]
    assert out["can_fork"] is True


def test_a_server_running_another_thread_is_not_safe_to_fork(tmp_path):
    started = "threading.Thread(target=threading.Event().wait, daemon=True).start()"
    assert run_server(tmp_path, before=started)["can_fork"] is False


def test_openblas_stays_single_threaded_in_the_server_only(tmp_path, monkeypatch):
    env: dict[str, str] = {}
    fork_server.single_threaded_blas(env)
    assert env == {"OPENBLAS_NUM_THREADS": "1", fork_server.BLAS_MARK: "1"}
    chosen = {"OMP_NUM_THREADS": "4"}
    fork_server.single_threaded_blas(chosen)
    assert chosen == {"OMP_NUM_THREADS": "4"}  # the user's choice is kept
    # the child gives the server's setting back (no OpenBLAS loaded here: only the env)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    fork_server.restore_blas_threads()
    assert "OPENBLAS_NUM_THREADS" not in os.environ
    assert fork_server.BLAS_MARK not in os.environ


BLAS = """
import ctypes, json, os, sys
import numpy  # loads OpenBLAS
from kmigrate.parity import fork_server

def getter():
    for path in fork_server._openblas_libraries():
        library = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads"):
            if hasattr(library, name):
                return getattr(library, name)
    return None

server = {"threads": fork_server.thread_count(), "blas": getter() and getter()()}
def child():
    fork_server.restore_blas_threads()
    seen = {"blas": getter() and getter()(), "env": os.environ.get("OPENBLAS_NUM_THREADS")}
    open(sys.argv[1], "w").write(json.dumps(seen))
if os.fork() == 0:
    child()
    os._exit(0)
os.wait()
print(json.dumps(server))
"""


def test_numpy_starts_no_blas_pool_in_the_server_and_children_get_it_back(tmp_path):
    env = dict(os.environ)
    fork_server.single_threaded_blas(env)
    if fork_server.BLAS_MARK not in env:
        pytest.skip("a BLAS thread count is set in this environment")
    out = tmp_path / "child.json"
    server, child = run_script(BLAS, out, env), json.loads(out.read_text())
    assert server["threads"] == 1
    if server["blas"] is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS this test can ask")
    assert server["blas"] == 1
    assert child == {"blas": min(len(os.sched_getaffinity(0)), 64), "env": None}
