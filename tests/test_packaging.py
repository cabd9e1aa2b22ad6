"""The distribution installs one import package, `kmigrate`, built from `migrate/` and `rules/`.

The list of packages in pyproject.toml is written out by hand (setuptools cannot discover
packages whose installed names differ from their folders), so this test keeps it complete:
a new sub-package that is not listed would be missing from every non-editable install.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _setuptools_table() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]


def test_every_package_folder_is_listed_under_its_installed_name() -> None:
    table = _setuptools_table()
    folders = {"kmigrate": ROOT / "migrate", "kmigrate.rules": ROOT / "rules"}
    assert table["package-dir"] == {"kmigrate": "migrate", "kmigrate.rules": "rules"}
    expected = set()
    for name, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder).parts
            if "__pycache__" in relative:
                continue
            expected.add(".".join((name, *relative)))
    assert set(table["packages"]) == expected


def test_no_top_level_migrate_or_rules_package() -> None:
    names = {name.split(".")[0] for name in _setuptools_table()["packages"]}
    assert names == {"kmigrate"}
