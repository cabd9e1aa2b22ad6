"""Issue 32: hostile and messy trees, second pass. Each test builds the tree that broke
a promise of docs/security.md or docs/robustness.md and runs kmigrate on it as a user
would (a subprocess, so that a hang is a timeout and a traceback an exit status)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

LEGACY = "import tensorflow as tf\n\nx = tf.reduce_mean(tf.ones((2, 2)), keep_dims=True)\n"
LAYER = "import tensorflow as tf\n\nx = tf.keras.layers.Dense(3)\n"  # apply rewrites it


def kmigrate(*args: str, cwd: Path, timeout: float = 60, env: dict | None = None):
    """Run the CLI; a hang fails the test as a TimeoutExpired."""
    environment = dict(os.environ, HOME=str(cwd.parent / "home"), **(env or {}))
    environment["XDG_CACHE_HOME"] = str(cwd.parent / "user-cache")
    environment.pop("KMIGRATE_CACHE_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "kmigrate", *args],
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        env=environment,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "model.py").write_text(LEGACY)
    return root


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def committed(root: Path) -> Path:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    return root


def report(result) -> dict:
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return json.loads(result.stdout)


def no_traceback(result) -> None:
    assert b"Traceback" not in result.stderr, result.stderr.decode(errors="replace")


# 1. FIFOs and devices under config names
def test_fifos_and_devices_under_config_names_neither_hang_nor_fill_memory(tree: Path) -> None:
    (tree / "sub").mkdir()
    (tree / ".github" / "workflows").mkdir(parents=True)
    for name in ("Dockerfile", ".env", "sub/Dockerfile", ".github/workflows/ci.yml"):
        os.mkfifo(tree / name)
    (tree / "keras.json").symlink_to("/dev/zero")
    (tree / "sub" / "keras.json").symlink_to("/dev/urandom")
    result = kmigrate("scan", ".", "-f", "json", "-q", cwd=tree, timeout=30)
    assert report(result)["summary"]["backend"]["pins"] == []


# 6. config files linked out of the tree
def test_config_files_linked_out_of_the_tree_are_not_read(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "prod.env").write_text("KERAS_BACKEND=jax\n")
    (outside / "keras.json").write_text('{"backend": "torch"}\n')
    (outside / "ignore").write_text("model.py\n")
    (outside / "pyproject.toml").write_text('[tool.kmigrate]\nignore = ["KM2"]\n')
    (tree / "prod.env").symlink_to(outside / "prod.env")
    (tree / "keras.json").symlink_to(outside / "keras.json")
    (tree / ".gitignore").symlink_to(outside / "ignore")
    (tree / "pyproject.toml").symlink_to(outside / "pyproject.toml")
    data = report(kmigrate("scan", ".", "-f", "json", "-q", cwd=tree))
    assert data["summary"]["backend"]["pins"] == []
    assert {f["path"] for f in data["findings"] if f["rule"].startswith("KM2")} == {"model.py"}
    # the same files inside the tree are read
    for name in ("prod.env", "keras.json"):
        (tree / name).unlink()
        (tree / name).write_bytes((outside / name).read_bytes())
    pins = report(kmigrate("scan", ".", "-f", "json", "-q", cwd=tree))["summary"]["backend"]
    assert {p["value"] for p in pins["pins"]} == {"jax", "torch"}


# 2. catastrophic backtracking in .gitignore
@pytest.mark.parametrize("command", [("scan", "."), ("check",), ("apply", "--diff", ".")])
def test_a_gitignore_line_with_many_wildcards_matches_in_linear_time(tree: Path, command) -> None:
    (tree / ".gitignore").write_text("a/" + "**/" * 12 + "b\n" + "*x" * 14 + "y\n")
    deep = tree.joinpath("a", *["d"] * 24)
    deep.mkdir(parents=True)
    (deep / ("x" * 60 + ".py")).write_text(LEGACY)
    (deep / "c.py").write_text(LEGACY)
    (tree / "a" / "d" / "b").mkdir()
    (tree / "a" / "d" / "b" / "gone.py").write_text(LEGACY)
    args = [*command, *(["-q"] if command[0] != "apply" else [])]
    if command[0] == "check":
        args += [str(p.relative_to(tree)) for p in (deep / "c.py", tree / "model.py")]
    started = time.monotonic()
    result = kmigrate(*args, cwd=tree, timeout=60)
    assert time.monotonic() - started < 30
    no_traceback(result)
    if command[0] == "scan":
        out = kmigrate("scan", ".", "-f", "json", "-q", cwd=tree, timeout=60)
        paths = {f["path"] for f in report(out)["files"]}
        assert "model.py" in paths and f"{deep.relative_to(tree).as_posix()}/c.py" in paths
        assert "a/d/b/gone.py" not in paths


def test_the_linear_matcher_agrees_with_the_regex_translation() -> None:
    """Differential: every short glob over a/b wildcards, on every short path."""
    import itertools
    import re

    from kmigrate.project.discover import _bracket, _glob_to_regex
    from kmigrate.project.glob_match import LinearGlob, tokenize

    pieces = ["a", "/", "*", "**/", "**", "?", "[ab]", "[!a]"]
    paths = ["".join(p) for n in range(6) for p in itertools.product("ab/", repeat=n)]
    for size in (1, 2, 3):
        for parts in itertools.product(pieces, repeat=size):
            pattern = "".join(parts)
            for anchored in (True, False):
                body = _glob_to_regex(pattern)
                regex = re.compile(f"^{body}$" if anchored else f"^(?:.*/)?{body}$")
                glob = LinearGlob(tokenize(pattern, _bracket, unanchored=not anchored))
                for path in paths:
                    assert glob.matches(path) == bool(regex.match(path)), (pattern, path)


# 3. file names that are not UTF-8
FORMATS = ("table", "json", "sarif", "markdown", "html", "github", "gitlab")


MANUAL_WORK = (
    "import tensorflow as tf\n\n\nclass L(tf.keras.layers.Layer):\n"
    "    def call(self, x):\n        return tf.py_function(abs, [x], tf.float32)\n"
)


def test_a_file_name_that_is_not_utf8_is_reported_escaped_by_every_command(tmp_path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    bad = os.fsdecode(b"bad_\xff.py")
    (root / bad).write_text(LEGACY)
    # manual work, so that the Markdown report (manual findings only) lists a bad name too
    (root / os.fsdecode(b"manual_\xfd.py")).write_text(MANUAL_WORK)
    (root / os.fsdecode(b"layer_\xfe.py")).write_text(LAYER)
    committed(root)
    for fmt in FORMATS:
        result = kmigrate("scan", ".", "-f", fmt, "-q", cwd=root)
        assert result.returncode == 0, (fmt, result.stderr)
        shown = b"manual_%5Cxfd.py" if fmt == "sarif" else b"manual_\\xfd.py"
        assert shown in result.stdout.replace(b"\\\\", b"\\"), fmt
    result = kmigrate("check", "--fail-on", "info", bad, cwd=root)
    no_traceback(result)
    assert result.returncode == 1 and b"bad_\\xff.py:3:5: KM201" in result.stdout
    assert kmigrate("baseline", ".", cwd=root).returncode == 0
    assert (
        kmigrate("check", "--fail-on", "info", bad, cwd=root).returncode == 0
    )  # baselined: nothing new
    patch = kmigrate("apply", "--diff", ".", cwd=root)
    assert patch.returncode == 0 and b'+++ "b/layer_\\376.py"' in patch.stdout
    subprocess.run(["git", "apply", "--check", "-"], cwd=root, input=patch.stdout, check=True)
    result = kmigrate("apply", ".", cwd=root)
    assert result.returncode == 0, result.stderr
    assert b"import keras" in (root / os.fsdecode(b"layer_\xfe.py")).read_bytes()


# 8. configuration that is no configuration, and very deep trees
@pytest.mark.parametrize(
    "content, message",
    [
        (b"tool = 1\n", None),
        (b"a = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", b"nested too deeply"),
        (b'[tool.kmigrate]\nselect = ["\xff"]\n', b"not UTF-8"),
        (b"[tool.kmigrate\n", b"cannot read"),
    ],
)
def test_a_broken_pyproject_is_a_usage_error_not_a_traceback(tree, content, message) -> None:
    (tree / "pyproject.toml").write_bytes(content)
    result = kmigrate("scan", ".", "-q", cwd=tree)
    no_traceback(result)
    assert result.returncode == (0 if message is None else 2)
    assert message is None or message in result.stderr


def test_a_tree_deeper_than_the_recursion_limit_is_walked(tmp_path: Path) -> None:
    """600 nested folders ended discovery with a RecursionError (two frames a level)."""
    root = tmp_path / "tree"
    deep = root.joinpath(*["d"] * 600)
    deep.mkdir(parents=True)
    (deep / "m.py").write_text(LEGACY)
    try:
        data = report(kmigrate("scan", ".", "-f", "json", "-q", cwd=root))
        assert [f["path"].count("/") for f in data["files"]] == [600]
    finally:  # shutil.rmtree recurses too: pytest could not clean it up
        subprocess.run(["rm", "-rf", str(root)], check=True)


# 4. the size limit holds before any parse, in the project index too
def _generated_module(size: int) -> str:
    row = "    (1234, 5.678, 'abcdefgh', [9, 10, 11], {'k': 12}),\n"
    return "import tensorflow as tf\n\nTABLE = [\n" + row * (size // len(row)) + "]\n"


@pytest.mark.parametrize(
    "command", [("scan", "."), ("check", "small.py"), ("apply", "--diff", ".")]
)
def test_no_file_above_the_size_limit_is_ever_parsed(tmp_path, monkeypatch, command) -> None:
    """A 12 MB generated module cost the index 2.5 GB and 25 s although the report
    said "not analysed". Here 300 kB with a 0.1 MB limit: any parse of it fails the test."""
    import ast

    from click.testing import CliRunner

    from kmigrate.cli.main import main

    root = tmp_path / "tree"
    root.mkdir()
    (root / "generated.py").write_text(_generated_module(300_000))
    (root / "small.py").write_text("from generated import TABLE\n" + LEGACY)
    monkeypatch.chdir(root)
    monkeypatch.setenv("KMIGRATE_MAX_FILE_MB", "0.1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    parse = ast.parse

    def small_only(source, *args, **kwargs):
        assert len(source) < 100_000, "a file above the size limit was parsed"
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", small_only)
    result = CliRunner().invoke(main, [*command, "-j", "1"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    if command[0] == "scan":
        assert "generated.py" in result.output and "0.1 MB limit" in result.output


# 5. a named path that resolves outside the repository it sits in
@pytest.mark.parametrize("named", ["src/", "src/model.py", "linked.py"])
def test_apply_refuses_a_named_path_leading_out_of_its_repository(tmp_path, named) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "model.py").write_text(LAYER)
    root = tmp_path / "tree"
    root.mkdir()
    (root / "own.py").write_text(LAYER)
    (root / "src").symlink_to("../outside")
    (root / "linked.py").symlink_to("../outside/model.py")
    committed(root)
    result = kmigrate("apply", named, cwd=root)
    no_traceback(result)
    assert result.returncode == 2, result.stderr
    assert b"outside the repository it sits in" in result.stderr
    assert b"--follow-outside" in result.stderr
    assert (outside / "model.py").read_text() == LAYER
    assert kmigrate("apply", ".", cwd=root).returncode == 0  # `.` skips the link
    assert (outside / "model.py").read_text() == LAYER
    assert b"import keras" in (root / "own.py").read_bytes()
    result = kmigrate("apply", "--follow-outside", named, cwd=root)  # the user says so
    assert result.returncode == 0, result.stderr
    assert "import keras" in (outside / "model.py").read_text()


def test_apply_help_documents_follow_outside(tree: Path) -> None:
    assert b"--follow-outside" in kmigrate("apply", "--help", cwd=tree).stdout


# 7. malformed notebooks are KM901 each; the rest of the run goes on
CODE_CELL = {
    "cell_type": "code",
    "metadata": {},
    "source": ["import tensorflow as tf\n", "x = tf.keras.layers.Dense(3)\n"],
    "outputs": [],
    "execution_count": None,
}
MALFORMED_CELLS = {
    "int_cell.ipynb": [1, CODE_CELL],
    "list_cell.ipynb": [CODE_CELL, ["x"]],
    "string_cell.ipynb": [CODE_CELL, "cell"],
    "number_source.ipynb": [CODE_CELL, {"cell_type": "code", "source": 5, "metadata": {}}],
    "mixed_source.ipynb": [CODE_CELL, {"cell_type": "code", "source": ["a", 1]}],
    "cells_not_a_list.ipynb": {"0": CODE_CELL},
}


def test_a_malformed_notebook_is_km901_and_the_other_files_are_written(tree: Path) -> None:
    (tree / "layer.py").write_text(LAYER)
    for name, cells in MALFORMED_CELLS.items():
        notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        (tree / name).write_text(json.dumps(notebook, indent=1))
    before = {name: (tree / name).read_bytes() for name in MALFORMED_CELLS}
    data = report(kmigrate("scan", ".", "-f", "json", "-q", cwd=tree))
    unusable = {f["path"] for f in data["findings"] if f["rule"] == "KM901"}
    assert unusable == set(MALFORMED_CELLS)
    result = kmigrate("apply", ".", cwd=tree)
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert b"import keras" in (tree / "layer.py").read_bytes()
    assert {name: (tree / name).read_bytes() for name in MALFORMED_CELLS} == before


# 9. a link anywhere in the cache chain
@pytest.mark.parametrize("link", [".index", ".rules"])
def test_a_linked_cache_folder_gets_nothing_created_in_its_target(tmp_path, link) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "model.py").write_text(LEGACY)
    (root / "helper.py").write_text("def helper():\n    return 1\n")
    target = tmp_path / "target"
    target.mkdir()
    (root / ".kmigrate_cache").mkdir()
    (root / ".kmigrate_cache" / link).symlink_to(target)
    for _ in range(2):  # cold, then warm
        assert kmigrate("scan", ".", "-q", cwd=root).returncode == 0
    assert list(target.iterdir()) == []
    assert (root / ".kmigrate_cache" / link).is_symlink()


# 14. Ctrl-C while the project is indexed
INTERRUPT_WHILE_INDEXING = """
import os, signal, sys

import kmigrate.project.index_entries as index_entries
from kmigrate.cli.main import main

original = index_entries.entry_for_bytes
calls = []


def interrupted(data):
    # a real SIGINT, sent by the process to itself in the middle of the index: no race
    calls.append(data)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGINT)
    return original(data)


index_entries.entry_for_bytes = interrupted
sys.argv[0] = "kmigrate"
main()
"""


@pytest.mark.parametrize("command", [("scan", "."), ("apply", "."), ("check",)])
def test_ctrl_c_while_indexing_exits_130(tmp_path: Path, command) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    for number in range(12):  # modules without TensorFlow: the index parses them itself
        (root / f"plain_{number}.py").write_text(f"def f{number}():\n    return {number}\n")
        (root / f"model_{number}.py").write_text(f"from plain_{number} import f{number}\n{LEGACY}")
    script = tmp_path / "interrupting.py"
    script.write_text(INTERRUPT_WHILE_INDEXING)
    environment = dict(os.environ, HOME=str(tmp_path / "home"))
    environment["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")
    result = subprocess.run(
        [sys.executable, str(script), *command, "--no-cache", "-j", "1"],
        cwd=root,
        capture_output=True,
        timeout=120,
        env=environment,
    )
    assert result.returncode == 130, result.stderr
    assert b"Aborted!" not in result.stderr and b"Traceback" not in result.stderr
    assert result.stderr.strip().endswith(b"kmigrate: interrupted")
    assert (root / "model_0.py").read_text().endswith(LEGACY)  # nothing written


# 15. reports and baselines are written atomically
def _findings_tree(root: Path, count: int) -> None:
    root.mkdir()
    for number in range(count):
        (root / f"model_{number}.py").write_text(LEGACY)


def _limited(*args: str, cwd: Path, limit: int):
    """kmigrate with files capped at ``limit`` bytes (RLIMIT_FSIZE): a write past it fails
    with EFBIG as a full disk fails with ENOSPC (Python ignores SIGXFSZ)."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    environment = dict(os.environ, HOME=str(cwd.parent / "home"))
    environment["XDG_CACHE_HOME"] = str(cwd.parent / "user-cache")
    return subprocess.run(
        [sys.executable, "-m", "kmigrate", *args, "--no-cache"],
        cwd=cwd,
        capture_output=True,
        timeout=60,
        env=environment,
        preexec_fn=cap,
    )


def _leftovers(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if p.name.endswith(".kmigrate")]


@pytest.mark.parametrize("old", [None, "the old report\n"])
def test_scan_output_on_a_full_disk_keeps_the_old_report(tmp_path: Path, old) -> None:
    root = tmp_path / "tree"
    _findings_tree(root, 30)
    if old is not None:
        (root / "report.json").write_text(old)
    result = _limited("scan", ".", "-f", "json", "-o", "report.json", cwd=root, limit=4096)
    no_traceback(result)
    assert result.returncode == 2, result.stderr
    assert b"cannot write report.json" in result.stderr
    if old is None:
        assert not (root / "report.json").exists()
    else:
        assert (root / "report.json").read_text() == old
    assert _leftovers(root) == []


@pytest.mark.parametrize("existing", [False, True])
def test_a_baseline_on_a_full_disk_keeps_the_old_one(tmp_path: Path, existing) -> None:
    root = tmp_path / "tree"
    _findings_tree(root, 2)
    baseline = root / ".kmigrate-baseline.json"
    if existing:
        assert kmigrate("baseline", ".", cwd=root).returncode == 0
        old = baseline.read_bytes()
    for number in range(2, 40):
        (root / f"model_{number}.py").write_text(LEGACY)
    result = _limited("baseline", ".", cwd=root, limit=len(old) + 1 if existing else 1024)
    no_traceback(result)
    assert result.returncode == 2, result.stderr
    assert b"cannot write baseline" in result.stderr
    if existing:
        assert baseline.read_bytes() == old
        assert kmigrate("check", "model_0.py", cwd=root).returncode == 0  # still a baseline
    else:
        assert not baseline.exists()
    assert _leftovers(root) == []


# 16. apply --parity runs the repository's code: said where the user decides
def test_apply_parity_says_it_runs_the_repositorys_code(tree: Path) -> None:
    help_text = b" ".join(kmigrate("apply", "--help", cwd=tree).stdout.split())
    assert b"It runs the repository's own code" in help_text
    result = kmigrate("apply", "--parity", ".", cwd=tree)  # no factory here: nothing runs
    first = result.stderr.decode().splitlines()[0]
    assert first.startswith("kmigrate: --parity will run this repository's own code"), first
