"""Does the project choose its Keras backend explicitly?

Keras 3 picks its backend once, at import time, from the ``KERAS_BACKEND`` environment
variable, else from the ``"backend"`` key of ``~/.keras/keras.json``, else TensorFlow.
A project that never says which backend it runs on works by accident on the machine
that happens to have TensorFlow, and its CI tests one backend without knowing it. So
the report looks for the places where teams set it:

- CI and environment files: ``.github/workflows/*.yml``, ``.gitlab-ci.yml``,
  ``tox.ini``, ``noxfile.py``, ``Makefile``, ``Dockerfile*``, ``docker-compose*.yml``,
  ``*.env`` / ``.env*``, ``.envrc``, and pytest settings (``pytest.ini``, ``setup.cfg``,
  ``pyproject.toml``, for pytest-env's ``env =``);
- ``keras.json`` files (a checked-in Keras config, e.g. copied to ``~/.keras`` in CI);
- Python code and notebooks: ``os.environ["KERAS_BACKEND"] = ...``,
  ``os.environ.setdefault("KERAS_BACKEND", ...)``, ``os.putenv``, ``monkeypatch.setenv``,
  ``{"KERAS_BACKEND": ...}`` environments, ``keras.config.set_backend(...)`` and
  ``%env KERAS_BACKEND=...``.

``TF_USE_LEGACY_KERAS`` is reported alongside: set to 1 it makes ``tf.keras`` Keras 2
(tf_keras) again, which hides whether the code runs on Keras 3 at all.

Only text is read; nothing is executed. Paths are reported relative to the project root.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from kmigrate.engine.run_data import BackendPin
from kmigrate.engine.sources import SourceError, parse_or_none, read_bytes
from kmigrate.project.backend_markers import (
    BACKEND_VARIABLE,
    mentions_backend,
)
from kmigrate.project.backend_markers import VARIABLES as _VARIABLES
from kmigrate.project.discover import SKIPPED_DIRS
from kmigrate.project.tree_files import read_tree_file, real_path

# (glob on the file name, kind). Workflows are matched on their path below.
_CONFIG_FILES: tuple[tuple[str, str], ...] = (
    (".gitlab-ci.yml", "ci"),
    (".gitlab-ci.yaml", "ci"),
    ("azure-pipelines.yml", "ci"),
    (".travis.yml", "ci"),
    ("Jenkinsfile", "ci"),
    ("tox.ini", "ci"),
    ("Makefile", "ci"),
    ("*.mk", "ci"),
    ("Dockerfile", "docker"),
    ("Dockerfile.*", "docker"),
    ("*.Dockerfile", "docker"),
    ("*.dockerfile", "docker"),
    ("Containerfile", "docker"),
    ("docker-compose*.yml", "docker"),
    ("docker-compose*.yaml", "docker"),
    ("compose.yml", "docker"),
    ("compose.yaml", "docker"),
    (".env", "env-file"),
    (".env.*", "env-file"),
    ("*.env", "env-file"),
    (".envrc", "env-file"),
    ("pytest.ini", "test-config"),
    ("setup.cfg", "test-config"),
    ("pyproject.toml", "test-config"),
    ("keras.json", "keras-config"),
)
_WORKFLOW_DIRS = ((".github", "workflows"), (".circleci",))
_ASSIGNMENT = re.compile(
    r"(?<![\w$.{])(?P<var>KERAS_BACKEND|TF_USE_LEGACY_KERAS)[\"']?\s*(?:[?:+]?=|:)(?!=)\s*"
    r"(?P<value>\$\{\{[^}]*\}\}|\$\{[^}]*\}|[\"'][^\"'\n]*[\"']|[^\s\"',;#)\]}]*)"
)
_DOCKER_ENV = re.compile(r"^\s*ENV\s+(?P<var>KERAS_BACKEND|TF_USE_LEGACY_KERAS)\s+(?P<value>\S+)")
_MAGIC_ENV = re.compile(
    r"^\s*%env\s+(?P<var>KERAS_BACKEND|TF_USE_LEGACY_KERAS)(?:\s*=\s*|\s+)(?P<value>\S*)"
)
_SETTER_METHODS = frozenset({"setdefault", "putenv", "setenv"})


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def pins_in_config_text(text: str, path: str, kind: str) -> list[BackendPin]:
    """Assignments of the backend variables in a CI, container, env or ini file."""
    pins: list[BackendPin] = []
    if kind == "keras-config":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested absurdly deep
            return pins
        if isinstance(data, dict) and isinstance(data.get("backend"), str):
            line = next((n for n, t in enumerate(text.splitlines(), 1) if '"backend"' in t), 1)
            pins.append(BackendPin(path, line, "keras.json", data["backend"], kind))
        return pins
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            continue
        match = _DOCKER_ENV.match(line) if kind == "docker" else None
        matches = [match] if match else list(_ASSIGNMENT.finditer(line))
        for found in matches:
            pins.append(BackendPin(path, number, found["var"], _unquote(found["value"]), kind))
    return pins


def _literal_text(node: ast.AST | None) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)):
        return str(node.value)
    return ""


def _is_variable(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and node.value in _VARIABLES:
        return node.value
    return None


def _code_pins(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    """(line, variable, value) for every place Python code sets a backend variable."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript):
                    variable = _is_variable(target.slice)
                    if variable:
                        yield node.lineno, variable, _literal_text(node.value)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                variable = _is_variable(key)
                if variable:
                    yield node.lineno, variable, _literal_text(value)
        elif isinstance(node, ast.Call):
            method = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if method in _SETTER_METHODS and len(node.args) >= 2:
                variable = _is_variable(node.args[0])
                if variable:
                    yield node.lineno, variable, _literal_text(node.args[1])
            elif method == "set_backend" and node.args:
                yield node.lineno, BACKEND_VARIABLE, _literal_text(node.args[0])
            for keyword in node.keywords:
                if keyword.arg in _VARIABLES:
                    yield node.lineno, keyword.arg, _literal_text(keyword.value)


def pins_in_python_text(text: str, path: str) -> list[BackendPin]:
    tree = parse_or_none(text)
    if tree is None:
        return []
    return [BackendPin(path, line, var, value, "code") for line, var, value in _code_pins(tree)]


def pins_in_notebook_text(text: str, path: str) -> list[BackendPin]:
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError, RecursionError):
        return []
    pins: list[BackendPin] = []
    code_cells = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    for index, cell in enumerate(code_cells, 1):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        lines = source.splitlines()
        for number, line in enumerate(lines, 1):
            magic = _MAGIC_ENV.match(line)
            if magic:
                pins.append(
                    BackendPin(path, number, magic["var"], magic["value"], "notebook", index)
                )
        code = "\n".join(
            "#" + line if line.lstrip().startswith(("%", "!", "?")) else line for line in lines
        )
        tree = parse_or_none(code)
        if tree is not None:
            for line, var, value in _code_pins(tree):
                pins.append(BackendPin(path, line, var, value, "notebook", index))
    return pins


# Any name in _CONFIG_FILES, in one regex: most files of a tree are not config files,
# and this rules them out without 25 fnmatch calls each.
_CONFIG_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern, _ in _CONFIG_FILES))


def _may_be_config(name: str) -> bool:
    """Whether :func:`_config_kind` can name a kind for a file called ``name``."""
    return name.endswith((".yml", ".yaml")) or _CONFIG_NAME.match(name) is not None


def _config_kind(relative: str) -> str | None:
    parts = relative.split("/")
    name = parts[-1]
    for prefix in _WORKFLOW_DIRS:
        if tuple(parts[: len(prefix)]) == prefix and name.endswith((".yml", ".yaml")):
            return "ci"
    for pattern, kind in _CONFIG_FILES:
        if fnmatch.fnmatchcase(name, pattern):
            return kind
    return None


def _walk_config_files(folder: Path) -> Iterator[Path]:
    """The files under ``folder`` whose name may be a config file's (a ``Path`` is made
    only for those: most files of a tree are source files)."""
    stack = [os.fspath(folder)]  # not os.walk: it recursed (Python < 3.12), and a tree
    while stack:  # 1,000 folders deep ended the run with a RecursionError
        try:
            entries = sorted(os.scandir(stack.pop()), key=lambda e: e.name)
        except OSError:
            continue
        folders = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if not is_dir:
                if _may_be_config(entry.name):
                    yield Path(entry.path)
            elif not entry.is_symlink() and (
                entry.name not in SKIPPED_DIRS or entry.name in (".github", ".circleci")
            ):
                folders.append(entry.path)
        stack.extend(reversed(folders))


def _relative(path: Path, resolved: Path, root: Path) -> str:
    """``path`` relative to the (resolved) ``root``, by its ``resolved`` real path."""
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


class _Resolver:
    """``Path.resolve`` for many files, resolving each folder once.

    A file that is not a symlink resolves to its folder's real path plus its name; only
    symlinks (rare) take a full ``resolve``, which walks and stats every component.
    """

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def resolve(self, path: Path) -> str | None:
        """The real path, or None for a symlink loop (or another error)."""
        try:
            if path.is_symlink():
                return str(path.resolve())
            folder, name = os.path.split(path)
            real = self._folders.get(folder)
            if real is None:
                real = self._folders[folder] = os.path.realpath(folder or ".")
            return os.path.join(real, name)
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
            return None


def _read_text(path: Path, inside: Sequence[Path]) -> str | None:
    """The text of a config file: a small regular file inside the tree, else None (a
    FIFO, a device, a link out of the tree are never opened for reading)."""
    data = read_tree_file(path, inside)
    return None if data is None else data.decode("utf-8", errors="replace")


def _root_candidates(root: Path) -> Iterator[Path]:
    """CI and config files at the project root and in its CI folders (not recursive)."""
    if not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        if child.is_file():
            yield child
    for prefix in _WORKFLOW_DIRS:
        folder = root.joinpath(*prefix)
        if folder.is_dir():
            yield from sorted(p for p in folder.iterdir() if p.is_file())


def find_backend_pins(
    paths: Sequence[Path],
    root: Path,
    source_files: Iterable[str] = (),
    mentions: Mapping[str, bool] | None = None,
) -> list[BackendPin]:
    """Every backend pin under the scanned ``paths`` and in the root's CI files.

    ``source_files`` are the Python files and notebooks of the scan (paths relative to
    ``root``, as reports show them); only those mentioning a backend variable or
    ``set_backend`` are parsed. ``mentions``: for the files whose bytes the run read
    already, whether they do (``FileReport.mentions_backend``); the others are read here.
    """
    mentions = mentions or {}
    pins: set[BackendPin] = set()
    seen: set[str] = set()
    candidates: list[Path] = list(_root_candidates(root))
    for path in paths:
        if path.is_dir():
            candidates.extend(_walk_config_files(path))
        elif path.is_file():
            candidates.append(path)
    resolver = _Resolver()
    real_root = root.resolve()
    # the tree: the project and the folders scanned (which may lie elsewhere)
    inside = [real_root, *(r for r in map(real_path, paths) if r is not None and r.is_dir())]
    for candidate in candidates:
        if not _may_be_config(candidate.name):
            continue  # by its name alone, before resolving it: most files of a tree
        resolved = resolver.resolve(candidate)
        if resolved is None or resolved in seen:
            continue
        seen.add(resolved)
        relative = _relative(candidate, Path(resolved), real_root)
        kind = _config_kind(relative)
        if kind is None:
            continue
        text = _read_text(candidate, inside)
        if text and (kind == "keras-config" or any(v in text for v in _VARIABLES)):
            pins.update(pins_in_config_text(text, relative, kind))
    for display in source_files:
        if mentions.get(display) is False:
            continue  # the run read it, and it names no backend variable
        # os.path, not pathlib: this runs for every scanned file
        location = os.path.join(root, display)  # an absolute display stays as it is
        if not os.path.isfile(location):
            location = display
        try:
            data = read_bytes(location)  # never blocks, never above the size limit
        except SourceError:
            continue
        if not mentions_backend(data):
            continue
        text = data.decode("utf-8", errors="replace")
        if display.endswith(".ipynb"):
            pins.update(pins_in_notebook_text(text, display))
        else:
            pins.update(pins_in_python_text(text, display))
    return sorted(pins, key=lambda p: (p.path, p.cell or 0, p.line, p.variable, p.value))
