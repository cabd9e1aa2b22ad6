"""How many real models does `kmigrate apply` convert so that they run on every backend
with the original's numbers, without a hand edit? Measured on real checkouts.

Each REPO folder is a checkout of a legacy Keras project with a factory module at its
root (``rp_models.py`` unless given as ``REPO:FILE``) whose ``build_*()`` functions each
return a small model built from the project's layers. For each repository this script
copies the checkout twice into WORKDIR (``orig``: the reference, never edited; ``conv``:
rewritten by ``kmigrate apply``), then runs parity on ``conv/F:build_x`` against
``orig/F:build_x`` for every factory, one at a time, and prints one line per factory and
the totals. With ``--batch`` the factories of one repository run as one parity batch (one
worker per side and backend for all of them, docs/parity.md "Many models"; several times
cheaper), each factory's report written as it is alone. docs/parity.md says how a
reference is chosen: every factory here imports TensorFlow (directly or through the
project), so the original runs on Keras 2 (tf_keras).

A FAIL whose reference ran is the interesting kind: either the post-apply scan
(``kmigrate scan -f json`` of ``conv``) reports a manual or error finding in the failing
layer (kmigrate said a person has work left there), or kmigrate was silent, which is a bug
to report. The script says which for every such FAIL (`failing_places`, `explain_fail`):
the failing layer is the class parity names (the first diverging layer, the layer a check
names) and the project code in the failing tracebacks (the enclosing class, else the
enclosing function), with the project base classes of such a class.

The survey of issue 31 (December 2026), reproducible: the factories are kmigrate's own
code in ``benchmarks/real_models/<checkout>.py`` (copied into both copies as
``rp_models.py`` with ``--factories``), and ``benchmarks/real_models/REPOS.tsv`` lists each
checkout folder, its GitHub repository, the commit the factories were written against and
the extra packages its code imports (installed with ``pip install --target``; no TensorFlow
or PyTorch there):

    # for each row of REPOS.tsv (DIR, OWNER/NAME, COMMIT):
    git clone https://github.com/OWNER/NAME /tmp/rp_src/DIR
    git -C /tmp/rp_src/DIR checkout COMMIT
    # then, in the kmigrate checkout:
    .venv/bin/python -m pip install --target /tmp/rp_deps --no-deps "typeguard>=2.7,<3" \\
        Keras-Applications==1.0.8
    nice .venv/bin/python benchmarks/real_parity.py --batch --factories benchmarks/real_models \\
        --src /tmp/rp_src --deps /tmp/rp_deps /tmp/rp_work

(no REPO: every row of REPOS.tsv, as ``--src``/DIR; a row whose ``batch`` is ``no`` runs
one factory at a time even with ``--batch``: tensorflow/addons registers its ops' gradients
with TensorFlow at import, and a second import in the same worker fails). About 25 minutes
on 2 busy cores (estimated from the December 2026 runs, benchmarks/RESULTS.md).
``--from-reports`` prints the totals and the FAIL explanations again from what a run left
in WORKDIR, without running anything. Your own checkouts, with a factory
module of your own at their root:

    .venv/bin/python benchmarks/real_parity.py /tmp/rp ~/src/keras-bert ~/src/keras-xlnet
    .venv/bin/python benchmarks/real_parity.py --batch /tmp/rp ~/src/keras-bert
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_FACTORY = re.compile(r"^def (build_\w+)\(\s*\)", re.MULTILINE)
_VERDICT = re.compile(r"^(PASS|FAIL|NOT COMPARED)\b.*$", re.MULTILINE)
# Parity's line when the reference could not run: nothing was compared.
_NO_REFERENCE = "the reference did not run"
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_LAYER_CLASS = re.compile(r"\((\w+)\)\s*$")  # CheckResult.layer: "'path' (Class)"
_FAILED = ("fail", "error", "timeout")
_AUTO_NAME = re.compile(r"([a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)*?)(?:_\d+)?")  # Keras's layer names
FACTORY_FILE = "rp_models.py"


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


def read_repos(table: Path) -> list[dict[str, str]]:
    """The rows of REPOS.tsv (``dir``, ``repo``, ``commit``, ``deps``, ``batch``: ``no`` for
    a checkout that runs one factory at a time even with ``--batch``), comments skipped."""
    lines = [line for line in table.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [line.split("\t") for line in lines if not line.startswith("#")]
    header, body = rows[0], rows[1:]
    return [dict(zip(header, row + [""] * (len(header) - len(row)))) for row in body]


# --- which layer failed, and did kmigrate say so ---------------------------------------


@dataclass(frozen=True)
class Place:
    """Project code a failure points at: lines ``start``-``end`` of ``path`` (relative to
    the converted copy), the body of ``name`` (a class, else a function, else the file)."""

    path: str
    start: int
    end: int
    name: str

    def holds(self, path: str, line: int) -> bool:
        return path == self.path and self.start <= line <= self.end


def _definitions(source: str) -> list[tuple[str, int, int, list[str], str]]:
    """(name, first line, last line, base names, kind) of every class and function."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
            found.append((node.name, node.lineno, node.end_lineno, bases, "class"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.name, node.lineno, node.end_lineno, [], "function"))
    return found


class ProjectIndex:
    """The classes and functions of the converted copy, read with ast on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[str, list] = {}

    def definitions(self, path: str) -> list:
        if path not in self._files:
            try:
                source = (self.root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                source = ""
            self._files[path] = _definitions(source)
        return self._files[path]

    def classes_named(self, name: str) -> list[Place]:
        places = []
        for file in sorted(self.root.rglob("*.py")):
            path = file.relative_to(self.root).as_posix()
            if name not in file.read_text(encoding="utf-8", errors="replace"):
                continue
            for found, start, end, _, kind in self.definitions(path):
                if kind == "class" and found == name:
                    places.append(Place(path, start, end, name))
        return places

    def bases(self, place: Place) -> list[str]:
        return next(
            (
                bases
                for name, start, _, bases, kind in self.definitions(place.path)
                if kind == "class" and name == place.name and start == place.start
            ),
            [],
        )

    def enclosing(self, path: str, line: int) -> Place:
        """The innermost class holding `line`, else the innermost function, else the file."""
        spans = [d for d in self.definitions(path) if d[1] <= line <= d[2]]
        for kind in ("class", "function"):
            inner = [d for d in spans if d[4] == kind]
            if inner:
                name, start, end, _, _ = max(inner, key=lambda d: d[1])
                return Place(path, start, end, name)
        return Place(path, 1, 10**9, path)


def _failed_targets(report: dict) -> list[dict]:
    return [r for r in report.get("runs", []) if r.get("role") == "target"]


def _failures(run: dict) -> list[tuple[str, dict | None]]:
    """(check name, check) of every failed check of a target row; the row itself when it
    failed before any check."""
    failed = [(c["check"], c) for c in run.get("checks") or [] if c.get("status") in _FAILED]
    if not failed and run.get("status") in _FAILED:
        failed = [((run.get("error") or {}).get("stage", "run"), None)]
    return failed


def first_failure(report: dict) -> str:
    """The first failing check, as 'jax call: ERROR while building the model: ...'."""
    for run in _failed_targets(report):
        for name, check in _failures(run):
            source = check or run
            error = source.get("error") or {}
            if error:
                # Keras wraps a layer's error ("Could not automatically infer the output
                # shape ... Error encountered:"): the cause is the message's last line
                lines = [x.strip() for x in (error.get("message") or "").splitlines() if x.strip()]
                text = f"{error.get('type', 'Error')}: {lines[0][:160] if lines else ''}"
                if len(lines) > 1:
                    text += f" ... {lines[-1][:160]}"
                if error.get("cause"):  # the error another one surfaced from, as parity says
                    text = f"{error['cause'][:240]} (then {error.get('type', 'Error')})"
                return f"{run['backend']} {name}: {source['status']} ({error.get('stage')}) {text}"
            layer = (check or {}).get("layer") or _divergent_text(run)
            detail = "; ".join((check or {}).get("detail") or [])
            where = f" layer {layer}" if layer else ""
            return f"{run['backend']} {name}: {source['status']}{where} {detail}".rstrip()
    return "(no failing check named)"


def _divergent_text(run: dict) -> str:
    div = run.get("first_divergent_layer") or {}
    return f"'{div['layer']}' ({div['class']})" if div else ""


def factory_layers(module: Path) -> dict[str, str]:
    """Layer name -> class, for every ``Class(..., name="x")`` call of the factory module
    (a check may name the failing layer only by its path: ``'sn_conv/conv2d'``)."""
    try:
        tree = ast.parse(module.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    named = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        cls = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg == "name" and isinstance(value, ast.Constant) and cls:
                named.setdefault(str(value.value), cls)
    return named


def _classes_of_path(path: str, named: dict[str, str]) -> list[str]:
    """The classes of the factory's layers named along a layer path ``'outer/inner'``."""
    return [named[part] for part in path.strip("'").split("/") if part in named]


def failing_places(report: dict, converted: Path, index: ProjectIndex | None = None) -> list[Place]:
    """The project code the failing checks of `report` point at, in the converted copy
    `converted`: the classes parity names (first diverging layer, a check's layer), the
    enclosing class or function of every traceback frame inside `converted` (the factory
    module excepted: that is the survey's code), and the project base classes of each
    class found."""
    index = index or ProjectIndex(converted)
    root = str(converted.resolve())
    named = factory_layers(converted / FACTORY_FILE)
    names: list[str] = []
    places: list[Place] = []
    for run in _failed_targets(report):
        div = run.get("first_divergent_layer")
        if run.get("status") in _FAILED and div:
            names.append(div["class"])
            names.extend(_classes_of_path(div["layer"], named))
        for _, check in _failures(run):
            texts = [run.get("error")] if check is None else [check.get("error")]
            if check and check.get("layer"):
                found = _LAYER_CLASS.search(check["layer"])
                if found:
                    names.append(found.group(1))
                names.extend(_classes_of_path(check["layer"].split(" (")[0], named))
            for error in texts:
                for file, line in _FRAME.findall((error or {}).get("traceback") or ""):
                    resolved = str(Path(file).resolve())
                    if not resolved.startswith(root + os.sep):
                        continue
                    path = Path(resolved).relative_to(root).as_posix()
                    if path != FACTORY_FILE:
                        places.append(index.enclosing(path, int(line)))
    names.extend(p.name for p in places)
    seen: set[str] = set()
    while names:
        name = names.pop()
        if name in seen:
            continue
        seen.add(name)
        for place in index.classes_named(name):
            if place.path != FACTORY_FILE:
                places.append(place)
                names.extend(index.bases(place))
    return sorted(set(places), key=lambda p: (p.path, p.start))


def is_manual(finding: dict) -> bool:
    """A finding that leaves work to a person: an error, or a warning apply cannot fix."""
    severity = finding.get("severity")
    return severity == "error" or (severity == "warning" and not finding.get("fixable", False))


def findings_in(places: list[Place], findings: list[dict]) -> list[dict]:
    """The manual/error findings of the post-apply scan inside `places`."""
    return [
        f
        for f in findings
        if is_manual(f) and any(p.holds(f.get("path", ""), f.get("line", 0)) for p in places)
    ]


def failing_classes(report: dict) -> set[str]:
    """The classes parity names as failing: the first diverging layer's, a check's layer's
    (Keras's own classes included, unlike :func:`failing_places`)."""
    classes = set()
    for run in _failed_targets(report):
        div = run.get("first_divergent_layer")
        if run.get("status") in _FAILED and div:
            classes.add(div["class"])
        for _, check in _failures(run):
            layer = (check or {}).get("layer") or ""
            found = _LAYER_CLASS.search(layer)
            auto = _AUTO_NAME.fullmatch(layer.strip("'"))
            if found:
                classes.add(found.group(1))
            elif auto:  # a name Keras gave: the class's snake case ('batch_normalization_2')
                classes.add("".join(word.capitalize() for word in auto.group(1).split("_")))
    return classes


def notes_on(report: dict, places: list[Place], findings: list[dict]) -> list[dict]:
    """Info notes of the post-apply scan about the failing layer: inside `places`, or at a
    use of the failing class itself (KM534 at a `BatchNormalization(...)` when parity names
    a BatchNormalization layer). A FAIL they explain is a difference Keras 3 brings and
    kmigrate said so, not kmigrate being silent."""
    classes = failing_classes(report)
    return [
        f
        for f in findings
        if f.get("severity") == "info"
        and (
            any(p.holds(f.get("path", ""), f.get("line", 0)) for p in places)
            or f.get("symbol", "").rpartition(".")[2] in classes
        )
    ]


def explain_fail(report: dict, converted: Path, findings: list[dict]) -> tuple[str, str]:
    """``FAIL-FINDING`` (the post-apply scan reports a manual/error finding in the failing
    layer), ``FAIL-NOTED`` (only an info note there: a Keras 3 difference, e.g. KM534),
    ``FAIL-SILENT`` (the failing layer is located in the project and kmigrate says
    nothing there) or ``FAIL-UNLOCATED`` (no project code named by the failure), and a
    sentence: the first failing check, the failing layer, the finding(s)."""
    places = failing_places(report, converted)
    first = first_failure(report)
    where = ", ".join(f"{p.path}:{p.name}" for p in places[:4]) or "not in the project"
    hits = findings_in(places, findings)
    if not hits:
        notes = notes_on(report, places, findings)
        if notes:
            rules = ", ".join(f"{f['rule']} {f['path']}:{f['line']}" for f in notes[:4])
            return "FAIL-NOTED", (
                f"{first} | layer {where} | a Keras 3 difference noted: {rules} "
                f"({len(notes)} in all)"
            )
        if not places:
            return "FAIL-UNLOCATED", f"{first} | failing layer not located in the project code"
        return "FAIL-SILENT", f"{first} | layer {where} | kmigrate silent"
    rules = ", ".join(
        f"{f['rule']} {f['path']}:{f['line']}" for f in sorted(hits, key=_finding_key)[:4]
    )
    return "FAIL-FINDING", f"{first} | layer {where} | finding {rules} ({len(hits)} in all)"


def _finding_key(finding: dict) -> tuple:
    return (finding.get("severity") != "error", finding.get("path", ""), finding.get("line", 0))


# --- running ----------------------------------------------------------------------------


def _kmigrate() -> list[str]:
    script = Path(sys.executable).with_name("kmigrate")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kmigrate"]


def _copies(workdir: Path, repo: Path, factory: Path | None, factory_file: str) -> Path:
    """``orig`` and ``conv`` (applied) copies of `repo` under ``workdir/<name>``, with
    `factory` copied into both as `factory_file` when given."""
    target = workdir / repo.name
    shutil.rmtree(target, ignore_errors=True)
    for side in ("orig", "conv"):
        shutil.copytree(repo, target / side, symlinks=True)
        if factory is not None:
            shutil.copyfile(factory, target / side / factory_file)
    subprocess.run(
        [*_kmigrate(), "apply", ".", "-q", "--no-cache"], cwd=target / "conv", check=False
    )
    return target


def _scan(converted: Path) -> list[dict]:
    """The findings of ``kmigrate scan -f json`` on the converted copy (after apply)."""
    done = subprocess.run(
        [*_kmigrate(), "scan", ".", "-f", "json", "-q", "--no-cache", "-j", "1"],
        cwd=converted,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return json.loads(done.stdout).get("findings", [])
    except json.JSONDecodeError:
        print(f"scan of {converted} gave no JSON: {done.stderr.strip()[-300:]}", flush=True)
        return []


@dataclass
class Row:
    repo: str
    factory: str
    outcome: str  # classify()'s outcome
    line: str  # the verdict line
    fail: str = ""  # for a FAIL whose reference ran: explain_fail()'s kind
    why: str = ""  # and its sentence


def _run(entries: list, batch: bool) -> tuple[list, dict[int, str]]:
    from kmigrate.parity.runner import run_parity_batch  # noqa: PLC0415

    errors: dict[int, str] = {}
    if batch:
        reports = run_parity_batch(
            entries, on_usage_error=lambda index, error: errors.__setitem__(index, str(error))
        )
        return reports, errors
    reports = []
    for index, entry in enumerate(entries):  # one at a time: a batch of one
        done = run_parity_batch(
            [entry], on_usage_error=lambda _, error, i=index: errors.__setitem__(i, str(error))
        )
        reports.extend(done)
    return reports, errors


def survey(
    workdir: Path,
    repo: Path,
    factory_file: str,
    *,
    factory: Path | None = None,
    batch: bool = False,
) -> list[Row]:
    """One row per factory of one repository; each report written to
    ``WORKDIR/<repo>/<factory>.parity.txt`` (and ``.json``) as `kmigrate parity` renders it."""
    from rich.console import Console  # noqa: PLC0415

    from kmigrate.parity.report import render  # noqa: PLC0415
    from kmigrate.parity.runner import ParityEntry  # noqa: PLC0415

    target = _copies(workdir, repo, factory, factory_file)
    names = factories(target / "orig" / factory_file)
    entries = [
        ParityEntry(
            f"{target / 'conv' / factory_file}:{name}",
            reference=f"{target / 'orig' / factory_file}:{name}",
        )
        for name in names
    ]
    reports, errors = _run(entries, batch)
    for index, (name, report) in enumerate(zip(names, reports)):
        path = target / f"{name}.parity.txt"
        if report is None:
            path.write_text(f"usage error: {errors.get(index, '')}\n")
            continue
        with path.open("w", encoding="utf-8") as handle:
            render(report, Console(file=handle, width=120, force_terminal=False))
        data = json.dumps(report.to_dict(), indent=1, default=str)
        (target / f"{name}.parity.json").write_text(data, encoding="utf-8")
    return read_rows(target, repo.name, names)


def read_rows(target: Path, repo: str, names: list[str]) -> list[Row]:
    """The rows of one repository from the reports in ``WORKDIR/<repo>`` (written by
    `survey`, or by an earlier run with ``--from-reports``), each FAIL explained against
    the post-apply scan of ``conv``."""
    findings: list[dict] | None = None
    rows = []
    for name in names:
        outcome, line = classify((target / f"{name}.parity.txt").read_text(encoding="utf-8"))
        row = Row(repo, name, outcome, line)
        report = target / f"{name}.parity.json"
        if outcome == "FAIL" and report.is_file():
            if findings is None:
                findings = _scan(target / "conv")
            data = json.loads(report.read_text(encoding="utf-8"))
            row.fail, row.why = explain_fail(data, target / "conv", findings)
        print(f"{row.repo:24s} {name:46s} {outcome:12s} {line[:90]}", flush=True)
        if row.fail:
            print(f"    {row.fail}: {row.why}", flush=True)
        rows.append(row)
    return rows


def summary(rows: list[Row]) -> list[str]:
    """Per repository and in all: the outcomes, then every FAIL with its explanation."""
    lines = [
        "",
        "per repository: PASS / FAIL (with a finding, noted, kmigrate silent, not located) / other",
    ]
    for repo in dict.fromkeys(r.repo for r in rows):
        mine = [r for r in rows if r.repo == repo]
        count = Counter(r.outcome for r in mine)
        kinds = Counter(r.fail for r in mine if r.fail)
        other = ", ".join(f"{n} {k}" for k, n in sorted(count.items()) if k not in ("PASS", "FAIL"))
        lines.append(
            f"  {repo:24s} {count['PASS']:2d} PASS  {count['FAIL']:2d} FAIL "
            f"({kinds['FAIL-FINDING']} finding, {kinds['FAIL-NOTED']} noted, "
            f"{kinds['FAIL-SILENT']} silent, "
            f"{kinds['FAIL-UNLOCATED']} not located)  {other or '-'}"
        )
    fails = [r for r in rows if r.fail]
    if fails:
        lines.append("")
        lines.append("every FAIL whose reference ran:")
        lines.extend(f"  {r.repo}:{r.factory}  {r.fail}  {r.why}" for r in fails)
    totals = Counter(r.outcome for r in rows)
    kinds = Counter(r.fail for r in fails)
    compared = totals["PASS"] + totals["FAIL"]
    lines.append(
        f"\n{len(rows)} factories: {totals['PASS']} PASS on every backend, "
        f"{totals['FAIL']} FAIL ({kinds['FAIL-FINDING']} FAIL with a finding in the failing "
        f"layer, {kinds['FAIL-NOTED']} FAIL at a Keras 3 difference noted there, "
        f"{kinds['FAIL-SILENT']} FAIL with kmigrate silent, "
        f"{kinds['FAIL-UNLOCATED']} FAIL with the layer not located), "
        f"{totals['NOT-COMPARED']} with checks not compared, "
        f"{totals['NO-REFERENCE']} whose original did not run, "
        f"{totals['ERROR']} without a verdict; {totals['PASS']} of {compared} compared"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path, help="where the copies and reports go")
    parser.add_argument(
        "repos", nargs="*", help="REPO or REPO:FACTORY_FILE (none: every row of REPOS.tsv)"
    )
    parser.add_argument(
        "--batch", action="store_true", help="one parity batch per repository (cheaper)"
    )
    parser.add_argument(
        "--factories",
        type=Path,
        help="a folder of <checkout-name>.py factory modules (and REPOS.tsv), copied into "
        f"both copies as {FACTORY_FILE}: benchmarks/real_models",
    )
    parser.add_argument(
        "--src", type=Path, default=Path("/tmp/rp_src"), help="where REPOS.tsv's checkouts are"
    )
    parser.add_argument(
        "--deps", type=Path, help="a folder of extra packages put on the workers' PYTHONPATH"
    )
    parser.add_argument(
        "--from-reports",
        action="store_true",
        help="run nothing: the totals and FAIL explanations from the reports and copies "
        "an earlier run left in WORKDIR",
    )
    args = parser.parse_args(argv)
    if args.deps:
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(args.deps.absolute()), os.environ.get("PYTHONPATH", "")) if p
        )
    table = args.factories / "REPOS.tsv" if args.factories else None
    rows_tsv = read_repos(table) if table and table.is_file() else []
    # a checkout whose code cannot be imported twice in one process (tensorflow/addons
    # registers its ops' gradients with TensorFlow at import): one parity run per factory
    one_by_one = {row["dir"] for row in rows_tsv if row.get("batch") == "no"}
    specs = args.repos
    if not specs:
        if not rows_tsv:
            parser.error("give REPO folders, or --factories with a REPOS.tsv")
        specs = [str(args.src / row["dir"]) for row in rows_tsv]
    started = time.monotonic()
    rows: list[Row] = []
    for spec in specs:
        path, _, factory_file = spec.partition(":")
        repo = Path(path).absolute()
        factory = None
        if args.factories is not None:
            factory = args.factories / f"{repo.name}.py"
            if not factory.is_file():
                parser.error(f"no factory module {factory} for {repo}")
        factory_file = factory_file or FACTORY_FILE
        if args.from_reports:
            target = args.workdir / repo.name
            names = factories(target / "orig" / factory_file)
            rows.extend(read_rows(target, repo.name, names))
            continue
        rows.extend(
            survey(
                args.workdir,
                repo,
                factory_file,
                factory=factory,
                batch=args.batch and repo.name not in one_by_one,
            )
        )
    for line in summary(rows):
        print(line)
    print(f"wall time {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
