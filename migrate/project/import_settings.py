"""The project's import layout, read the way its own tools read it.

``apply`` adds imports (``import keras``, ``from keras import ops``); they must land
where the project's isort or ruff would put them, so its check stays green. Which
names are first-party comes from the project's settings (``known-first-party``) and
else from what ruff itself looks at: the packages and modules at the project root and
under ``src/``. Line length and sorting options come from ``[tool.ruff]``,
``[tool.isort]``, ``[tool.black]`` and the ``[isort]`` / ``[flake8]`` sections of
``setup.cfg``, ``tox.ini`` or ``.isort.cfg``. Only read as data, never executed.
"""

from __future__ import annotations

import configparser
import sys
from pathlib import Path
from typing import Any

from kmigrate.engine.import_layout import DEFAULT_LINE_LENGTH, ImportLayout

_INI_FILES = (".isort.cfg", "setup.cfg", "tox.ini")


def import_layout(root: Path) -> ImportLayout:
    """The layout of the project at ``root`` (defaults where it says nothing)."""
    settings: dict[str, Any] = {}
    for name in _INI_FILES:  # the pyproject's settings, read last, win
        settings.update(_ini_settings(root / name))
    settings.update(_pyproject_settings(root / "pyproject.toml"))
    first_party = set(_names(settings.get("known_first_party"))) | _own_top_level_names(root)
    third_party = frozenset(_names(settings.get("known_third_party")))
    length = settings.get("line_length")
    return ImportLayout(
        first_party=frozenset(first_party - third_party),
        third_party=third_party,
        force_sort_within_sections=bool(settings.get("force_sort_within_sections", False)),
        line_length=length if isinstance(length, int) and length > 0 else DEFAULT_LINE_LENGTH,
    )


def _own_top_level_names(root: Path) -> set[str]:
    """What ruff calls first-party by default: top-level packages and modules found in
    its ``src`` folders (the project root and ``src/``)."""
    names: set[str] = set()
    for folder in (root, root / "src"):
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.suffix == ".py" and entry.is_file():
                    names.add(entry.stem)
                elif entry.is_dir() and (entry / "__init__.py").is_file():
                    names.add(entry.name)
            except OSError:
                continue
    return {name for name in names if name.isidentifier()}


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.replace("\n", ",").split(",") if part.strip()]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


_INI_KEYS = {
    "known_first_party": "known_first_party",
    "known-first-party": "known_first_party",
    "known_third_party": "known_third_party",
    "known-third-party": "known_third_party",
    "force_sort_within_sections": "force_sort_within_sections",
    "line_length": "line_length",
    "max-line-length": "line_length",
    "max_line_length": "line_length",
}


def _ini_settings(path: Path) -> dict[str, Any]:
    """``[isort]`` (and ``[tool:isort]``), then ``[flake8]``'s max-line-length."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, configparser.Error):
        return {}
    found: dict[str, Any] = {}
    for section in ("flake8", "isort", "tool:isort"):
        if not parser.has_section(section):
            continue
        for key, value in parser.items(section):
            if key not in _INI_KEYS:
                continue
            target = _INI_KEYS[key]
            if target == "line_length":
                found[target] = int(value) if value.strip().isdigit() else None
            elif target == "force_sort_within_sections":
                found[target] = value.strip().lower() in ("1", "true", "yes", "on")
            else:
                found[target] = value
        if parser.get(section, "profile", fallback="") == "google":
            found.setdefault("force_sort_within_sections", True)
    return found


def _pyproject_settings(path: Path) -> dict[str, Any]:
    """``[tool.black]``, then ``[tool.isort]``, then ``[tool.ruff]`` (the last wins)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, tomllib.TOMLDecodeError):
        return {}
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    found: dict[str, Any] = {}
    black, isort, ruff = (_table(tool, name) for name in ("black", "isort", "ruff"))
    lint = _table(ruff, "lint")
    ruff_isort = _table(lint, "isort") or _table(ruff, "isort")
    for key in ("line-length", "line_length"):
        for table in (black, isort, ruff):
            if isinstance(table.get(key), int):
                found["line_length"] = table[key]
    if isort.get("profile") == "google":
        found["force_sort_within_sections"] = True
    for table in (isort, ruff_isort):
        for key, value in table.items():
            target = _INI_KEYS.get(key)
            if target and target != "line_length":
                found[target] = value
    return found


def _table(parent: dict[str, Any], name: str) -> dict[str, Any]:
    value = parent.get(name)
    return value if isinstance(value, dict) else {}
