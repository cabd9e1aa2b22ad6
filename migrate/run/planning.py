"""Paths become jobs: discovery, display paths, shards, the number of workers."""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kmigrate.engine.run_data import Job, package_of
from kmigrate.project.discover import discover, display_path, printable_name

if TYPE_CHECKING:
    from kmigrate.project.config import Config

Progress = Callable[[int], None]


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4): shard K of N, 1 <= K <= N. Raises ValueError otherwise."""
    k_text, sep, n_text = text.partition("/")
    if not sep:
        raise ValueError(f"--shard takes K/N (like 2/4), not {text!r}")
    k, n = int(k_text), int(n_text)
    if not 1 <= k <= n:
        raise ValueError(f"--shard {text}: K must be between 1 and N")
    return k, n


def in_shard(display: str, shard: tuple[int, int] | None) -> bool:
    """Whether the file reported as ``display`` belongs to shard K of N.

    A stable hash of the relative path (not Python's salted ``hash``), so every
    machine of a CI matrix agrees and a file stays in its shard as others come and go.
    """
    if shard is None or shard[1] == 1:
        return True
    k, n = shard
    digest = hashlib.blake2b(display.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % n == k - 1


def plan_jobs(
    paths: Sequence[Path],
    config: Config,
    fix: bool = False,
    shard: tuple[int, int] | None = None,
    index: bool = True,
    index_cache: bool = True,
    workers: int = 1,
) -> list[Job]:
    """One job per discovered file (only shard K of N's files when ``shard`` is given),
    each with what the project index decided about it (``index``; its entries cached
    under the project's cache folder unless ``index_cache`` is off)."""
    jobs = []
    layout = None
    if fix:
        from kmigrate.project.import_settings import import_layout

        layout = import_layout(config.root)
    walked = []  # every file found, also outside the shard: the index may reuse the walk
    packages: dict[Path, str] = {}
    folders: dict[Path, str] = {}
    for path in discover(paths, config.root, config.exclude):
        walked.append(path)
        display = _display_path(path, config.root, folders)
        if not in_shard(display, shard):
            continue
        jobs.append(
            Job(
                str(path),
                display,
                package_of(path, packages),
                _ignored_codes(display, config),
                fix,
                import_layout=layout,
            )
        )
    if index and jobs:
        from kmigrate.project.index_pass import attach_facts

        jobs = attach_facts(jobs, paths, config, index_cache, workers, walked)
    return jobs


def filter_jobs(jobs: Sequence[Job], keep: Callable[[Job], bool]) -> Sequence[Job]:
    """The jobs ``keep`` accepts, still attached to their pending project index (a
    plain list comprehension would drop it, and deferred jobs would lose their facts)."""
    kept = [job for job in jobs if keep(job)]
    pending = getattr(jobs, "pending", None)
    if pending is None:
        return kept
    from kmigrate.project.pending_project import PlannedJobs

    planned = PlannedJobs(kept)
    planned.pending = pending
    return planned


def _display_path(path: Path, root: Path, folders: dict[Path, str]) -> str:
    """:func:`display_path`, working each folder out once (``folders`` remembers them):
    a file is shown as its folder is, with its name appended."""
    folder = folders.get(path.parent)
    if folder is None:
        shown = display_path(path.parent, root)
        folder = folders[path.parent] = "" if shown == "." else shown.rstrip("/") + "/"
    return folder + printable_name(path.name)


def default_jobs() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def _ignored_codes(display: str, config: Config) -> tuple[str, ...]:
    codes: list[str] = []
    for pattern, ids in config.per_file_ignores.items():
        if fnmatch.fnmatch(display, pattern):
            codes.extend(i.upper() for i in ids)
    return tuple(codes)
