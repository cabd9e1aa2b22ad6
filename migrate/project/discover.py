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

from kmigrate.project.glob_match import LinearGlob, tokenize, wildcard_count
from kmigrate.project.tree_files import read_tree_file

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

    regex: re.Pattern[str] | None  # None: ``text`` or ``glob`` says what matches
    negated: bool
    dir_only: bool
    text: str = ""  # the last part of the path, or its end when ``suffix``
    suffix: bool = False
    glob: LinearGlob | None = None  # a line with more wildcards than a regex can take

    def matches(self, relative: str) -> bool:
        if self.regex is not None:
            return self.regex.match(relative) is not None
        if self.glob is not None:
            return self.glob.matches(relative)
        name = relative.rpartition("/")[2]
        return name.endswith(self.text) if self.suffix else name == self.text


_GLOB_CHARS = frozenset("*?[\\")
# A regex with this many unbounded wildcards backtracks at most quadratically in the
# path; more, and a hostile line takes exponential time (see glob_match).
_REGEX_WILDCARDS = 2


def _plain(text: str) -> bool:
    return not _GLOB_CHARS.intersection(text)


def _glob_to_regex(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            if not out or out[-1] != "(?:.*/)?":  # ``**/**/`` is ``**/``
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
            compiled = re.compile(regex)
        except re.error:  # a range such as [z-a]: git ignores the line, so do we
            continue
        tokens = tokenize(line, _bracket, unanchored=not anchored)
        if wildcard_count(tokens) > _REGEX_WILDCARDS:  # would backtrack: linear instead
            patterns.append(_Pattern(None, negated, dir_only, glob=LinearGlob(tokens)))
        else:
            patterns.append(_Pattern(compiled, negated, dir_only))
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


def _read_gitignore(path: Path, tree: tuple[Path, ...]) -> list[_Pattern]:
    """The patterns of a ``.gitignore`` that is a small regular file inside the ``tree``
    (its real folders); one that is not (unreadable, a FIFO, a link out of the tree) is
    as if absent."""
    data = read_tree_file(path, tree)
    return [] if data is None else parse_gitignore(data.decode("utf-8", errors="replace"))


def _walk(start: Path, root: Path, exclude: list[str], seen: set[Path]) -> Iterator[Path]:
    top = start.resolve()
    tree = (root, top)
    gitignores: list[tuple[Path, list[_Pattern]]] = []
    for parent in [*reversed(top.parents), top]:
        if parent == root or root in parent.parents or parent == top:
            ignore_file = parent / ".gitignore"
            if ignore_file.is_file():
                gitignores.append((parent, _read_gitignore(ignore_file, tree)))
    walker = _Walker(start, top, root, tree, exclude, seen)
    yield from walker.walk(start, gitignores, top)
    while walker.deferred:
        entry, local = walker.deferred.pop(0)
        found = walker.visit(entry, local)
        if isinstance(found, Path):
            yield found
        elif found is not None:
            yield from walker.walk(*found)


class _Walker:
    """One walk of a folder tree, depth first in name order, with an explicit stack
    (a tree 600 folders deep exceeded Python's recursion limit)."""

    def __init__(
        self,
        start: Path,
        top: Path,
        root: Path,
        tree: tuple[Path, ...],
        exclude: list[str],
        seen: set[Path],
    ) -> None:
        self.start, self.top, self.root, self.tree = start, top, root, tree
        self.exclude = exclude
        self.seen = seen
        self.visited_dirs: set[Path] = set()
        # Symlinked entries wait until every real file and folder was seen, so a file
        # reached both directly and through a link is reported under its real path.
        self.deferred: list[tuple[os.DirEntry, list]] = []

    def walk(self, folder: Path, patterns: list, real: Path) -> Iterator[Path]:
        """The files under ``folder``, whose real path is ``real``."""
        first = self._open(folder, patterns, real)
        stack = [first] if first is not None else []
        while stack:
            entries, local, real_folder = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                continue
            if entry.is_symlink():
                self.deferred.append((entry, local))
                continue
            found = self.visit(entry, local, real_folder)
            if isinstance(found, Path):
                yield found
            elif found is not None:
                opened = self._open(*found)
                if opened is not None:
                    stack.append(opened)

    def _open(
        self, folder: Path, patterns: list, real: Path
    ) -> tuple[Iterator[os.DirEntry], list, Path] | None:
        """A folder's sorted entries and its ignore patterns; None for a folder seen
        already (a symlink loop), out of the tree, or unreadable."""
        top = self.top
        if real in self.visited_dirs or (real != top and top not in real.parents):
            return None
        self.visited_dirs.add(real)
        local = list(patterns)
        ignore_file = folder / ".gitignore"
        if folder != self.start and ignore_file.is_file():
            local.append((real, _read_gitignore(ignore_file, self.tree)))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return None
        return iter(entries), local, real

    def _excluded(self, real_path: Path) -> bool:
        return bool(self.exclude) and _matches_any(_relative(real_path, self.root), self.exclude)

    def visit(
        self, entry: os.DirEntry, local: list, real_folder: Path | None = None
    ) -> Path | tuple[Path, list, Path] | None:
        """A source file to yield, a folder to walk (its path, patterns and real path),
        or None. ``real_folder``: the real path of the entry's folder, given when the
        entry is not a symlink; the entry's real path is then that folder and its name,
        with no ``resolve`` (a system call per path component) for each file."""
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError:
            return None  # a symlink loop, an unreadable entry
        if not is_dir and not (is_file and entry.name.endswith(SOURCE_SUFFIXES)):
            return None  # not a source file (a FIFO, a broken link ...)
        path = Path(entry.path)
        real_path = real_folder / entry.name if real_folder is not None else _resolve(path)
        if real_path is None:
            return None  # a symlink loop
        if is_dir:
            if (
                entry.name in SKIPPED_DIRS
                or entry.name.endswith(".egg-info")
                or _is_virtualenv(path)
            ):
                return None
            if _ignored(local, real_path, True) or self._excluded(real_path):
                return None
            return path, local, real_path
        # Only a link can lead out of the tree: other entries lie in a folder inside it.
        top = self.top
        if real_folder is None and real_path != top and top not in real_path.parents:
            return None  # a file link out of the tree
        if _ignored(local, real_path, False) or self._excluded(real_path):
            return None
        if real_path in self.seen:
            return None
        self.seen.add(real_path)
        return path


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def display_path(path: Path, root: Path) -> str:
    """The path as reports show it: relative to the project root when inside it, with
    bytes that are not UTF-8 written ``\\xff`` (see :func:`printable_name`)."""
    return printable_name(raw_display_path(path, root))


def raw_display_path(path: Path, root: Path) -> str:
    """:func:`display_path` with the name's bytes as the file system has them (a name
    that is not UTF-8 holds surrogates: ``os.fsencode`` gives its bytes back)."""
    resolved = path.absolute()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        try:
            return Path(os.path.relpath(resolved, Path.cwd())).as_posix()
        except ValueError:
            return path.as_posix()


def printable_name(name: str) -> str:
    """``name`` as valid Unicode: a file name that is not UTF-8 (``bad_\\xff.py``) reaches
    Python with its bad bytes as lone surrogates, which no report format, hash or
    terminal can encode; each such byte becomes the text ``\\xff``, as Python writes it."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    return name
