"""A batched worker as a fork server: the framework imported once, each model in a child.

The server process (`worker.main` with several tasks) imports Keras and its backend (for a
Keras 2 reference, tf_keras) and does nothing else: no tensor, no compilation, no model
code. For each model it forks a child that runs that model alone (`worker.run_task`) and
exits; the server waits for it and goes on with the next. Each child starts from the same
untouched state, so nothing of one model reaches the next (modules, ``sys.path``, the
environment, Keras's settings and registries, a TensorFlow another model imported: the
TensorFlow watch is exact for every model) and a model that crashes the interpreter
(a segfault, ``os._exit``, a signal) takes only its child with it: the server writes a
*lost* file for it (the exit status), which the parent reports as it reports a worker that
died without a result (`execute.WorkerPool`). A child that hangs is killed by the parent's
time limit with the whole process group (server and child); a fresh server runs the rest.

Forking a process that runs other threads is unsafe (a lock held by another thread stays
held in the child forever), so the server forks only while it has one thread
(`can_fork`, which counts them in ``/proc``: Linux only); otherwise the models run in the
server itself as before (`isolation.ModelIsolation`). Measured after importing Keras (on
jax, torch and TensorFlow the only threads are OpenBLAS's pools, started when NumPy and
SciPy load their BLAS):

===========================  =========================  ==============================
server                       OS threads after import    with ``OPENBLAS_NUM_THREADS=1``
===========================  =========================  ==============================
Keras 3 on jax               3                          1
Keras 3 on torch             2                          1
Keras 3 on tensorflow        2                          1
tf_keras (Keras 2 on TF)     3                          1
Keras 3 on openvino          3                          2 (a ThreadPoolExecutor's)
===========================  =========================  ==============================

TensorFlow's, XLA's and PyTorch's own pools start with the first computation, which only
children do. OpenVINO's import starts a Python thread pool: its batched worker does not
fork and runs the models in itself, as before. So the parent starts a batched worker with
``OPENBLAS_NUM_THREADS=1`` (unless the user chose a BLAS thread count:
`single_threaded_blas`), and each child gives OpenBLAS back the thread count it would have
had (`restore_blas_threads`): the models compute as they do one by one.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, MutableMapping
from pathlib import Path

LOST_SUFFIX = ".lost.json"  # beside a task's result: the child died without writing it
BLAS_MARK = "KMIGRATE_FORK_SERVER_BLAS"  # set by the parent when it chose OPENBLAS=1
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
OPENBLAS_SETTERS = (
    "openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "scipy_openblas_set_num_threads64_",
)
OPENBLAS_MAX_THREADS = 64  # the cap of the wheels' OpenBLAS builds (MAX_THREADS)
PARENT_POLL_SECONDS = 0.5


def single_threaded_blas(env: MutableMapping[str, str]) -> None:
    """The environment of a batched worker: OpenBLAS starts no thread pool in the server
    (see the module docstring), unless the user set a thread count, which is kept (and if
    that starts threads, the server does not fork)."""
    if not hasattr(os, "fork") or any(env.get(name) for name in BLAS_VARIABLES):
        return
    env["OPENBLAS_NUM_THREADS"] = "1"
    env[BLAS_MARK] = "1"


def thread_count() -> int:
    """The process's OS threads (Python's and native ones), as Linux lists them."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # no /proc: unknown, so not safe to fork
        return 0


def can_fork() -> bool:
    """Safe to fork: Linux's ``os.fork`` and one thread, the one forking."""
    return hasattr(os, "fork") and threading.active_count() == 1 and thread_count() == 1


def restore_blas_threads() -> None:
    """In a child: give OpenBLAS the thread count it picks by itself (the CPUs this process
    may run on, or GOTO/OMP_NUM_THREADS), when the parent set ``OPENBLAS_NUM_THREADS=1``
    for the server only."""
    if os.environ.pop(BLAS_MARK, None) is None:
        return
    os.environ.pop("OPENBLAS_NUM_THREADS", None)
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    count = min(count or 1, OPENBLAS_MAX_THREADS)
    for path in _openblas_libraries():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in OPENBLAS_SETTERS:
            setter = getattr(library, name, None)
            if setter is not None:
                setter(ctypes.c_int(count))
                break


def _openblas_libraries() -> list[str]:
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return []
    return sorted(path for path in paths if path.startswith("/"))


def lost_path(task: dict) -> Path:
    return Path(task["result"] + LOST_SUFFIX)


def run_in_child(task: dict, run: Callable[[], None]) -> int:
    """Fork; the child runs `run` (one model) and exits; the server waits and returns the
    child's exit status (``-N`` for signal N, as ``subprocess`` gives it). A child that
    wrote no result leaves a lost file with that status for the parent."""
    lost_path(task).unlink(missing_ok=True)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # what the server buffered is written once, not by every child
    parent = os.getppid()
    pid = os.fork()
    if pid == 0:  # the child: one model, then out without the server's exit handlers
        status = 0
        try:
            restore_blas_threads()
            run()
        except BaseException:  # noqa: BLE001 - as an uncaught exception ends a process
            traceback.print_exc()
            status = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(status)
    status = _wait(pid, parent)
    if not Path(task["result"]).exists():
        text = json.dumps({"returncode": status})
        temporary = lost_path(task).with_suffix(".tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, lost_path(task))
    return status


def _wait(pid: int, parent: int) -> int:
    """The child's exit status; if the parent exits meanwhile (nobody will read the
    results), the child is killed and the server exits."""
    opener = getattr(os, "pidfd_open", None)
    descriptor = None
    if opener is not None:
        with contextlib.suppress(OSError):
            descriptor = opener(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if os.getppid() != parent:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os._exit(1)
            if descriptor is not None:
                select.select([descriptor], [], [], PARENT_POLL_SECONDS)
            else:
                time.sleep(0.01)
    finally:
        if descriptor is not None:
            os.close(descriptor)
