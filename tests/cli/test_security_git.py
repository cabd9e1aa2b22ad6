"""What kmigrate hands to git never becomes a git option or a second request, and a
repository's own git config cannot make kmigrate's git calls run a program."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate.cli.main import main
from kmigrate.run import git_baseline

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

LEGACY = "import tensorflow as tf\n\nx = tf.reduce_mean(tf.ones((2, 2)), keep_dims=True)\n"
ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=dict(os.environ, **ENV),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'r'\n")
    (root / "model.py").write_text(LEGACY)
    (root / "other.py").write_text("import tensorflow as tf\nY = tf.constant(1)\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "legacy")
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(root)
    return root


def _check(*args: str):
    # LEGACY's finding is an info note (module level): it fails a commit with --fail-on info
    return CliRunner().invoke(main, ["check", "--fail-on", "info", *args], catch_exceptions=False)


@pytest.mark.parametrize("ref", ["-x", "--output=written.txt", "--git-dir=/", "-", "HEAD\nx"])
def test_a_baseline_ref_is_never_a_git_option(repo, ref, monkeypatch) -> None:
    calls: list[list[str]] = []
    real = subprocess.run

    def recording(command, *args, **kwargs):
        calls.append(list(command))
        return real(command, *args, **kwargs)

    monkeypatch.setattr(git_baseline.subprocess, "run", recording)
    result = _check("model.py", "--baseline-ref", ref)
    assert result.exit_code == 2
    assert "is not a git revision" in result.stderr
    assert not any(ref in call for call in calls)  # git never saw it as an argument
    assert not (repo / "written.txt").exists()


def test_the_issue_spelling_on_the_command_line(repo) -> None:
    """``--baseline-ref -x`` exactly as a user (or a CI variable) would type it."""
    done = subprocess.run(
        [sys.executable, "-m", "kmigrate", "check", "model.py", "--baseline-ref", "-x"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "'-x' is not a git revision" in done.stderr


def test_a_good_ref_still_works(repo) -> None:
    assert _check("model.py", "--baseline-ref", "HEAD").exit_code == 0
    (repo / "model.py").write_text(LEGACY + "z = tf.random.normal((2,))\n")
    assert _check("model.py", "--baseline-ref", "main").exit_code == 1


def test_a_path_with_a_line_break_cannot_shift_blobs(repo) -> None:
    """One path with a newline would be two ``cat-file --batch`` requests: every later
    path would get the previous one's blob. Such paths are left out."""
    commit = git(repo, "rev-parse", "HEAD")
    hostile = f"missing.py\n{commit}:model.py"
    blobs = git_baseline.read_blobs(commit, [hostile, "other.py"], repo)
    assert blobs == {"other.py": (repo / "other.py").read_bytes()}


def _plant_fsmonitor(repo: Path, marker: Path) -> None:
    hook = repo.parent / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\necho ran > {marker}\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    # the hook is live: plain git runs it
    git(repo, "status", "--porcelain")
    assert marker.read_text().strip() == "ran"
    marker.unlink()


def test_a_repository_fsmonitor_never_runs(repo, tmp_path) -> None:
    """A tree unpacked from an archive can bring its own .git/config; ``check
    --baseline-ref`` (git diff, cat-file) and ``apply`` (git status) must not run the
    program it names."""
    marker = tmp_path / "fsmonitor-ran"
    _plant_fsmonitor(repo, marker)
    (repo / "model.py").write_text(LEGACY + "layer = tf.keras.layers.Dense(3)\n")
    assert _check("model.py", "--baseline-ref", "HEAD").exit_code == 1
    result = CliRunner().invoke(main, ["apply", "model.py", "-q"], catch_exceptions=False)
    assert "uncommitted" in result.output + result.stderr  # git status answered
    assert not marker.exists()
