"""``kmigrate check`` (pre-commit mode) and ``kmigrate baseline``.

``check`` fails (exit 1) only on findings that are neither suppressed nor known:
known means listed in the baseline file or, with ``--baseline-ref REF``, already
present when the file was at REF. It runs on every commit, so it starts fast:
no rich (unless a progress bar is shown on a terminal), no LibCST, no ML framework.
"""

from __future__ import annotations

import fnmatch
import sys
from collections import Counter
from pathlib import Path

import click

from kmigrate.cli.options import (
    OutputError,
    common_run_options,
    run_settings,
    run_with_progress,
)
from kmigrate.engine.model import RULE_CRASHED, UNUSED_SUPPRESSION
from kmigrate.run.settings import RunSettings

CHECK_FORMATS = ("concise", "github", "json")
SEVERITY_ORDER = ("info", "warning", "error")
# A commit fails on warnings and errors: an `info` note (TensorFlow outside model code,
# which runs as it is) is shown but blocks nothing unless the project asks for it.
DEFAULT_FAIL_ON = "warning"


def _settings(paths, select, ignore, jobs, config_path) -> RunSettings:
    # No pyproject.toml: the project is the git repository the command runs in (its
    # top: one cache there, never one per sub-folder), else where it runs; never the
    # folder of the first file named.
    settings = run_settings(paths, select, ignore, jobs, config_path, _repository_root())
    if not paths:
        settings.paths = [settings.config.root]  # default: the whole project
    return settings


def _repository_root() -> Path:
    from kmigrate.project.gitstate import work_tree

    here = Path.cwd().resolve()
    try:
        return work_tree(here) or here
    except OSError:
        return here


def _baseline_file(settings: RunSettings, option: str | None) -> Path:
    if option:
        return Path(option)
    return settings.config.root / settings.config.baseline


def _load_baseline(settings: RunSettings, option: str | None, must_exist: bool = False):
    """(path, Baseline); a malformed file is a usage error (exit 2), and so is a file
    named by ``--baseline`` that is not there (``must_exist``: a typo would otherwise
    mean an empty baseline, and every known finding would block the commit)."""
    from kmigrate.project.baseline import Baseline, BaselineError

    path = _baseline_file(settings, option)
    if must_exist and option and not path.is_file():
        raise click.UsageError(f"--baseline {option}: no such file")
    try:
        return path, Baseline.load(path)
    except BaselineError as error:
        raise click.UsageError(str(error)) from None


def _excluded(display: str, globs: list[str]) -> bool:
    """``[tool.kmigrate] exclude`` applies to files named one by one too (pre-commit)."""
    return any(
        fnmatch.fnmatch(display, g) or display.startswith(g.rstrip("/*") + "/") for g in globs
    )


def _planned_jobs(settings: RunSettings):
    jobs = settings.jobs_for()
    if settings.config.exclude:
        from kmigrate.run.runner import filter_jobs

        exclude = settings.config.exclude
        jobs = filter_jobs(jobs, lambda j: not _excluded(j.display, exclude))
    return jobs


def _with_project_facts(planned) -> list:
    """The jobs with the project's facts, also those the run resolved only after
    analysing them first (a file edited since the last run): the file as it was at
    ``--baseline-ref`` is read in the same project, so a layer whose base class lives
    elsewhere is a layer at the ref too, and its old findings match."""
    from dataclasses import replace

    pending = getattr(planned, "pending", None)
    if pending is None:
        return list(planned)
    return [j if j.facts is not None else replace(j, facts=pending.facts_of(j)) for j in planned]


def _is_checked(settings: RunSettings, jobs, result):
    """Whether a baseline entry's absence in this run means it was fixed."""
    root = settings.config.root
    rule_ids = set(settings.rule_ids)
    reports = {r.path: r for r in result.files}
    ignored = {j.display: j.ignored_codes for j in jobs}
    crashed = {(f.path, f.symbol) for f in result.findings if f.rule == RULE_CRASHED}

    def checked(entry) -> bool:
        if not (root / entry.path).exists():
            return True  # the file is gone, and its findings with it
        report = reports.get(entry.path)
        if report is None or not report.parsed or entry.rule not in rule_ids:
            return False  # not looked at, unparseable now, or rule not run
        if (entry.path, entry.rule) in crashed:
            return False
        return not entry.rule.startswith(ignored.get(entry.path) or ("\0",))

    return checked


def unused_suppression_findings(settings: RunSettings, jobs, result) -> list:
    """KM903 findings for the suppression comments that suppressed nothing."""
    from kmigrate.engine.sources import SourceError, read_source
    from kmigrate.rules.km9_internal.unused_suppression import UnusedSuppression

    by_display = {j.display: j for j in jobs}
    findings = []
    for report in result.files:
        job = by_display.get(report.path)
        if not report.unused_suppressions or job is None:
            continue
        if report.path.endswith(".ipynb"):
            continue  # lines are the cells' virtual module, not the JSON file's lines
        if UNUSED_SUPPRESSION.startswith(job.ignored_codes or ("\0",)):
            continue
        try:
            text = read_source(Path(job.path)).text
        except (OSError, SourceError):
            continue
        findings += UnusedSuppression.findings_for(
            report.path, text, report.unused_suppressions, settings.rule_ids
        )
    return findings


def selects_unused_suppressions(select) -> bool:
    codes = [c.strip().upper() for value in select for c in value.split(",")]
    return any(c and len(c) > 3 and UNUSED_SUPPRESSION.startswith(c) for c in codes)


# -- output --------------------------------------------------------------------


def _concise(finding, color: bool, note: str = "") -> str:
    # the path and message come from the checked tree: no control characters on the terminal
    from kmigrate.report.common import one_line, printable

    location = f"{printable(finding.path)}:{finding.span.line}:{finding.span.column + 1}:"
    rule = finding.rule
    if color:
        location = click.style(location, bold=True)
        rule = click.style(rule, fg="red" if not note else "yellow", bold=True)
    return f"{location} {rule} {one_line(finding.message)}{note}"


def _github(finding) -> str:
    """A workflow annotation in the report's own format (``report.github``): the rule id
    is the title, and the span is always given in full (a hook checks new lines)."""
    from kmigrate.report import github
    from kmigrate.report.common import cell_prefix

    if cell_prefix(finding):  # a notebook: the .ipynb line as stored, the cell named
        return github.annotation(finding)
    span = finding.span
    return github.command(
        github.level(finding),
        finding.message,
        file=finding.path,
        line=span.line,
        col=span.column + 1,
        endLine=span.end_line,
        endColumn=span.end_column + 1,
        title=finding.rule,
    )


def _summary_line(
    new: list, match, baseline_total: int, ref: str | None, updated, fail_on: str = "info"
) -> str:
    known = "baselined remain"
    if ref:
        known = f"{'baselined or ' if baseline_total else ''}already present at {ref}"
    text = f"{len(new)} new, {len(match.baselined)} {known}"
    below = [f for f in new if not _fails(f, fail_on)]
    if below:
        text += f" ({len(below)} new below --fail-on {fail_on}: shown, not failing)"
    if baseline_total and baseline_total != len(match.baselined):
        text += f" ({baseline_total} in the baseline file)"
    fixable = sorted({f.path for f in new if f.fixable})
    if fixable:
        text += (
            f"; {sum(1 for f in new if f.fixable)} new fixable: "
            f"`{_apply_command(fixable)}` rewrites them (staged files count as changed)"
        )
    if updated is not None:
        text += f"; baseline updated: {updated} fixed entr{'y' if updated == 1 else 'ies'} removed"
    elif match.fixed_total:
        text += (
            f"; {match.fixed_total} baselined finding(s) fixed: "
            "run `kmigrate check --update-baseline` to drop them"
        )
    return text


def _fails(finding, fail_on: str) -> bool:
    return SEVERITY_ORDER.index(finding.severity.value) >= SEVERITY_ORDER.index(fail_on)


def _apply_command(paths: list[str]) -> str:
    """A command that works on the files of a blocked commit: they are staged, and
    `apply` leaves files with uncommitted changes alone unless told."""
    import shlex

    from kmigrate.report.common import printable  # no control characters on the terminal

    shown = " ".join(shlex.quote(printable(p)) for p in paths[:5]) + (
        " ..." if len(paths) > 5 else ""
    )
    return f"kmigrate apply --allow-dirty {shown}"


def _fail_on(settings: RunSettings, option: str | None) -> str:
    value = option or settings.config.extra.get("fail-on", DEFAULT_FAIL_ON)
    if value not in SEVERITY_ORDER:
        raise click.UsageError(
            f"fail-on must be one of {', '.join(SEVERITY_ORDER)}, not {value!r} "
            "([tool.kmigrate] fail-on or --fail-on)"
        )
    return value


def _emit(fmt: str, new: list, baselined: list, shown: bool, summary: str, data: dict) -> None:
    """Findings on stdout, the summary on stderr; JSON always lists the baselined ones."""
    if fmt == "json":
        import json

        report = {
            "version": 1,
            "summary": data,
            "findings": [f.to_json() for f in new],
            "baselined": [f.to_json() for f in baselined],
        }
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    color = fmt == "concise" and sys.stdout.isatty()
    lines = [_github(f) if fmt == "github" else _concise(f, color) for f in new]
    if shown:
        lines += [_concise(f, color, " (baselined)") for f in baselined]
    if lines:
        click.echo("\n".join(lines))
    if summary:
        click.echo(summary, err=True)


# -- commands ------------------------------------------------------------------


@click.command(name="check")
@common_run_options
@click.option(
    "--baseline",
    "baseline_option",
    type=click.Path(dir_okay=False),
    help="Baseline file [default: `baseline` in [tool.kmigrate], .kmigrate-baseline.json "
    "at the project root].",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Drop baseline entries that are fixed now (never adds any: the ratchet only tightens).",
)
@click.option(
    "--baseline-ref",
    metavar="REF",
    help="Findings that already exist at this git ref are not new (e.g. HEAD, origin/main).",
)
@click.option(
    "--report-unused-suppressions",
    "report_unused",
    is_flag=True,
    help=f"Report `# kmigrate: ignore` comments that suppress nothing ({UNUSED_SUPPRESSION}).",
)
@click.option("--show-baselined", is_flag=True, help="Also list the baselined findings.")
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITY_ORDER),
    help="Lowest severity of a new finding that fails (exit 1); lower ones are shown only "
    f"[default: `fail-on` in [tool.kmigrate], else {DEFAULT_FAIL_ON}].",
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(CHECK_FORMATS),
    default="concise",
    show_default=True,
    help="concise: path:line:col: KM201 message; github: workflow annotations; json.",
)
def check_command(
    paths,
    select,
    ignore,
    jobs,
    config_path,
    quiet,
    baseline_option,
    update_baseline,
    baseline_ref,
    report_unused,
    show_baselined,
    fail_on,
    fmt,
):
    """Fail (exit 1) on findings in PATHS that are not in the baseline and not suppressed.

    Meant for pre-commit and CI; PATHS default to the whole project. Prints one line
    per new finding (`path:line:col: KM201 message`) and a summary on stderr. Only new
    findings at or above --fail-on fail (default: warning; info notes are shown).
    """
    from kmigrate.project.baseline import match_findings

    if update_baseline and baseline_ref:
        raise click.UsageError(
            "--update-baseline rewrites the baseline file; --baseline-ref compares with a "
            "git ref instead: use one or the other"
        )
    settings = _settings(paths, select, ignore, jobs, config_path)
    fail_on = _fail_on(settings, fail_on)
    baseline_path, baseline = _load_baseline(settings, baseline_option, must_exist=True)
    planned = _planned_jobs(settings)
    result = run_with_progress(settings, planned, quiet, "checking")
    at_ref: Counter[str] | None = None
    if baseline_ref:
        from kmigrate.run.git_baseline import GitError, findings_at_ref

        try:
            at_ref = findings_at_ref(
                baseline_ref,
                _with_project_facts(planned),
                settings.rule_ids,
                settings.jobs,
                settings.config.root,
            )
        except GitError as error:
            raise click.UsageError(f"--baseline-ref: {error}") from None
    match = match_findings(
        result.findings, baseline, at_ref, _is_checked(settings, planned, result)
    )
    new = list(match.new)
    if report_unused or selects_unused_suppressions(select):
        new += unused_suppression_findings(settings, planned, result)
    updated = None
    if update_baseline and match.fixed_total and baseline_path.exists():
        _write_baseline(baseline.without(match.fixed), baseline_path)
        updated = match.fixed_total
    summary_data = {
        "new": len(new),
        "baselined": len(match.baselined),
        "baseline_file_entries": baseline.total(),
        "fixed": match.fixed_total,
        "baseline_updated": updated is not None,
    }
    failing = [f for f in new if _fails(f, fail_on)]
    summary_data["failing"] = len(failing)
    summary_data["fail_on"] = fail_on
    summary = (
        "" if quiet else _summary_line(new, match, baseline.total(), baseline_ref, updated, fail_on)
    )
    _emit(fmt, new, match.baselined, show_baselined, summary, summary_data)
    sys.exit(1 if failing else 0)


def _write_baseline(baseline, path: Path) -> None:
    """Write it atomically; a write that fails (full disk) is exit 2 with the reason, the
    old baseline intact."""
    from kmigrate.project.baseline import BaselineError

    try:
        baseline.write(path)
    except BaselineError as error:
        raise OutputError(str(error)) from None


@click.command(name="baseline")
@common_run_options
@click.option(
    "--output",
    "-o",
    "baseline_option",
    type=click.Path(dir_okay=False),
    help="Where to write [default: `baseline` in [tool.kmigrate], .kmigrate-baseline.json "
    "at the project root].",
)
def baseline_command(paths, select, ignore, jobs, config_path, quiet, baseline_option):
    """Record today's findings in PATHS (default: the whole project) in the baseline file.

    `kmigrate check` then fails only on findings that are not in it. Entries of
    files not scanned this time (and of rules not selected) are kept; entries of
    files that no longer exist are dropped.
    """
    settings = _settings(paths, select, ignore, jobs, config_path)
    baseline_path, old = _load_baseline(settings, baseline_option)
    planned = _planned_jobs(settings)
    result = run_with_progress(settings, planned, quiet, "scanning")
    scanned = {j.display for j in planned}
    rule_ids = set(settings.rule_ids)
    root = settings.config.root

    def replaced(entry) -> bool:
        gone = not (root / entry.path).exists()
        return gone or (entry.path in scanned and entry.rule in rule_ids)

    new = old.replace_paths(replaced, result.findings)
    _write_baseline(new, baseline_path)
    if not quiet:
        files = len({e.path for e in new.entries.values()})
        click.echo(
            f"wrote {_shown(baseline_path)}: {new.total()} finding(s) in {files} file(s)"
            f" ({new.total() - old.total():+d})",
            err=True,
        )


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
