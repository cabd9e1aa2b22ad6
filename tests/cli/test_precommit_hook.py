"""The pre-commit hooks, end to end, with the real ``pre-commit`` and real commits.

pre-commit clones a hooks repository at a revision, reads its
``.pre-commit-hooks.yaml``, builds a virtualenv and ``pip install``s the repository
into it, then runs the hook's ``entry`` on the staged files. Here the hooks
repository is a throwaway git repository holding this checkout (the package, its
pyproject.toml and .pre-commit-hooks.yaml), so everything but the network is the
real path: the manifest, ``language: python``, the ``kmigrate`` console script,
``types_or`` and ``git commit`` calling the installed hook.

Without network, pip installs kmigrate itself (``--no-deps``, no build isolation:
setuptools comes from this interpreter) and the hook's dependencies (click,
libcst, rich) are found through ``PYTHONPATH`` pointing at this interpreter's
site-packages; ``test_the_hook_runs_the_installed_copy`` checks that the code the
hook imports is the copy pip installed, not this checkout.

Slow (a virtualenv and a pip install, once per session); marked ``slow``, runs in CI.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

MODEL = textwrap.dedent(
    '''
    """A legacy Keras 2 layer."""
    import tensorflow as tf


    class Normalize(tf.keras.layers.Layer):
        """Divides by the L2 norm over the last axis."""

        def call(self, x):
            squared = tf.square(x)
            norm = tf.sqrt(tf.reduce_sum(squared, axis=-1, keepdims=True))
            return x / norm


    def build(units):
        return tf.keras.Sequential([tf.keras.layers.Dense(units), Normalize()])
    '''
).lstrip()
ANCHOR = "        return x / norm\n"
NEW_CALL = "        norm = norm + tf.reduce_mean(x, axis=-1, keepdims=True)\n"
FIXED_CALL = "        norm = norm + keras.ops.mean(x, axis=-1, keepdims=True)\n"


def git_env() -> dict[str, str]:
    return dict(
        os.environ,
        GIT_AUTHOR_NAME="kmigrate test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="kmigrate test",
        GIT_COMMITTER_EMAIL="test@example.com",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def git(cwd: Path, *args: str) -> str:
    completed = run(["git", *args], cwd, git_env())
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout as a hooks repository: (path, revision)."""
    folder = tmp_path_factory.mktemp("kmigrate-hooks")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, folder / name)
    for package in ("migrate", "rules"):
        shutil.copytree(
            ROOT / package,
            folder / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "kmigrate snapshot")
    return folder, git(folder, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for pre-commit and git: a private cache, an offline pip."""
    env = git_env()
    env.update(
        PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
        PIP_NO_INDEX="1",
        PIP_NO_DEPS="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip's inverted spelling of --no-build-isolation
        # This interpreter's packages (click, rich, libcst) for the offline hook install;
        # every site folder, in case this venv sees the system's too.
        PYTHONPATH=os.pathsep.join([sysconfig.get_paths()["purelib"], *site.getsitepackages()]),
    )
    env.pop("KERAS_BACKEND", None)
    return env


def make_project(
    tmp_path: Path, hooks_repo: tuple[Path, str], hook_id: str, env: dict[str, str]
) -> Path:
    """A git repository with the legacy model committed and the hook installed."""
    project = tmp_path / "legacy-project"
    project.mkdir()
    (project / "model.py").write_text(MODEL)
    path, revision = hooks_repo
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {path}\n    rev: {revision}\n    hooks:\n      - id: {hook_id}\n"
    )
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "legacy code, before the hook")
    installed = run([sys.executable, "-m", "pre_commit", "install"], project, env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return project


def commit(project: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    """``git commit -a``: runs the installed hook; returns the outcome with its output."""
    git(project, "add", "-A")
    return run(["git", "commit", "-m", message], project, env)


def edit(project: Path, old: str, new: str) -> None:
    model = project / "model.py"
    text = model.read_text()
    assert old in text
    model.write_text(text.replace(old, new, 1))


def new_call_line(project: Path) -> int:
    lines = (project / "model.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if "tf.reduce_mean" in line)


def assert_commits_are_gated(project: Path, env: dict[str, str], hook_name: str) -> None:
    """The three commits of the issue: unrelated edit passes, new call fails, fix passes."""
    # 1. Edits elsewhere in the file: lines above, a docstring, a new helper.
    edit(
        project,
        '"""A legacy Keras 2 layer."""\n',
        '"""A legacy Keras 2 layer.\n\nNow documented.\n"""\n',
    )
    edit(project, "def build(units):", "def helper():\n    return 42\n\n\ndef build(units):")
    passed = commit(project, env, "unrelated edits")
    output = passed.stdout + passed.stderr  # git hands the hook's output to stderr
    assert passed.returncode == 0, output
    assert f"{hook_name}..." in output and "Passed" in output

    # 2. A new tf.reduce_mean inside the layer: the commit is refused.
    head = git(project, "rev-parse", "HEAD")
    edit(project, ANCHOR, NEW_CALL + ANCHOR)
    failed = commit(project, env, "a new TensorFlow op in model code")
    output = failed.stdout + failed.stderr
    assert failed.returncode != 0, output
    assert "Failed" in output
    line = new_call_line(project)
    assert f"model.py:{line}:23: KM2" in output, output
    assert "1 new, " in output
    assert git(project, "rev-parse", "HEAD") == head, "the commit must not happen"

    # 3. Fixed with keras.ops: the commit goes through.
    edit(project, NEW_CALL, FIXED_CALL)
    edit(project, "import tensorflow as tf\n", "import keras\nimport tensorflow as tf\n")
    fixed = commit(project, env, "portable op")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert git(project, "rev-parse", "HEAD") != head


def test_hook_with_a_baseline_file(tmp_path: Path, hooks_repo, hook_env) -> None:
    project = make_project(tmp_path, hooks_repo, "kmigrate", hook_env)
    # Without a baseline the legacy findings fail the hook.
    (project / "model.py").write_text(MODEL + "\n")
    refused = commit(project, hook_env, "touch the legacy file")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "KM902" not in output, f"a rule crashed in the installed hook:\n{output}"
    assert "model.py:5:17: KM101 " in output
    written = run([sys.executable, "-m", "kmigrate", "baseline"], project, hook_env)
    assert written.returncode == 0, written.stderr
    assert (project / ".kmigrate-baseline.json").is_file()
    accepted = commit(project, hook_env, "kmigrate baseline")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr

    assert_commits_are_gated(project, hook_env, "kmigrate (Keras 3 portability)")


def test_hook_with_baseline_ref_head(tmp_path: Path, hooks_repo, hook_env) -> None:
    project = make_project(tmp_path, hooks_repo, "kmigrate-baseline-head", hook_env)
    assert not (project / ".kmigrate-baseline.json").exists()
    assert_commits_are_gated(project, hook_env, "kmigrate (new findings since HEAD)")


def test_the_hook_runs_the_installed_copy(tmp_path: Path, hooks_repo, hook_env) -> None:
    project = make_project(tmp_path, hooks_repo, "kmigrate", hook_env)
    # Build the hook's environment here: an earlier commit of another test may have, but
    # that depends on the order (and the worker) the tests run in.
    built = run([sys.executable, "-m", "pre_commit", "install-hooks"], project, hook_env)
    assert built.returncode == 0, built.stdout + built.stderr
    home = Path(hook_env["PRE_COMMIT_HOME"])
    pythons = sorted(home.glob("repo*/py_env-*/bin/python"))
    assert pythons, "pre-commit built no python environment"
    where = run(
        [
            str(pythons[0]),
            "-c",
            "import kmigrate, kmigrate.cli.check, kmigrate.rules; print(kmigrate.__file__)",
        ],
        tmp_path,
        hook_env,
    )
    assert where.returncode == 0, where.stderr
    installed = Path(where.stdout.strip())
    assert pythons[0].parent.parent in installed.parents, installed
    assert (pythons[0].parent / "kmigrate").is_file(), "the console script"
    site_packages = installed.parent.parent
    # One import package: the source folders' own names are never installed (both belong
    # to other projects on the package index).
    assert sorted(p.name for p in site_packages.iterdir() if p.name in {"migrate", "rules"}) == []
    for foreign in ("migrate", "rules"):
        probe = run([str(pythons[0]), "-c", f"import {foreign}"], tmp_path, hook_env)
        assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr, probe.stderr
    version = run([str(pythons[0].parent / "kmigrate"), "--version"], tmp_path, hook_env)
    assert version.returncode == 0 and "kmigrate" in version.stdout, version.stderr
    for data_file in sorted((ROOT / "rules" / "data").glob("*")):
        relative = Path("kmigrate", data_file.relative_to(ROOT))
        assert (site_packages / relative).is_file(), (
            f"{relative} is not in the installed package: add it to "
            "[tool.setuptools.package-data] in pyproject.toml"
        )


def readme_precommit_config(url: str, revision: str) -> str:
    """The README's `.pre-commit-config.yaml`, its two placeholders filled in."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("# .pre-commit-config.yaml\n", 1)[1].split("```", 1)[0]
    assert "<kmigrate repository URL>" in block and "<a commit SHA of kmigrate>" in block
    return block.replace("<kmigrate repository URL>", url).replace(
        "<a commit SHA of kmigrate>", revision
    )


def test_the_readme_example_works_as_written(tmp_path: Path, hooks_repo, hook_env) -> None:
    """The README's config, with this checkout's clone and commit for its placeholders:
    pre-commit installs it, and after `kmigrate baseline` it gates commits."""
    project = make_project(tmp_path, hooks_repo, "kmigrate", hook_env)
    path, revision = hooks_repo
    (project / ".pre-commit-config.yaml").write_text(readme_precommit_config(str(path), revision))
    written = run([sys.executable, "-m", "kmigrate", "baseline"], project, hook_env)
    assert written.returncode == 0, written.stderr
    accepted = commit(project, hook_env, "the README's hook config and a baseline")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert_commits_are_gated(project, hook_env, "kmigrate (Keras 3 portability)")
