"""The distribution installs one import package, `kmigrate`, built from `migrate/` and `rules/`.

The list of packages in pyproject.toml is written out by hand (setuptools cannot discover
packages whose installed names differ from their folders), so this test keeps it complete:
a new sub-package that is not listed would be missing from every non-editable install.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

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


def test_the_sdist_and_wheel_build_and_pass_twine_check(tmp_path: Path) -> None:
    """Ready to publish: ``python -m build`` (offline, this environment's setuptools) makes
    an sdist and a wheel from the tracked files, ``twine check`` accepts their metadata,
    and the wheel carries the package data a scan and a report read at run time."""
    import subprocess
    import zipfile

    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    source = tmp_path / "source"
    for name in filter(None, tracked):
        relative = Path(name.decode())
        if not (ROOT / relative).is_file():
            continue
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        (source / relative).write_bytes((ROOT / relative).read_bytes())
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels + sdists)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    for needed in (
        "kmigrate/report/html_assets/table_controls.js",
        "kmigrate/rules/data/keras2_compat.py",
        "kmigrate/cli/main.py",
    ):
        assert needed in names, needed


@pytest.mark.backends
def test_the_readme_install_gives_pytorchs_cpu_build(tmp_path: Path) -> None:
    """The README's install (the constraints file plus PyTorch's CPU index) resolves torch
    to the CPU build on an ordinary Linux machine, with no CUDA wheels (a dry run: pip
    resolves from the real indexes and downloads nothing it does not need to)."""
    import json
    import subprocess

    report = tmp_path / "report.json"
    resolved = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed"),
            *("--quiet", "--report", str(report), "-c", str(ROOT / "constraints.txt")),
            *("--extra-index-url", "https://download.pytorch.org/whl/cpu", "torch"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if resolved.returncode != 0 and "NewConnectionError" in resolved.stderr:
        pytest.skip("no route to the package indexes from this machine")
    assert resolved.returncode == 0, resolved.stderr[-2000:]
    installs = {
        item["metadata"]["name"].lower(): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    assert installs["torch"] == "2.13.0+cpu"
    assert not [name for name in installs if name.startswith("nvidia")], sorted(installs)
