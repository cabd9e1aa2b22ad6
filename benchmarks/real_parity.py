"""How many real models does `kmigrate apply` convert so that they run on every backend
with the original's numbers, without a hand edit? Measured on your own checkouts.

Each REPO folder is a checkout of a legacy Keras project with a factory module at its
root (``rp_models.py`` unless given as ``REPO:FILE``) whose ``build_*()`` functions each
return a small model built from the project's layers. For each repository this script
copies the checkout twice into WORKDIR (``orig``: the reference, never edited; ``conv``:
rewritten by ``kmigrate apply``), then runs ``kmigrate parity conv/F:build_x --reference
orig/F:build_x`` for every factory, one at a time, and prints one line per factory and the
totals. With ``--batch`` the factories of one repository run as one parity batch (one
worker per side and backend for all of them, docs/parity.md "Many models"; several times
cheaper), each factory's report written as it is alone. The repositories are not part of
kmigrate (licences, size): fetch them yourself and write the factories; docs/parity.md
says how a reference is chosen.

    .venv/bin/python benchmarks/real_parity.py /tmp/rp ~/src/keras-bert ~/src/keras-xlnet
    .venv/bin/python benchmarks/real_parity.py --batch /tmp/rp ~/src/keras-bert

A FAIL whose reference ran is the interesting kind: either the post-apply scan reports a
manual finding in the failing layer (kmigrate said a person has work left), or kmigrate
was silent, which is a bug to report.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

_FACTORY = re.compile(r"^def (build_\w+)\(\s*\)", re.MULTILINE)
_VERDICT = re.compile(r"^(PASS|FAIL|NOT COMPARED)\b.*$", re.MULTILINE)
# Parity's line when the reference could not run: nothing was compared.
_NO_REFERENCE = "the reference did not run"


def classify(report: str) -> tuple[str, str]:
    """The outcome of one parity report: ``PASS``, ``FAIL``, ``NO-REFERENCE`` (the
    original did not run, so nothing was compared), ``NOT-COMPARED`` (no check failed but
    one the original could not run was skipped) or ``ERROR`` (no verdict at all), and the
    verdict line."""
    found = _VERDICT.search(report)
    if found is None:
        return "ERROR", (report.strip().splitlines() or ["(no output)"])[-1]
    line = found.group(0)
    if line.startswith("FAIL") and _NO_REFERENCE in line:
        return "NO-REFERENCE", line
    return found.group(1).replace(" ", "-"), line


def factories(module: Path) -> list[str]:
    """The ``build_*()`` functions of a factory module, in file order."""
    return _FACTORY.findall(module.read_text(encoding="utf-8"))


def _kmigrate() -> list[str]:
    script = Path(sys.executable).with_name("kmigrate")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kmigrate"]


def _copies(workdir: Path, repo: Path) -> Path:
    """``orig`` and ``conv`` (applied) copies of `repo` under ``workdir/<name>``."""
    target = workdir / repo.name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(repo, target / "orig", symlinks=True)
    shutil.copytree(repo, target / "conv", symlinks=True)
    subprocess.run(
        [*_kmigrate(), "apply", ".", "-q", "--no-cache"], cwd=target / "conv", check=False
    )
    return target


def _row(repo: Path, name: str, report: str) -> tuple[str, str, str]:
    outcome, line = classify(report)
    print(f"{repo.name:40s} {name:28s} {outcome:12s} {line[:90]}", flush=True)
    return name, outcome, line


def survey(workdir: Path, repo: Path, factory_file: str) -> list[tuple[str, str, str]]:
    """(factory, outcome, verdict line) for every factory of one repository, one parity
    run per factory."""
    target = _copies(workdir, repo)
    rows = []
    for name in factories(target / "orig" / factory_file):
        done = subprocess.run(
            [
                *_kmigrate(),
                "parity",
                f"conv/{factory_file}:{name}",
                "--reference",
                f"orig/{factory_file}:{name}",
            ],
            cwd=target,
            capture_output=True,
            text=True,
            check=False,
        )
        (target / f"{name}.parity.txt").write_text(done.stdout + done.stderr)
        rows.append(_row(repo, name, done.stdout))
    return rows


def survey_batch(workdir: Path, repo: Path, factory_file: str) -> list[tuple[str, str, str]]:
    """As `survey`, with every factory of the repository in one parity batch; each
    factory's report is rendered as `kmigrate parity` renders it alone."""
    from rich.console import Console  # noqa: PLC0415

    from kmigrate.parity.report import render  # noqa: PLC0415
    from kmigrate.parity.runner import ParityEntry, run_parity_batch  # noqa: PLC0415

    target = _copies(workdir, repo)
    names = factories(target / "orig" / factory_file)
    entries = [
        ParityEntry(
            f"{target / 'conv' / factory_file}:{name}",
            reference=f"{target / 'orig' / factory_file}:{name}",
        )
        for name in names
    ]
    errors: dict[int, str] = {}
    reports = run_parity_batch(
        entries, on_usage_error=lambda index, error: errors.__setitem__(index, str(error))
    )
    rows = []
    for index, (name, report) in enumerate(zip(names, reports)):
        path = target / f"{name}.parity.txt"
        if report is None:
            path.write_text(f"usage error: {errors.get(index, '')}\n")
        else:
            with path.open("w", encoding="utf-8") as handle:
                render(report, Console(file=handle, width=120, force_terminal=False))
        rows.append(_row(repo, name, path.read_text(encoding="utf-8")))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path, help="where the copies and reports go")
    parser.add_argument("repos", nargs="+", help="REPO or REPO:FACTORY_FILE")
    parser.add_argument(
        "--batch", action="store_true", help="one parity batch per repository (cheaper)"
    )
    args = parser.parse_args(argv)
    totals: Counter[str] = Counter()
    for spec in args.repos:
        path, _, factory_file = spec.partition(":")
        run = survey_batch if args.batch else survey
        for _, outcome, _ in run(
            args.workdir, Path(path).absolute(), factory_file or "rp_models.py"
        ):
            totals[outcome] += 1
    compared = totals["PASS"] + totals["FAIL"]
    print(
        f"\n{sum(totals.values())} factories: {totals['PASS']} PASS on every backend, "
        f"{totals['FAIL']} FAIL, {totals['NOT-COMPARED']} with checks not compared, "
        f"{totals['NO-REFERENCE']} whose original did not run, "
        f"{totals['ERROR']} without a verdict; {totals['PASS']} of {compared} compared"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
