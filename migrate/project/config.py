"""Configuration from ``[tool.kmigrate]`` in the scanned project's ``pyproject.toml``.

Command-line options win over the file. Keys (all optional)::

    [tool.kmigrate]
    select = ["KM1", "KM2"]          # rule ids or prefixes; default: all
    ignore = ["KM104"]
    exclude = ["legacy/**", "*_pb2.py"]   # globs, relative to the project root
    per-file-ignores = { "tests/*" = ["KM6"] }
    baseline = ".kmigrate-baseline.json"
    jobs = 2
    model-bases = ["params_flow.Layer"]   # other packages' Keras base classes
    fail-on = "warning"              # `check`: lowest severity of a new finding that fails
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """Invalid configuration; the message names the key and the file."""


@dataclass
class Config:
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None  # the pyproject.toml read, if any
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    baseline: str = ".kmigrate-baseline.json"
    jobs: int | None = None
    # classes of other packages that are Keras layers/models/losses/metrics: kmigrate
    # cannot see into an installed package, so a class on such a base is model code
    # only when the project says so (``params_flow.Layer`` under bert-for-tf2's layers)
    model_bases: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def cache_key(self) -> str:
        """What in the config changes results (for the result cache)."""
        return repr(
            (
                sorted(self.select),
                sorted(self.ignore),
                sorted(self.per_file_ignores.items()),
                sorted(self.model_bases),
            )
        )


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start``."""
    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            return path
    return None


def _string_list(table: dict[str, Any], key: str, source: Path) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: [tool.kmigrate] {key} must be a list of strings")
    return list(value)


_QUALIFIED_CLASS = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def _class_names(table: dict[str, Any], key: str, source: Path) -> list[str]:
    names = _string_list(table, key, source)
    for name in names:
        if not _QUALIFIED_CLASS.fullmatch(name):
            raise ConfigError(
                f"{source}: [tool.kmigrate] {key}: {name!r} is not a class's qualified name "
                '(a package and the class, as imported: "params_flow.Layer")'
            )
    return names


def load_config(start: Path, explicit: Path | None = None) -> Config:
    """Read ``[tool.kmigrate]`` from ``explicit`` or the pyproject.toml above ``start``."""
    path = explicit or find_pyproject(start)
    if path is None:
        root = start.resolve()
        return Config(root=root if root.is_dir() else root.parent)
    # imported here: most scanned trees have no pyproject.toml, and the parser costs 2 ms
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    text = _read_pyproject(path, explicit is not None)
    if text is None:  # the tree's file is a link out of it, a FIFO, a device: not used
        return Config(root=path.parent.resolve())
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise ConfigError(f"cannot read {path}: nested too deeply") from None
    tool = data.get("tool", {})
    table = tool.get("kmigrate", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.kmigrate] must be a table")
    ignores = table.get("per-file-ignores", {})
    if not isinstance(ignores, dict):
        raise ConfigError(f"{path}: [tool.kmigrate] per-file-ignores must be a table")
    jobs = table.get("jobs")
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise ConfigError(f"{path}: [tool.kmigrate] jobs must be a positive integer")
    known = {"select", "ignore", "exclude", "per-file-ignores", "baseline", "jobs", "model-bases"}
    root = path.parent.resolve()
    return Config(
        root=root,
        source=path,
        select=_string_list(table, "select", path),
        ignore=_string_list(table, "ignore", path),
        exclude=_string_list(table, "exclude", path),
        per_file_ignores={k: _string_list(ignores, k, path) for k in ignores},
        baseline=_baseline_inside(table["baseline"], root, path)
        if "baseline" in table
        else ".kmigrate-baseline.json",
        jobs=None if jobs is None else min(jobs, _cpu_count()),
        model_bases=_class_names(table, "model-bases", path),
        extra={k: v for k, v in table.items() if k not in known},
    )


def _read_pyproject(path: Path, explicit: bool) -> str | None:
    """The text of the config file; None for a found one that is not a small regular
    file inside its own folder (the scanned tree's file must not pull in one of the
    user's, nor block on a FIFO). ``--config`` is the user's choice: read wherever it is."""
    from kmigrate.engine.sources import SourceError, read_bytes
    from kmigrate.project.tree_files import CONFIG_LIMIT, read_tree_file

    if explicit:
        try:
            data = read_bytes(path, CONFIG_LIMIT)
        except SourceError as error:
            raise ConfigError(f"cannot read {path}: {error}") from None
    else:
        data = read_tree_file(path, [path.parent.resolve()])
        if data is None:
            return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"cannot read {path}: not UTF-8 ({error})") from None


def _baseline_inside(value: Any, root: Path, source: Path) -> str:
    """The baseline path the project's config names, which must stay inside the project.

    The config belongs to the scanned tree, and ``kmigrate baseline`` writes where it
    says: a repository must not be able to point that write at a file of the user's
    (``~/.bashrc``), directly or through a symlinked folder. (``--baseline`` on the
    command line is the user's own choice and is not limited.)
    """
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{source}: [tool.kmigrate] baseline must be a file name")
    relative = Path(value)
    try:
        inside = not relative.is_absolute() and (root / relative).resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a symlink loop
        inside = False
    if not inside or ".." in relative.parts:
        raise ConfigError(
            f"{source}: [tool.kmigrate] baseline must be a path inside the project "
            f"({value!r} leaves {root}); use --baseline for a file elsewhere"
        )
    return value


def _cpu_count() -> int:
    """The most worker processes a project's config may ask for: one per usable core
    (a scanned tree should not be able to make kmigrate start thousands of processes;
    ``--jobs`` on the command line is not limited)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
