"""What every rule-running command shares: its options and the settings they make.

``scan``, ``apply``, ``check`` and ``baseline`` take the same paths, ``--select``,
``--ignore``, ``--jobs``, ``--config``, ``--shard`` and ``--no-cache``; they are declared
here once (:func:`common_run_options`) and merged with the config file into a
:class:`RunSettings`. Apart from ``cli`` so that ``check`` can use them without
importing the command line that loads it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import click

from kmigrate.run.settings import RunSettings, SettingsError


def run_settings(paths, select, ignore, jobs, config_path, default_root=None) -> RunSettings:
    """The run's settings from the options every rule-running command shares; --shard and
    --no-cache arrive through the click context (:func:`common_run_options`);
    ``default_root``: see :class:`RunSettings`."""
    meta = getattr(click.get_current_context(silent=True), "meta", {})
    try:
        return RunSettings(
            paths,
            select,
            ignore,
            jobs,
            config_path,
            shard=meta.get(_SHARD_KEY),
            use_cache=not meta.get(_NO_CACHE_KEY, False),
            default_root=default_root,
        )
    except SettingsError as error:
        raise click.UsageError(str(error)) from None


def run_with_progress(settings: RunSettings, jobs, quiet: bool, label: str):
    """Run jobs with a progress bar on a terminal (never when piped or in CI)."""
    from kmigrate.run.runner import run_jobs

    show = not quiet and sys.stderr.isatty() and len(jobs) > 20
    cache = settings.result_cache()
    if not show:
        return run_jobs(jobs, settings.rule_ids, settings.jobs, cache=cache)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=_stderr_console(),
    ) as progress:
        task = progress.add_task(label, total=len(jobs))
        return run_jobs(
            jobs, settings.rule_ids, settings.jobs, lambda n: progress.advance(task, n), cache
        )


class OutputError(click.ClickException):
    """A report or baseline that cannot be written (full disk, permissions): exit 2,
    like a usage error, without the usage text."""

    exit_code = 2


def write_output(output: str, text: str | Callable[[Callable[[str], object]], None]) -> None:
    """Write a report to ``output`` atomically (temporary file in the same folder, then
    a rename): on a full disk, or when the report fails half-way, the old report is
    intact and no partial file is left. ``text``: the report, or a function handing its
    text to the ``write`` it is given piece by piece (streamed into the temporary file,
    never held whole: :func:`kmigrate.report.write_data`)."""
    from kmigrate.engine.sources import write_whole

    def fill(temp: BinaryIO) -> None:
        assert callable(text)
        text(lambda piece: temp.write(piece.encode("utf-8")))

    existed = os.path.lexists(output)
    try:
        write_whole(Path(output), fill if callable(text) else text.encode("utf-8"))
    except OSError as error:
        kept = "the old file is unchanged" if existed else "nothing was written"
        raise OutputError(f"cannot write {output}: {error.strerror or error}; {kept}") from None


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


_SHARD_KEY = "kmigrate.shard"
_NO_CACHE_KEY = "kmigrate.no_cache"


def _remember_shard(ctx: click.Context, param: click.Parameter, value: str | None):
    if value is not None:
        from kmigrate.run.runner import parse_shard

        try:
            ctx.meta[_SHARD_KEY] = parse_shard(value)
        except ValueError as error:
            raise click.BadParameter(str(error), ctx, param) from None
    return value


def _remember_no_cache(ctx: click.Context, param: click.Parameter, value: bool):
    ctx.meta[_NO_CACHE_KEY] = value
    return value


def common_run_options(func):
    """Options every rule-running command takes.

    ``--shard`` and ``--no-cache`` are not passed to the command function:
    :class:`RunSettings` reads them from the click context.
    """
    options = [
        click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=str)),
        click.option(
            "--select",
            multiple=True,
            metavar="CODES",
            help="Only these rules: ids or prefixes, comma-separated (KM2,KM301).",
        ),
        click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules."),
        click.option(
            "--jobs",
            "-j",
            type=click.IntRange(min=1),
            help="Worker processes [default: CPU count].",
        ),
        click.option(
            "--config",
            "config_path",
            type=click.Path(exists=True, dir_okay=False),
            help="pyproject.toml to read [tool.kmigrate] from [default: nearest one].",
        ),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar, no summary line."),
        click.option(
            "--shard",
            metavar="K/N",
            expose_value=False,
            callback=_remember_shard,
            help="Only shard K of N of the files (stable split by path; merge the JSON "
            "reports with `kmigrate merge`).",
        ),
        click.option(
            "--no-cache",
            is_flag=True,
            expose_value=False,
            callback=_remember_no_cache,
            help="Ignore and do not write the result cache (.kmigrate_cache/).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func
