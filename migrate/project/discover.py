"""File discovery: the Python files (and notebooks) a run should look at.

Skips what is never the user's code (virtualenvs, site-packages, build output,
caches), honours ``.gitignore`` files and ``exclude`` globs, and never follows a
symlink out of the tree or around a loop.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".env",
        "env",
        "__pycache__",
        ".tox",
        ".nox",
        "node_modules",
        "site-packages",
        "dist-packages",
        "build",
        "dist",
        ".eggs",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ipynb_checkpoints",
        ".kmigrate_cache",
    }
)
SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class _Pattern:
    """One ``.gitignore`` line. Most are a name (``build``, ``.tox``) or a name's end
    (``*.so``), matched at any depth: those are compared as text, which costs nothing
    to set up; the others are regular expressions (compiling the sixty lines of the
    usual Python template as expressions took 3 ms of every run)."""

    regex: re.Pattern[str] | None  # None: ``text`` says what matches
    negated: bool
    dir_only: bool
    text: str = ""  # the last part of the path, or its end when ``suffix``
    suffix: bool = False

    def matches(self, relative: str) -> bool:
        if self.regex is not None:
            return self.regex.match(relative) is not None
        name = relative.rpartition("/")[2]
        return name.endswith(self.text) if self.suffix else name == self.text


_GLOB_CHARS = frozenset("*?[\\")


def _plain(text: str) -> bool:
    return not _GLOB_CHARS.intersection(text)


def _glob_to_regex(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 2)  # a "]" right after "[" (or "[!") is a member
            if end == -1:
                out.append(re.escape(char))
            else:
                out.append(_bracket(pattern[i + 1 : end]))
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _bracket(members: str) -> str:
    """A glob bracket expression (``[abc]``, ``[a-z]``, ``[!0-9]``) as a regex class.
    Only ``-`` keeps its meaning: the text comes from the scanned tree's .gitignore,
    and must never become regex syntax."""
    negate = members[:1] in ("!", "^")
    if negate:
        members = members[1:]
    body = "".join(c if c == "-" else re.escape(c) for c in members)
    return f"[^/{body}]" if negate else f"[{body}]"


def parse_gitignore(text: str) -> list[_Pattern]:
    """Patterns of one ``.gitignore`` (relative to its folder)."""
    patterns = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        line = line.lstrip("/")
        if not anchored and line and _plain(line):
            patterns.append(_Pattern(None, negated, dir_only, line))
            continue
        if not anchored and line.startswith("*") and _plain(line[1:]):
            patterns.append(_Pattern(None, negated, dir_only, line[1:], suffix=True))
            continue
        body = _glob_to_regex(line)
        regex = f"^{body}$" if anchored else f"^(?:.*/)?{body}$"
        try:
            patterns.append(_Pattern(re.compile(regex), negated, dir_only))
        except re.error:  # a range such as [z-a]: git ignores the line, so do we
            continue
    return patterns


def _ignored(patterns: list[tuple[Path, list[_Pattern]]], path: Path, is_dir: bool) -> bool:
    ignored = False
    for base, rules in patterns:
        try:
            relative = path.relative_to(base).as_posix()
        except ValueError:
            continue
        for rule in rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.matches(relative):
                ignored = not rule.negated
    return ignored


def _matches_any(relative: str, globs: Iterable[str]) -> bool:
    return any(
        fnmatch.fnmatch(relative, g)
        or fnmatch.fnmatch(relative, g.rstrip("/") + "/*")
        or relative.startswith(g.rstrip("/*") + "/")
        for g in globs
    )


def _is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()


def discover(paths: Iterable[Path], root: Path, exclude: Iterable[str] = ()) -> Iterator[Path]:
    """Source files under ``paths`` in a stable order. Files named explicitly are
    always yielded (pre-commit passes exactly the files it wants checked)."""
    exclude = list(exclude)
    root = root.resolve()
    seen: set[Path] = set()
    for start in paths:
        if start.is_file() or (start.is_symlink() and not start.is_dir()):
            resolved = _resolve(start) or start.absolute()  # a broken link: reported when read
            if resolved not in seen:
                seen.add(resolved)
                yield start
            continue
        yield from _walk(start, root, exclude, seen)


def _resolve(path: Path) -> Path | None:
    """The real path, or None for a symlink loop (``RuntimeError`` on Python < 3.13)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _read_gitignore(path: Path) -> list[_Pattern]:
    try:
        return parse_gitignore(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:  # unreadable: as if absent
        return []


def _walk(start: Path, root: Path, exclude: list[str], seen: set[Path]) -> Iterator[Path]:
    top = start.resolve()
    gitignores: list[tuple[Path, list[_Pattern]]] = []
    for parent in [*reversed(top.parents), top]:
        if parent == root or root in parent.parents or parent == top:
            ignore_file = parent / ".gitignore"
            if ignore_file.is_file():
                gitignores.append((parent, _read_gitignore(ignore_file)))
    visited_dirs: set[Path] = set()
    # Symlinked entries wait until every real file and folder was seen, so a file
    # reached both directly and through a link is reported under its real path.
    deferred: list[tuple[os.DirEntry, list]] = []

    def walk(folder: Path, depth_patterns: list, real: Path) -> Iterator[Path]:
        """The files under ``folder``, whose real path is ``real``."""
        if real in visited_dirs or (real != top and top not in real.parents):
            return  # a symlink loop or a link out of the tree
        visited_dirs.add(real)
        local = list(depth_patterns)
        ignore_file = folder / ".gitignore"
        if folder != start and ignore_file.is_file():
            local.append((real, _read_gitignore(ignore_file)))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.is_symlink():
                deferred.append((entry, local))
                continue
            yield from visit(entry, local, real)

    def excluded(real_path: Path) -> bool:
        return bool(exclude) and _matches_any(_relative(real_path, root), exclude)

    def visit(entry: os.DirEntry, local: list, real_folder: Path | None = None) -> Iterator[Path]:
        """``real_folder``: the real path of the entry's folder, given when the entry is
        not a symlink; the entry's real path is then that folder and its name, with no
        ``resolve`` (a system call per path component) for each file of the tree."""
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError:
            return  # a symlink loop, an unreadable entry
        if not is_dir and not (is_file and entry.name.endswith(SOURCE_SUFFIXES)):
            return  # not a source file (a FIFO, a broken link ...)
        path = Path(entry.path)
        real_path = real_folder / entry.name if real_folder is not None else _resolve(path)
        if real_path is None:
            return  # a symlink loop
        if is_dir:
            if (
                entry.name in SKIPPED_DIRS
                or entry.name.endswith(".egg-info")
                or _is_virtualenv(path)
            ):
                return
            if _ignored(local, real_path, True) or excluded(real_path):
                return
            yield from walk(path, local, real_path)
        else:
            # Only a link can lead out of the tree: other entries lie in a folder inside it.
            if real_folder is None and real_path != top and top not in real_path.parents:
                return  # a file link out of the tree
            if _ignored(local, real_path, False) or excluded(real_path):
                return
            if real_path in seen:
                return
            seen.add(real_path)
            yield path

    yield from walk(start, gitignores, top)
    while deferred:
        entry, local = deferred.pop(0)
        yield from visit(entry, local)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def display_path(path: Path, root: Path) -> str:
    """The path as reports show it: relative to the project root when inside it."""
    resolved = path.absolute()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        try:
            return Path(os.path.relpath(resolved, Path.cwd())).as_posix()
        except ValueError:
            return path.as_posix()
