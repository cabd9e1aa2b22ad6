"""Which files have uncommitted changes, so ``apply`` never mixes its rewrite into them.

Like ``cargo fix``: a file with changes git does not have yet (modified, staged,
untracked, ignored, conflicted) is not rewritten unless ``--allow-dirty``; git is
the undo button, and it only works for committed content. Files outside any git
work tree, or on a machine without git, are not checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT = 60
CHUNK = 500  # paths per git call (command-line length)
# ``git status`` and ``git diff`` run the program a repository's own .git/config names
# as core.fsmonitor (a clone never carries one, an unpacked archive can); kmigrate's git
# calls never need it (docs/security.md).
GIT_SAFETY = ("-c", "core.fsmonitor=false")


@dataclass(frozen=True)
class DirtyFile:
    path: Path
    state: str  # modified, staged, untracked, ignored by git, conflicted, "unknown: <why>"


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"  # a status must not take the index lock
    env.pop("GIT_DIR", None)  # a hook's environment must not redirect us
    env.pop("GIT_WORK_TREE", None)
    return subprocess.run(
        ["git", *GIT_SAFETY, *args],
        cwd=cwd,
        capture_output=True,
        timeout=GIT_TIMEOUT,
        env=env,
        check=False,
    )


def work_tree(folder: Path) -> Path | None:
    """The top of the git work tree holding ``folder``; None when there is none.

    Raises OSError when git is there but cannot answer (so the caller does not
    silently skip the check).
    """
    try:
        done = _git(["rev-parse", "--show-toplevel"], folder)
    except subprocess.TimeoutExpired:
        raise OSError("git did not answer in time") from None
    if done.returncode == 0:
        return Path(os.fsdecode(done.stdout.rstrip(b"\n"))).resolve()
    message = os.fsdecode(done.stderr).strip()
    if "not a git repository" in message:
        return None
    raise OSError(message.splitlines()[0] if message else f"git exited {done.returncode}")


def _state(code: bytes) -> str:
    index, tree = chr(code[0]), chr(code[1])
    if "U" in (index, tree) or (index, tree) in (("A", "A"), ("D", "D")):
        return "conflicted"
    if index == "?":
        return "untracked"
    if index == "!":
        return "ignored by git"
    if tree != " ":
        return "modified"
    return "staged"


def dirty_files(paths: Iterable[Path]) -> list[DirtyFile]:
    """The files among ``paths`` with uncommitted changes, in the order given.

    Nothing when git is not installed or a file is outside every work tree; a file
    git cannot be asked about is listed with state ``unknown: <why>``.
    """
    paths = [Path(p) for p in paths]
    if not paths or shutil.which("git") is None:
        return []
    by_tree: dict[Path, list[tuple[Path, Path]]] = {}
    tops: dict[Path, Path | None] = {}
    dirty: dict[Path, str] = {}
    for path in paths:
        real = path.resolve()
        folder = real.parent
        try:
            if folder not in tops:
                tops[folder] = work_tree(folder)
        except (OSError, subprocess.SubprocessError) as error:
            dirty[path] = f"unknown: {error}"
            continue
        top = tops[folder]
        if top is not None:
            by_tree.setdefault(top, []).append((path, real))
    for top, members in by_tree.items():
        states = _status(top, [real for _, real in members])
        for path, real in members:
            if isinstance(states, str):
                dirty[path] = f"unknown: {states}"
            elif real in states:
                dirty[path] = states[real]
    return [DirtyFile(p, dirty[p]) for p in paths if p in dirty]


def _status(top: Path, files: list[Path]) -> dict[Path, str] | str:
    """Path -> state for the changed ones among ``files``; a string when git failed."""
    relative = [os.fsdecode(f.relative_to(top)) for f in files]
    output = b""
    for start in range(0, len(relative), CHUNK):
        try:
            done = _git(
                [
                    "--literal-pathspecs",
                    "status",
                    "--porcelain=v1",
                    "-z",
                    "--untracked-files=all",
                    "--ignored=matching",
                    "--",
                    *relative[start : start + CHUNK],
                ],
                top,
            )
        except (OSError, subprocess.SubprocessError) as error:
            return str(error)
        if done.returncode != 0:
            message = os.fsdecode(done.stderr).strip()
            return message.splitlines()[0] if message else f"git exited {done.returncode}"
        output += done.stdout
    states: dict[Path, str] = {}
    entries = output.split(b"\0")
    position = 0
    while position < len(entries):
        entry = entries[position]
        position += 1
        if len(entry) < 4:
            continue
        code, name = entry[:2], entry[3:]
        if code[:1] in (b"R", b"C"):
            position += 1  # the next entry is the rename's source
        states[(top / os.fsdecode(name)).resolve()] = _state(code)
    return states
