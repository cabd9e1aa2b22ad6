"""Run a script under one Keras backend in its own process and read back its report.

Keras picks its backend (and `tensorflow.keras` picks Keras 2 or 3) once, at import, so
every backend-test worker runs as a subprocess. The worker prints one line
``<tag><json>``; anything else it prints (TensorFlow's start-up noise) is ignored.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def run_on_backend(
    argv: list[str],
    backend: str,
    cwd: Path,
    *,
    legacy_keras: bool = False,
    tag: str = "REPORT",
    timeout: int = 600,
) -> dict:
    """The JSON the worker ``argv`` printed after ``tag`` on ``backend``; the test fails
    with the worker's output when it exits non-zero or prints no report.
    ``legacy_keras``: `tensorflow.keras` is tf_keras (Keras 2), for a reference run."""
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    if legacy_keras:
        env["TF_USE_LEGACY_KERAS"] = "1"
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith(tag)]
    assert done.returncode == 0 and lines, (
        f"{backend} worker failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    )
    return json.loads(lines[-1][len(tag) :])


def original_and_migrated(
    tmp_path_factory, source: str, name: str = "layer.py", driver: str | None = None
) -> tuple[Path, Path]:
    """Two folders holding ``source`` as ``name``: as written, and after `kmigrate apply`
    (the engine's rewrite, never a hand-written copy); ``driver``: the same script in
    both, as ``driver.py``, that runs the module and prints its report."""
    from kmigrate.api import apply_to_text

    original = tmp_path_factory.mktemp("original")
    (original / name).write_text(source)
    migrated = tmp_path_factory.mktemp("migrated")
    (migrated / name).write_text(apply_to_text(source))
    if driver is not None:
        for folder in (original, migrated):
            (folder / "driver.py").write_text(driver)
    return original, migrated


def run_driver(folder: Path, backend: str, legacy_keras: bool = False) -> dict:
    """:func:`run_on_backend` of the ``driver.py`` that :func:`original_and_migrated`
    wrote into ``folder``."""
    argv = [sys.executable, "driver.py"]
    return run_on_backend(argv, backend, folder, legacy_keras=legacy_keras, timeout=300)


def project_runs_on_backends(
    tmp_path_factory, files: dict[str, str], backends: tuple[str, ...]
) -> tuple[dict[str, str], dict[str, object]]:
    """A Keras 2 project (``files``: relative path -> text, ``driver.py`` among them)
    converted by ``kmigrate apply`` in a copy: the texts apply wrote, and the report of
    ``driver.py`` on tf_keras (``"reference"``, the original) and on each backend (the copy)."""
    from kmigrate import api

    original = tmp_path_factory.mktemp("original")
    for relative, text in files.items():
        (original / relative).parent.mkdir(parents=True, exist_ok=True)
        (original / relative).write_text(text)
    converted = tmp_path_factory.mktemp("converted") / "project"
    shutil.copytree(original, converted)
    changes = api.apply([converted], write=True)
    written = {change.path: change.new_text for change in changes if change.written}
    argv = [sys.executable, "driver.py"]
    runs = {"reference": run_on_backend(argv, "tensorflow", original, legacy_keras=True)}
    for backend in backends:
        runs[backend] = run_on_backend(argv, backend, converted)
    return written, runs
