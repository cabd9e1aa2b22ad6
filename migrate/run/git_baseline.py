"""``check --baseline-ref REF``: findings that already exist at a git ref are not new.

Each checked file is scanned a second time as it was at REF (``git cat-file
--batch``, one process for all files), under its current path, so fingerprints
compare directly. A file that did not exist at REF counts as empty: all its
findings are new. A file renamed since REF (git's rename detection between REF and
the index) is compared with its old content, so moving a legacy file does not turn
its old findings into new ones.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from kmigrate.engine.run_data import Job
from kmigrate.project.gitstate import GIT_SAFETY
from kmigrate.run.runner import run_jobs


class GitError(Exception):
    """git is missing, the folder is not in a repository, or REF does not exist."""


def _git(args: Sequence[str], cwd: Path, data: bytes | None = None) -> bytes:
    try:
        completed = subprocess.run(
            ["git", *GIT_SAFETY, *args], cwd=cwd, input=data, capture_output=True, check=False
        )
    except OSError as error:
        raise GitError(f"cannot run git: {error}") from None
    if completed.returncode != 0:
        message = completed.stderr.decode(errors="replace").strip()
        raise GitError(f"git {' '.join(args)}: {message or f'exit {completed.returncode}'}")
    return completed.stdout


def resolve_commit(ref: str, cwd: Path) -> tuple[Path, str | None]:
    """The repository's top folder and the commit id ``ref`` names.

    ``None`` for ``HEAD`` in a repository without commits yet: nothing existed.
    Raises GitError for a ``ref`` git could read as an option (``-x``,
    ``--output=FILE``) or that holds a control character, before git sees it.
    """
    check_ref(ref)
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).decode().strip()).resolve()
    try:
        commit = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    except GitError:
        if ref == "HEAD" and not _git(["rev-list", "-n", "1", "--all"], top).strip():
            return top, None
        raise GitError(f"{ref!r} is not a commit in {top}") from None
    return top, commit.decode().strip()


def check_ref(ref: str) -> None:
    """Refuse what cannot be a revision but could change what git does: a value from
    the command line or a CI variable that starts with ``-`` would be an option."""
    if not ref or ref.startswith("-") or any(ord(char) < 32 for char in ref):
        raise GitError(f"{ref!r} is not a git revision (a revision never starts with '-')")


def renamed_since(commit: str, top: Path) -> dict[str, str]:
    """Current path -> path at ``commit`` for files git sees as renamed (staged)."""
    out = _git(["diff", "--cached", "-M", "--name-status", "-z", commit, "--"], top)
    fields = out.split(b"\0")
    renames: dict[str, str] = {}
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i].decode()
        if status.startswith(("R", "C")):
            old, new = fields[i + 1].decode(), fields[i + 2].decode()
            if status.startswith("R"):
                renames[new] = old
            i += 3
        else:
            i += 2
    return renames


def read_blobs(commit: str, paths: Sequence[str], top: Path) -> dict[str, bytes]:
    """Contents at ``commit`` of the repository-relative ``paths`` that exist there.

    ``cat-file --batch`` reads one request per line, so a path with a line break would
    be two requests and shift every answer after it onto the wrong file: such paths
    are left out (counted as new files, all their findings new).
    """
    paths = [p for p in paths if "\n" not in p and "\r" not in p]
    if not paths:
        return {}
    request = "".join(f"{commit}:{p}\n" for p in paths).encode()
    out = _git(["cat-file", "--batch"], top, request)
    blobs: dict[str, bytes] = {}
    position = 0
    for path in paths:
        end = out.index(b"\n", position)
        header = out[position:end].split()
        position = end + 1
        if len(header) == 3 and header[1] in (b"blob", b"tree", b"commit", b"tag"):
            size = int(header[2])
            if header[1] == b"blob":
                blobs[path] = out[position : position + size]
            position += size + 1  # content and its trailing newline
    return blobs


def _repo_relative(path: str, top: Path) -> str | None:
    try:
        return PurePosixPath(Path(path).resolve().relative_to(top)).as_posix()
    except ValueError:
        return None  # outside the repository: nothing existed at REF


def findings_at_ref(
    ref: str, jobs: Sequence[Job], rule_ids: tuple[str, ...], workers: int, cwd: Path
) -> Counter[str]:
    """Fingerprint counts of the findings ``jobs``' files had at ``ref``."""
    top, commit = resolve_commit(ref, cwd)
    if commit is None:
        return Counter()
    renames = renamed_since(commit, top)
    where: dict[str, Job] = {}
    for job in jobs:
        relative = _repo_relative(job.path, top)
        if relative is not None:
            where[renames.get(relative, relative)] = job
    blobs = read_blobs(commit, sorted(where), top)
    known: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="kmigrate-ref-") as folder:
        old_jobs = []
        for index, (relative, data) in enumerate(sorted(blobs.items())):
            job = where[relative]
            copy = Path(folder) / str(index) / Path(relative).name
            copy.parent.mkdir()
            copy.write_bytes(data)
            # the project's facts about the file (its layers' bases elsewhere...): the
            # project as it is now, read over the file as it was
            old_jobs.append(
                Job(str(copy), job.display, job.package, job.ignored_codes, False, job.facts)
            )
        result = run_jobs(old_jobs, rule_ids, workers)
    known.update(f.fingerprint for f in result.findings)
    return known
