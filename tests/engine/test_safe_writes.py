"""Writes: atomic, mode/owner/links kept, read-only and dirty files refused, Ctrl-C safe,
and a rewrite that does not re-scan cleanly never replaces the file."""

from __future__ import annotations

import ast
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kmigrate.engine import sources
from kmigrate.engine.model import EditPlan, ReplaceNode
from kmigrate.engine.sources import WriteRefusedError, deferred_signals, write_atomic
from kmigrate.rules.base import Report, Rule
from tests.cli.test_hostile_inputs import run  # the CLI in a subprocess

LEGACY = "import tensorflow as tf\n\nx = tf.keras.layers.Dense(3)\n"


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(sources.TEMP_SUFFIX)]


# -- write_atomic ----------------------------------------------------------------


def test_write_atomic_keeps_mode_and_writes_through_links(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_bytes(b"old\r\n")
    target.chmod(0o751)
    link = tmp_path / "link.py"
    link.symlink_to("real.py")
    write_atomic(link, b"new\r\n")
    assert link.is_symlink() and target.read_bytes() == b"new\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert not leftovers(tmp_path)


def test_read_only_and_hard_linked_files_are_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked.py"
    locked.write_bytes(b"old")
    locked.chmod(0o444)  # refused even for root, whom os.access always lets write
    with pytest.raises(WriteRefusedError, match="read-only"):
        write_atomic(locked, b"new")
    assert locked.read_bytes() == b"old"
    twin = tmp_path / "twin.py"
    shared = tmp_path / "shared.py"
    shared.write_bytes(b"old")
    os.link(shared, twin)
    with pytest.raises(WriteRefusedError, match="hard links"):
        write_atomic(shared, b"new")
    assert twin.read_bytes() == b"old" and not leftovers(tmp_path)


def test_a_report_into_a_pipe_keeps_the_pipe_and_a_rewrite_refuses_it(tmp_path: Path) -> None:
    """``scan -o /dev/null`` as root once replaced the device with a regular file (the
    atomic rename lands on the device's name): a device or a pipe is written into as it
    is, and a source rewrite refuses it."""
    import threading

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    sources.write_whole(pipe, b"report")
    reader.join(timeout=10)
    assert received == [b"report"]
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    assert leftovers(tmp_path) == []
    with pytest.raises(WriteRefusedError, match="not a regular file"):
        write_atomic(pipe, b"x = 1\n")
    assert stat.S_ISFIFO(pipe.stat().st_mode)


def test_interrupted_replace_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"old")

    def interrupted(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(sources.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, b"new")
    assert path.read_bytes() == b"old" and not leftovers(tmp_path)


def test_sigint_during_a_write_waits_until_the_file_is_complete(tmp_path, monkeypatch) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"old")
    real_fsync = os.fsync

    def fsync_then_ctrl_c(fd):
        real_fsync(fd)
        os.kill(os.getpid(), signal.SIGINT)  # arrives between write and replace
        time.sleep(0.01)

    monkeypatch.setattr(sources.os, "fsync", fsync_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, b"new")
    assert path.read_bytes() == b"new" and not leftovers(tmp_path)


def test_deferred_signals_restores_the_handlers() -> None:
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
            reached = True
    assert reached and signal.getsignal(signal.SIGINT) is before


# -- apply: many files, Ctrl-C ----------------------------------------------------


def layer_module(number: int) -> str:
    return (
        "import tensorflow as tf\n\n\n"
        f"class Block{number}(tf.keras.layers.Layer):\n"
        "    def call(self, x):\n"
        "        return tf.keras.activations.relu(x)\n"
    )


# `kmigrate apply` whose process receives SIGINT while its third file is being written:
# a real signal, sent at a chosen moment rather than raced from outside.
_CTRL_C_AT_THIRD_WRITE = """
import os, signal, sys
from kmigrate.engine import sources
from kmigrate.cli.main import main

real_write = sources.write_atomic
calls = []

def write_then_ctrl_c(path, data):
    calls.append(path)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGINT)  # lands while the write is under way
    real_write(path, data)

sources.write_atomic = write_then_ctrl_c
main(sys.argv[1:])
"""


def test_sigint_mid_apply_leaves_every_file_old_or_new(tmp_path: Path) -> None:
    count = 40
    originals = {f"m{i:04d}.py": layer_module(i).encode() for i in range(count)}
    expected_dir = tmp_path / "expected"
    work = tmp_path / "work"
    for folder in (expected_dir, work):
        folder.mkdir()
        for name, data in originals.items():
            (folder / name).write_bytes(data)
    done = run("apply", ".", "--jobs", "2", "--no-cache", "-q", cwd=expected_dir)
    assert done.returncode == 0, done.stderr
    rewritten = {name: (expected_dir / name).read_bytes() for name in originals}
    assert all(rewritten[n] != originals[n] for n in originals)

    process = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AT_THIRD_WRITE, "apply", ".", "--jobs", "2", "--no-cache"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert process.returncode == 130, process.stderr
    assert "Traceback" not in process.stderr
    assert f"interrupted after writing 3 of {count} file(s)" in process.stderr
    states = {}
    for name, data in originals.items():
        now = (work / name).read_bytes()
        assert now in (data, rewritten[name]), f"{name} is neither old nor new"
        states[name] = "new" if now == rewritten[name] else "old"
    # Files are written in path order; the one being written when Ctrl-C came is finished.
    assert [n for n, state in sorted(states.items()) if state == "new"] == sorted(originals)[:3]
    assert not leftovers(work)


# -- apply: uncommitted changes ---------------------------------------------------


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git("init", "-q", cwd=folder)
    git("config", "user.email", "t@example.com", cwd=folder)
    git("config", "user.name", "t", cwd=folder)
    for name in ("clean.py", "modified.py", "staged.py"):
        (folder / name).write_text(LEGACY)
    git("add", ".", cwd=folder)
    git("commit", "-qm", "legacy", cwd=folder)
    with open(folder / "modified.py", "a") as handle:
        handle.write("y = 1\n")
    with open(folder / "staged.py", "a") as handle:
        handle.write("z = 2\n")
    git("add", "staged.py", cwd=folder)
    (folder / "untracked.py").write_text(LEGACY)
    return folder


@pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0, reason="no git"
)
def test_apply_refuses_files_with_uncommitted_changes(repo: Path) -> None:
    before = {p.name: p.read_bytes() for p in repo.glob("*.py")}
    result = run("apply", ".", "--jobs", "1", "--no-cache", cwd=repo)
    assert result.returncode == 1, result.stderr
    assert "3 file(s) with uncommitted changes left untouched" in result.stderr
    assert "--allow-dirty" in result.stderr
    for name, state in (
        ("modified.py", "modified"),
        ("staged.py", "staged"),
        ("untracked.py", "untracked"),
    ):
        assert f"{name} ({state})" in result.stderr
        assert (repo / name).read_bytes() == before[name]
    assert (repo / "clean.py").read_bytes() != before["clean.py"]
    assert "rewrote 1 file(s)" in result.stderr
    again = run("apply", ".", "--jobs", "1", "--no-cache", "--allow-dirty", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert all((repo / n).read_bytes() != before[n] for n in before)


def test_apply_outside_git_does_not_ask(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(LEGACY)
    result = run("apply", ".", "--jobs", "1", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "keras.layers.Dense" in (tmp_path / "m.py").read_text()


def test_diff_mode_ignores_dirty_state(repo: Path) -> None:
    result = run("apply", ".", "--diff", "--jobs", "1", "--no-cache", cwd=repo)
    assert result.returncode == 0 and "+++ b/modified.py" in result.stdout


def test_a_file_changed_during_the_run_is_not_overwritten(tmp_path: Path, capsys) -> None:
    from kmigrate.cli.main import _write_changes
    from kmigrate.engine.run_data import FixResult

    path = tmp_path / "m.py"
    path.write_text("edited by the user meanwhile\n")

    class Settings:
        class config:  # noqa: N801 - mimics RunSettings.config
            root = tmp_path

    report = FixResult(path="m.py", old_text=LEGACY, new_text="import keras\n")
    assert _write_changes(Settings, [report]) == []
    assert "changed during the run; left untouched" in capsys.readouterr().err
    assert path.read_text() == "edited by the user meanwhile\n"


# -- the rewrite must re-scan cleanly before it replaces anything -------------------


class RenameFoo(Rule):
    id = "KM990"
    name = "test-rename-foo"
    call_symbols = frozenset({"tf.foo"})

    def check_call(self, site):
        yield Report(site, "rename", fix=EditPlan((ReplaceNode(site.span, self.replacement),)))

    replacement = "tf.bar()"


class CrashOnBar(Rule):
    id = "KM991"
    name = "test-crash-on-bar"
    call_symbols = frozenset({"tf.bar"})

    def check_call(self, site):
        raise ZeroDivisionError("boom")


def run_fix(tmp_path: Path, monkeypatch, text: bytes, *rule_classes):
    from kmigrate.engine.rule_walk import RuleSet
    from kmigrate.engine.run_data import Job
    from kmigrate.run import file_job

    path = tmp_path / "m.py"
    path.write_bytes(text)
    monkeypatch.setattr(file_job, "ruleset_for", lambda _ids: RuleSet(list(rule_classes)))
    return file_job.run_job(Job(str(path), "m.py", "", (), True), ())


def test_a_rewrite_that_makes_a_rule_crash_is_not_written(tmp_path, monkeypatch) -> None:
    report = run_fix(
        tmp_path, monkeypatch, b"import tensorflow as tf\ntf.foo()\n", RenameFoo, CrashOnBar
    )
    assert report.new_text is None
    assert "a rule crashed on the rewritten code (KM902)" in report.error
    assert "left untouched" in report.error
    assert [f.rule for f in report.findings] == ["KM990"]  # the findings of the file as it is


def test_a_rewrite_the_file_encoding_cannot_hold_is_not_written(tmp_path, monkeypatch) -> None:
    class EuroFoo(RenameFoo):
        replacement = "tf.bar('€')"

    text = "# -*- coding: latin-1 -*-\nimport tensorflow as tf\ntf.foo()  # café\n".encode(
        "latin-1"
    )
    report = run_fix(tmp_path, monkeypatch, text, EuroFoo)
    assert report.new_text is None and "cannot be written as iso-8859-1" in report.error


def test_a_clean_rewrite_is_handed_back(tmp_path, monkeypatch) -> None:
    report = run_fix(tmp_path, monkeypatch, b"import tensorflow as tf\r\ntf.foo()\r\n", RenameFoo)
    assert report.error is None
    assert report.new_text == "import tensorflow as tf\r\ntf.bar()\r\n"
    ast.parse(report.new_text)


def test_a_fix_that_leaves_its_finding_is_not_made_again_and_again(tmp_path, monkeypatch) -> None:
    """KM402 once inserted the same `os.makedirs` line in every round (its path edit was
    dropped, so the finding stayed): a fix whose finding survives every round is left
    out, the other fixes are made once, and the finding says why it was not fixed."""

    class StuckFoo(RenameFoo):
        replacement = "print(0) or tf.foo()"  # still calls tf.foo: the finding stays

    class RenameBaz(RenameFoo):
        id = "KM992"
        name = "test-rename-baz"
        call_symbols = frozenset({"tf.baz"})

    text = b"import tensorflow as tf\ntf.foo()\ntf.baz()\n"
    report = run_fix(tmp_path, monkeypatch, text, StuckFoo, RenameBaz)
    assert report.new_text == "import tensorflow as tf\ntf.foo()\ntf.bar()\n"
    assert report.fixed == 1
    stuck = [f for f in report.findings if f.rule == "KM990"]
    assert len(stuck) == 1 and not stuck[0].fixable
    assert "did not remove the finding" in stuck[0].message
