"""The ``kmigrate`` command line.

Imports stay lazy: ``scan`` and ``check`` must start fast and never import LibCST,
TensorFlow, Keras, JAX or PyTorch; commands that need them load them inside.
"""

from __future__ import annotations

import importlib
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import click

from kmigrate import __version__
from kmigrate.cli.options import (
    _stderr_console,
    common_run_options,
    run_settings,
    run_with_progress,
    write_output,
)
from kmigrate.engine.model import RULE_CRASHED
from kmigrate.report.common import printable
from kmigrate.run.settings import RunSettings

INTERRUPTED = 130  # the shell's status for a process ended by SIGINT (128 + 2)

PARITY_RUNS_CODE = (
    "kmigrate: --parity will run this repository's own code (each rewritten model factory "
    "and the modules it imports, on every backend) after rewriting"
)

# Commands implemented in their own modules, imported only when invoked.
LAZY_COMMANDS: dict[str, str] = {
    "check": "kmigrate.cli.check:check_command",
    "baseline": "kmigrate.cli.check:baseline_command",
    "merge": "kmigrate.cli.merge:merge_command",
    "parity": "kmigrate.parity.cli:parity_command",
    "convert-weights": "kmigrate.parity.convert_weights:convert_weights_command",
}


class ReportFormat(click.Choice):
    """``--format``: the names in :data:`kmigrate.report.FORMATS`, read when the option is
    used, so a new format is its module plus its line there (docs/architecture.md)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from kmigrate.report import FORMATS

        return tuple(FORMATS)

    @choices.setter
    def choices(self, _value: object) -> None:
        pass  # always read from FORMATS


class LazyGroup(click.Group):
    """A click group whose heavier subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        available = [name for name in LAZY_COMMANDS if _module_exists(LAZY_COMMANDS[name])]
        return sorted([*super().list_commands(ctx), *available])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            target = LAZY_COMMANDS[cmd_name]
            if not _module_exists(target):
                return None
            module_name, _, attr = target.partition(":")
            return getattr(importlib.import_module(module_name), attr)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        """Ctrl-C anywhere (discovery, the project index, a report) exits 130 like any
        interrupted program, not click's "Aborted!" with 1, which for ``apply`` and
        ``check`` means something else. ``apply`` says more where it writes."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("kmigrate: interrupted", err=True)
            raise click.exceptions.Exit(INTERRUPTED) from None


def _module_exists(target: str) -> bool:
    import importlib.util

    module_name = target.partition(":")[0]
    try:
        return importlib.util.find_spec(module_name) is not None
    except ModuleNotFoundError:
        return False


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kmigrate")
def main() -> None:
    """Move TensorFlow / Keras 2 code to multi-backend Keras 3.

    \b
    kmigrate scan src/            what keeps this code on TensorFlow?
    kmigrate apply src/ --diff    preview the automatic rewrites
    kmigrate apply src/           rewrite in place (formatting and comments kept)
    kmigrate parity ...           prove the numbers agree on TF, JAX and PyTorch
    kmigrate explain KM201        what a rule finds, why, and its fix
    """


@main.command()
@common_run_options
@click.option(
    "--format",
    "-f",
    "fmt",
    type=ReportFormat(),
    default="table",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False),
    help="Write the report here ('-': standard output).",
)
@click.option(
    "--details/--no-details",
    default=None,
    help="Table: list every finding file by file [default: when there are at most 200].",
)
@click.option(
    "--statistics",
    is_flag=True,
    help="Only one line per rule with its counts, most frequent first (JSON with --format "
    "json; table otherwise: html, sarif, markdown, github and gitlab are refused).",
)
def scan(paths, select, ignore, jobs, config_path, quiet, fmt, output, details, statistics):
    """Report which code keeps PATHS on TensorFlow. Never writes a source file.

    Findings say where a call is (model code, training loop, data pipeline),
    whether `kmigrate apply` fixes it, and what to do when it cannot.
    """
    from kmigrate.report import FORMATS, build, one_line_summary, render_data, write_data

    if fmt not in FORMATS:
        raise click.UsageError(f"format {fmt!r} is not available in this build")
    if statistics and fmt not in ("table", "json"):
        raise click.UsageError(f"--statistics prints a table or JSON, not {fmt}")
    output = _output_target(output)
    settings = run_settings(paths, select, ignore, jobs, config_path)
    planned = settings.jobs_for()
    if not planned and settings.shard is None:  # a shard of a small tree may hold none
        where = ", ".join(paths) if paths else "."
        raise click.UsageError(f"no Python file or notebook found in {where} (mistyped path?)")
    result = run_with_progress(settings, planned, quiet, "scanning")
    _add_unused_suppressions(settings, planned, result, select)
    if statistics:
        from kmigrate.report.statistics import render_statistics

        report = build(result, rules=settings.rules)
        _emit(render_statistics(report, "json" if fmt == "json" else "table"), output)
        return
    from kmigrate.project.backend_pins import find_backend_pins

    root = settings.config.root
    mentions = {r.path: r.mentions_backend for r in result.files}  # noted where they were read
    pins = find_backend_pins(settings.paths, root, [r.path for r in result.files], mentions)
    data = build(result, root=root, backend_pins=pins, rules=settings.rules)
    del result  # the report data holds what the report needs
    if output:  # streamed into the file where the format allows (JSON, SARIF)
        write_output(
            output, partial(write_data, data, fmt, color=False, root=root, details=details)
        )
    else:
        color = sys.stdout.isatty()
        click.echo(render_data(data, fmt, color=color, root=root, details=details), nl=False)
    if output and not quiet:
        click.echo(f"kmigrate: {one_line_summary(data)}; report written to {output}", err=True)
    if data.incomplete:  # (only then are the findings sorted, if the report did not)
        exit_if_incomplete(data.findings)


def _add_unused_suppressions(settings: RunSettings, planned, result, select) -> None:
    """KM903 is opt-in: only when selected by its id (or `check --report-unused-...`)."""
    if not select:
        return  # nothing selected explicitly; and kmigrate.cli.check stays unimported
    from kmigrate.cli.check import selects_unused_suppressions, unused_suppression_findings

    if not selects_unused_suppressions(select):
        return
    by_path = {report.path: report for report in result.files}
    for finding in unused_suppression_findings(settings, planned, result):
        by_path[finding.path].findings.append(finding)


def exit_if_incomplete(findings) -> None:
    """Exit 3 when a rule crashed (KM902): the report is missing that rule's findings."""
    crashed = sorted({f.symbol or f.rule for f in findings if f.rule == RULE_CRASHED})
    if crashed:
        click.echo(
            f"kmigrate: incomplete run: rule(s) {', '.join(crashed)} crashed "
            f"({RULE_CRASHED} findings); "
            "please report the bug",
            err=True,
        )
        sys.exit(3)


def _output_target(output: str | None) -> str | None:
    """``-o -`` is standard output; a folder that does not exist is a usage error (exit 2)
    before any work, not a traceback after it."""
    if output in (None, "-"):
        return None
    folder = Path(output).parent
    if not folder.is_dir():
        raise click.UsageError(f"cannot write {output}: folder {folder} does not exist")
    return output


def _emit(text: str, output: str | None) -> None:
    if output:
        write_output(output, text)
    else:
        click.echo(text, nl=False)


@main.command()
@common_run_options
@click.option("--diff", is_flag=True, help="Print a unified diff instead of writing files.")
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Dry run for CI: write nothing, list the files that would change (the diff too "
    "with --diff) and exit 1 when there is something to rewrite.",
)
@click.option(
    "--allow-dirty",
    is_flag=True,
    help="Also rewrite files with uncommitted git changes (modified, staged, untracked).",
)
@click.option(
    "--parity",
    is_flag=True,
    help="Then run `kmigrate parity` on each rewritten model factory (build_model...) "
    "against its original, on every installed backend; exit 1 on a mismatch. It runs "
    "the repository's own code (the factories and every module they import, in "
    "subprocesses; entry points may come from the tree's [tool.kmigrate.parity]): use it "
    "only on code you trust, or in a sandbox.",
)
@click.option(
    "--follow-outside",
    is_flag=True,
    help="Also rewrite a named path that resolves outside the repository it sits in (a "
    "committed symlink such as src -> ../elsewhere); refused by default (exit 2).",
)
def apply(
    paths,
    select,
    ignore,
    jobs,
    config_path,
    quiet,
    diff,
    check_only,
    allow_dirty,
    parity,
    follow_outside,
):
    """Rewrite PATHS in place: tf.keras -> keras, tf ops in model code -> keras.ops,
    tf.random -> keras.random, legacy saving and Keras 2 APIs.

    Only exact rewrites are made; the rest is reported. Running it twice changes
    nothing the second time. Writes are atomic and keep encoding, line endings and
    file mode; a file whose rewrite would not parse is left untouched, and so is a
    file with uncommitted git changes unless --allow-dirty.

    \b
    Exit status: 0 done; 1 a file that needed rewriting was left untouched
    (uncommitted changes, read-only, ...) or --check found rewrites;
    3 the run is incomplete (a rule crashed: KM902); 130 interrupted.
    """
    if parity and (diff or check_only):
        raise click.UsageError(
            "--parity checks the rewritten files: run it without --diff or --check"
        )
    if not (follow_outside or diff or check_only):
        _refuse_paths_leaving_their_repository(paths)
    if parity:  # said before anything runs, where the user can still stop it
        click.echo(PARITY_RUNS_CODE, err=True)
    settings = run_settings(paths, select, ignore, jobs, config_path)
    planned = settings.jobs_for(fix=True)
    try:
        result = run_with_progress(settings, planned, quiet, "rewriting")
    except KeyboardInterrupt:
        click.echo("kmigrate: interrupted; no file was written", err=True)
        sys.exit(INTERRUPTED)
    changed = [r for r in result.files if r.new_text is not None]
    untouched = [r for r in result.files if r.error]
    for report in untouched:
        click.echo(printable(f"{report.path}: {report.error}"), err=True)
    locations = {job.display: Path(job.path) for job in planned}
    dry_run = diff or check_only  # like `black --check`: --check alone never writes
    if diff:
        _print_patch(settings, changed, locations)
    elif check_only:
        for report in changed:
            click.echo(printable(f"would rewrite {report.path}"))
    if dry_run:
        written = changed
    else:
        written = _write_changes(settings, changed, locations, allow_dirty)
    remaining = result.findings
    _say_long_lines(written, quiet)
    crashed = sorted({f.symbol or f.rule for f in remaining if f.rule == RULE_CRASHED})
    if not quiet:
        fixed = sum(r.fixed for r in written)
        verb = "would rewrite" if dry_run else "rewrote"
        manual = len(remaining)
        click.echo(
            f"{verb} {len(written)} file(s), {fixed} fix(es); {manual} finding(s) left for a person"
            + (" (run `kmigrate scan` to see them)" if manual else ""),
            err=True,
        )
    if crashed:
        click.echo(
            f"kmigrate: incomplete run: rule(s) {', '.join(crashed)} crashed "
            f"({RULE_CRASHED} findings); "
            "their fixes are missing from the files concerned (please report the bug)",
            err=True,
        )
        sys.exit(3)
    if parity and not dry_run and not _parity_after_apply(settings, written, planned):
        sys.exit(1)
    if untouched or len(written) < len(changed) or (check_only and changed):
        sys.exit(1)


def _say_long_lines(written, quiet: bool) -> None:
    """A rewrite that could not keep a line within the project's line length says where."""
    places = [f"{r.path}:{n}" for r in written for n in r.long_lines]
    if places and not quiet:
        click.echo(
            f"kmigrate: {len(places)} rewritten line(s) are longer than the project's line "
            f"length and could not be wrapped safely (run your formatter): {', '.join(places[:10])}"
            + (" ..." if len(places) > 10 else ""),
            err=True,
        )


def _refuse_paths_leaving_their_repository(paths) -> None:
    """A named path whose real path lies outside the repository it is named in would
    have apply rewrite files no uncommitted-changes check sees: a usage error."""
    from kmigrate.project.named_paths import leaving_paths

    leaving = leaving_paths(Path(p) for p in paths or (".",))
    if leaving:
        first = leaving[0]
        raise click.UsageError(
            printable(
                f"{first.named} resolves to {first.target}, outside the repository it sits "
                f"in ({first.repository}); apply would rewrite files there. Name the target "
                "itself, or pass --follow-outside"
                + (f" ({len(leaving) - 1} more path(s) like it)" if len(leaving) > 1 else "")
            )
        )


def _parity_after_apply(settings: RunSettings, written, planned) -> bool:
    """Prove the rewritten factories against their originals (kept in memory)."""
    from kmigrate.run.apply_parity import check_parity, entry_points, original_texts

    locations = {job.display: Path(job.path) for job in planned}
    changed = [
        (locations.get(r.path, Path(r.path)), r.old_text or "", r.new_text or "") for r in written
    ]
    points = entry_points(changed, settings.config)
    console = _stderr_console()
    if not points:
        console.print("parity: no rewritten file defines a model factory (build_model ...)")
        return True
    return check_parity(points, console, original_texts(changed))


def _write_changes(settings: RunSettings, changed, locations=None, allow_dirty=True) -> list:
    """Write each rewritten file atomically; the reports actually written.

    A file is left untouched (with a message) when it changed since it was read,
    is read-only or hard-linked, cannot be written, or has uncommitted git changes
    (unless ``allow_dirty``). Ctrl-C stops between two files, never inside one.
    """
    from kmigrate.engine.sources import (
        SourceError,
        deferred_signals,
        read_source,
        write_atomic,
        write_new,
    )

    locations = locations or {}
    paths = {}
    for report in changed:
        path = locations.get(report.path) or settings.config.root / report.path
        if report.location:  # a file no job names: a helper module, maybe new
            path = Path(report.location)
        paths[report.path] = path if path.exists() or report.location else Path(report.path)
    written: list = []
    try:
        refused = set() if allow_dirty else _dirty(changed, paths)
        for report in changed:
            if report.path in refused:
                continue
            path = paths[report.path]
            try:
                with deferred_signals():  # Ctrl-C lands after the file and its count
                    if report.location and not report.old_text and not path.exists():
                        write_new(path, report.new_text.encode("utf-8"))
                        written.append(report)
                        continue
                    source = read_source(path)
                    if source.text != report.old_text:
                        click.echo(
                            printable(f"{report.path}: changed during the run; left untouched"),
                            err=True,
                        )
                        continue
                    write_atomic(path, source.encode(report.new_text))
                    written.append(report)
            except (OSError, SourceError, UnicodeError) as error:
                click.echo(printable(f"{report.path}: not written: {error}"), err=True)
    except KeyboardInterrupt:
        click.echo(
            f"kmigrate: interrupted after writing {len(written)} of {len(changed)} file(s); "
            "every file is either fully rewritten or untouched (run apply again to finish)",
            err=True,
        )
        sys.exit(INTERRUPTED)
    return written


def _dirty(changed, paths) -> set[str]:
    """The reports (by path) whose file has uncommitted git changes; says which and why."""
    if not changed:
        return set()
    from kmigrate.project.gitstate import dirty_files

    dirty = {d.path: d for d in dirty_files([paths[r.path] for r in changed])}
    pairs = [(r, dirty[paths[r.path]]) for r in changed if paths[r.path] in dirty]
    if pairs:
        listing = "".join(f"\n  {printable(r.path)} ({printable(d.state)})" for r, d in pairs)
        click.echo(
            f"kmigrate: {len(pairs)} file(s) with uncommitted changes left untouched "
            f"(commit or stash them, or pass --allow-dirty):{listing}",
            err=True,
        )
    return {r.path for r, _ in pairs}


def _print_patch(settings: RunSettings, changed, locations: dict[str, Path]) -> None:
    """The rewrites as one patch: bytes unchanged when piped (``| git apply``), control
    characters escaped on a terminal (see report.patch)."""
    from kmigrate.engine.sources import SourceError, read_source
    from kmigrate.project.discover import raw_display_path
    from kmigrate.report.patch import terminal_view, unified_patch

    root = settings.config.root
    for report in changed:
        location = locations.get(report.path)
        old, new = report.old_text or "", report.new_text or ""
        name = os.fsencode(raw_display_path(location, root) if location else report.path)
        try:
            source = read_source(location or root / report.path)
            if source.text != old:
                raise SourceError("changed since it was read")
            old_bytes, new_bytes = source.data, source.encode(new)
        except (SourceError, UnicodeError):  # as UTF-8, the best a patch can say then
            old_bytes, new_bytes = (t.encode("utf-8", "surrogateescape") for t in (old, new))
        patch = unified_patch(name, old_bytes, new_bytes)
        if sys.stdout.isatty():
            click.echo(terminal_view(patch), nl=False)
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(patch)
            sys.stdout.buffer.flush()


@main.command(name="rules")
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["table", "markdown", "json"]),
    default="table",
    show_default=True,
    help="How to print the catalog.",
)
@click.option(
    "--catalog",
    is_flag=True,
    help="Print the ops catalog's size instead: TF symbols covered, exact, conditional, manual.",
)
def rules_command(fmt: str, catalog: bool) -> None:
    """List every rule: id, name, fixable, summary."""
    if catalog:
        from kmigrate.report.rule_doc import catalog_size_text

        click.echo(catalog_size_text(fmt), nl=False)
        return
    from kmigrate.report.rule_doc import render_rules

    click.echo(render_rules(fmt), nl=False)


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain one rule (KM201) or ops-catalog entry (tf.reduce_mean): what, why, examples."""
    from kmigrate.report.rule_doc import explain_text

    text = explain_text(code)
    if text is None:
        raise click.UsageError(f"no rule or catalog entry named {code!r} (see `kmigrate rules`)")
    click.echo(text, nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
