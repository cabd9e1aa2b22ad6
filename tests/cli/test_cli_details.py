"""The command line's smaller promises: options that are honoured or refused (never
ignored), a commit hook that blocks what matters and says a command that works, one
cache at the repository root."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_cli import run  # python -m kmigrate, as a user runs it

LEGACY = "import tensorflow as tf\nx = tf.keras.layers.Dense(3)\ny = tf.reduce_sum(x)\n"
NOTE_ONLY = "import tensorflow as tf\n\n\ndef total(x):\n    return tf.reduce_sum(x)\n"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with only setup.py (no pyproject.toml), like many legacy ones."""
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "setup.py").write_text("")
    _git("init", "-q", ".", cwd=root)
    _git("config", "user.email", "t@example.com", cwd=root)
    _git("config", "user.name", "t", cwd=root)
    return root


def test_statistics_with_a_format_it_cannot_honour_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(LEGACY)
    for fmt in ("html", "sarif"):
        result = run("scan", ".", "--statistics", "-f", fmt, "-q", cwd=tmp_path)
        assert result.returncode == 2 and "--statistics" in result.stderr, fmt
    assert run("scan", ".", "--statistics", "-f", "json", "-q", cwd=tmp_path).returncode == 0


def test_info_notes_do_not_fail_a_commit_unless_asked(repo: Path) -> None:
    (repo / "sub" / "data.py").write_text(NOTE_ONLY)
    default = run("check", "sub/data.py", cwd=repo)
    assert default.returncode == 0, default.stdout + default.stderr
    assert "KM201" in default.stdout  # shown all the same
    assert "below --fail-on warning" in default.stderr
    assert run("check", "sub/data.py", "--fail-on", "info", cwd=repo).returncode == 1
    (repo / "pyproject.toml").write_text('[tool.kmigrate]\nfail-on = "info"\n')
    assert run("check", "sub/data.py", cwd=repo).returncode == 1
    (repo / "pyproject.toml").write_text('[tool.kmigrate]\nfail-on = "loud"\n')
    assert run("check", "sub/data.py", cwd=repo).returncode == 2


def test_the_blocked_commit_hint_is_a_command_that_works(repo: Path) -> None:
    (repo / "sub" / "a.py").write_text(LEGACY)
    _git("add", "sub/a.py", cwd=repo)
    blocked = run("check", "sub/a.py", cwd=repo)
    assert blocked.returncode == 1
    hint = blocked.stderr.split("`")[1]
    assert hint == "kmigrate apply --allow-dirty sub/a.py"
    fixed = run(*hint.split()[1:], cwd=repo)
    assert fixed.returncode == 0, fixed.stderr
    assert "tf.keras" not in (repo / "sub" / "a.py").read_text()


def test_check_keeps_one_cache_at_the_repository_top(repo: Path) -> None:
    (repo / "sub" / "a.py").write_text(LEGACY)
    run("check", "sub/a.py", cwd=repo)
    run("check", "a.py", cwd=repo / "sub")
    run("baseline", "a.py", cwd=repo / "sub")
    caches = sorted(p.relative_to(repo).as_posix() for p in repo.rglob(".kmigrate_cache"))
    assert caches == [".kmigrate_cache"]
    assert (repo / ".kmigrate-baseline.json").is_file()


def test_check_refuses_what_it_would_silently_get_wrong(repo: Path) -> None:
    (repo / "sub" / "a.py").write_text(LEGACY)
    both = run("check", "--update-baseline", "--baseline-ref", "HEAD", cwd=repo)
    assert both.returncode == 2 and "one or the other" in both.stderr
    typo = run("check", "--baseline", "basline.json", cwd=repo)
    assert typo.returncode == 2 and "no such file" in typo.stderr
    annotations = run("check", "sub/a.py", "-f", "github", cwd=repo).stdout
    assert "title=KM101::KM101" not in annotations and "title=KM101::" in annotations
    assert "PATHS" in run("check", "--help", cwd=repo).stdout
    assert "FILES" not in run("check", "--help", cwd=repo).stdout
    assert "How to print" in run("rules", "--help", cwd=repo).stdout
    merged = run("merge", "x.json", "-f", "yaml", cwd=repo)
    assert merged.returncode == 2 and "'yaml' is not one of" in merged.stderr


def test_a_large_scan_on_the_terminal_shows_the_summary_not_every_finding(tmp_path: Path) -> None:
    for n in range(120):  # 2 findings each: above the 200 listed by default
        (tmp_path / f"m{n}.py").write_text(LEGACY)
    short = run("scan", ".", "-q", "-j", "1", cwd=tmp_path)
    assert short.returncode == 0 and "kmigrate scan --details" in short.stdout
    assert "m7.py" not in short.stdout.split("Findings by rule")[0]
    full = run("scan", ".", "-q", "-j", "1", "--details", cwd=tmp_path)
    assert "m7.py" in full.stdout and len(full.stdout) > 4 * len(short.stdout)


def test_check_annotations_on_a_notebook_point_at_the_stored_line(tmp_path: Path) -> None:
    source = ["import tensorflow as tf\n", "\n", "x = tf.keras.layers.Dense(3)\n"]
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
    notebook = {"cells": [{**cell, "source": source}], "metadata": {}, "nbformat": 4}
    notebook["nbformat_minor"] = 5
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    stored = (tmp_path / "nb.ipynb").read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(stored) if "Dense(3)" in text)
    out = run("check", "nb.ipynb", "-f", "github", cwd=tmp_path).stdout
    assert f"file=nb.ipynb,line={line}," in out and "::cell 1, line 3: " in out


def test_one_file_of_manual_work_reads_in_the_singular(tmp_path: Path) -> None:
    """One file with manual work and one still needing TensorFlow: no "Top 1 files",
    no "1 ... still need"."""
    (tmp_path / "layer.py").write_text(
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        "class Odd(keras.layers.Layer):\n    def call(self, x):\n"
        "        return tf.py_function(abs, [x], tf.float32)\n"
    )
    result = run("scan", ".", "-j", "1", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "The file with manual work" in text
    assert "Top 1 files" not in text and "1 still need " not in text
