"""Paths named on the command line that lead out of the repository they sit in.

``apply .`` never follows a link out of the tree, but a path the user names is taken as
named: a repository that commits ``src -> ../../elsewhere`` would have ``apply src/``
rewrite files outside every work tree (no uncommitted-changes check can see them, and
git cannot restore them). So before ``apply`` writes, each named path is resolved and
compared with the repository it sits in, found from the path as written (its folders
before any link is followed). One that leaves it is refused unless the user says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# what marks the top of the repository a path sits in: git's work tree first, else the
# project's own pyproject.toml (a tree without either has no inside to leave)
_REPOSITORY_MARKERS = (".git", "pyproject.toml")


@dataclass(frozen=True)
class LeavingPath:
    """A named path, where it really leads, and the repository it was named in."""

    named: Path
    target: Path
    repository: Path


def repository_of(path: Path) -> Path | None:
    """The folder holding the nearest ``.git`` (else ``pyproject.toml``) above ``path``
    as written: links in ``path`` itself are not followed, so a linked folder belongs
    to the repository that holds the link."""
    spelled = Path(os.path.abspath(path))
    above = list(spelled.parents)
    for marker in _REPOSITORY_MARKERS:
        for folder in above:
            if os.path.lexists(folder / marker):
                return folder
    return None


def leaving_paths(paths: Iterable[Path]) -> list[LeavingPath]:
    """The named paths whose real path lies outside the real path of the repository
    they are named in (see :func:`repository_of`)."""
    leaving = []
    for path in paths:
        repository = repository_of(path)
        if repository is None:
            continue
        target = Path(os.path.realpath(path))
        top = Path(os.path.realpath(repository))
        if target != top and top not in target.parents:
            leaving.append(LeavingPath(Path(path), target, top))
    return leaving
