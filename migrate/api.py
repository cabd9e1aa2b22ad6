"""kmigrate's public Python API: what ``scan`` and ``apply`` do, without the command line.

Every function returns plain data, the same the JSON report holds (``docs/report.md``),
so a tool or a test reads findings the way a CI job reads ``scan -f json``::

    from kmigrate import api

    report = api.scan(["src/"])                 # {"version": 1, "summary": ..., "findings": [...]}
    for finding in report["findings"]:
        print(finding["path"], finding["line"], finding["rule"], finding["message"])

    changes = api.apply(["src/"], write=False)  # what apply would write, file by file
    new_text = api.apply_to_text(old_text)      # one module's text, rewritten

Nothing here imports TensorFlow, Keras, JAX or PyTorch. A bad setting (an unknown rule
code, a broken ``[tool.kmigrate]`` table) raises :class:`SettingsError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kmigrate.engine.apply import fix_module_text
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.registry import all_rules, select_rules
from kmigrate.run.settings import RunSettings, SettingsError

__all__ = ["FileChange", "SettingsError", "apply", "apply_to_text", "scan", "scan_text"]


@dataclass(frozen=True)
class FileChange:
    """One file ``apply`` rewrites: its path as reports show it, where it lies, the text
    before and after, how many findings the rewrite fixed, and whether it was written."""

    path: str
    location: Path
    old_text: str
    new_text: str
    fixed: int
    written: bool


def _settings(
    paths: Sequence[str | Path],
    select: Sequence[str],
    ignore: Sequence[str],
    jobs: int | None,
    config: str | Path | None,
    cache: bool,
) -> RunSettings:
    return RunSettings([str(p) for p in paths], select, ignore, jobs, config, use_cache=cache)


def scan(
    paths: Sequence[str | Path],
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    jobs: int | None = 1,
    config: str | Path | None = None,
    cache: bool = False,
) -> dict[str, Any]:
    """The JSON report of ``kmigrate scan PATHS`` as a dict (``version``, ``summary``,
    ``files``, ``findings``). ``jobs=1`` runs in this process; ``cache`` uses and fills
    the project's result cache, as the command does by default."""
    from kmigrate.project.backend_pins import find_backend_pins
    from kmigrate.report.json_report import report_json
    from kmigrate.report.summary import build
    from kmigrate.run.runner import run_jobs

    settings = _settings(paths, select, ignore, jobs, config, cache)
    result = run_jobs(
        settings.jobs_for(), settings.rule_ids, settings.jobs, cache=settings.result_cache()
    )
    root = settings.config.root
    mentions = {r.path: r.mentions_backend for r in result.files}
    pins = find_backend_pins(settings.paths, root, [r.path for r in result.files], mentions)
    return report_json(build(result, root=root, backend_pins=pins, rules=settings.rules))


def apply(
    paths: Sequence[str | Path],
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    jobs: int | None = 1,
    config: str | Path | None = None,
    write: bool = False,
) -> list[FileChange]:
    """What ``kmigrate apply PATHS`` rewrites, one :class:`FileChange` per file. With
    ``write=True`` each file is written atomically (encoding, BOM, line endings and mode
    kept), and left untouched if it changed since it was read; git state is not checked
    (the command's ``--allow-dirty`` behaviour)."""
    from kmigrate.engine.sources import read_source, write_atomic, write_new
    from kmigrate.run.runner import run_jobs

    settings = _settings(paths, select, ignore, jobs, config, cache=False)
    planned = settings.jobs_for(fix=True)
    result = run_jobs(planned, settings.rule_ids, settings.jobs)
    locations = {job.display: Path(job.path) for job in planned}
    changes = []
    for report in result.files:
        if report.new_text is None:
            continue
        location = locations.get(report.path, settings.config.root / report.path)
        if report.location:  # a helper module the rewrites call, maybe new
            location = Path(report.location)
        written = False
        if write and report.location and not report.old_text and not location.exists():
            write_new(location, report.new_text.encode("utf-8"))
            written = True
        elif write:
            source = read_source(location)
            if source.text == report.old_text:
                write_atomic(location, source.encode(report.new_text))
                written = True
        changes.append(
            FileChange(
                report.path, location, report.old_text or "", report.new_text, report.fixed, written
            )
        )
    return changes


def apply_to_text(text: str, select: Sequence[str] | None = None, path: str = "<memory>") -> str:
    """Module ``text`` as ``apply`` rewrites it with the selected rules (all when None),
    the module read alone (no project around it)."""
    ruleset = RuleSet(select_rules(select), claimants=all_rules())  # every rule's claims
    return fix_module_text(path, text, ruleset, CONTEXT_SPEC).text


def scan_text(
    text: str, path: str = "module.py", select: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The findings of module ``text`` read alone, as the JSON report writes them: the
    runner's own text scan (unused suppressions included), so the two never drift."""
    from kmigrate.report.json_report import finding_json
    from kmigrate.run.runner import scan_text as scan_module_text

    return [finding_json(f) for f in scan_module_text(text, select, path)]
