"""What every rule-running command shares: its options and the settings they make.

``scan``, ``apply``, ``check`` and ``baseline`` take the same paths, ``--select``,
``--ignore``, ``--jobs``, ``--config``, ``--shard`` and ``--no-cache``; they are declared
here once (:func:`common_run_options`) and merged with the config file into a
:class:`RunSettings`. Apart from ``cli`` so that ``check`` can use them without
importing the command line that loads it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click


def _codes(values: Sequence[str]) -> list[str]:
    """``--select KM1,KM2 --select KM3`` -> ["KM1", "KM2", "KM3"]."""
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


class RunSettings:
    """Options shared by the commands that run rules, merged with the config file."""

    def __init__(self, paths, select, ignore, jobs, config_path) -> None:
        from kmigrate.commands.config import ConfigError, load_config

        self.paths = [Path(p) for p in paths] or [Path(".")]
        start = self.paths[0]
        try:
            self.config = load_config(start, Path(config_path) if config_path else None)
        except ConfigError as error:
            raise click.UsageError(str(error)) from None
        self.select = _codes(select) or self.config.select
        self.ignore = _codes(ignore) + self.config.ignore
        # --shard and --no-cache (common_run_options) arrive through the click context.
        meta = getattr(click.get_current_context(silent=True), "meta", {})
        self.shard: tuple[int, int] | None = meta.get(_SHARD_KEY)
        self.use_cache: bool = not meta.get(_NO_CACHE_KEY, False)
        from kmigrate.commands.rule_catalog import rule_facts
        from kmigrate.rules.registry import select_rules

        # what selection and the reports read of every rule, without importing the
        # rules when the cache holds it (a warm re-scan runs none)
        self.rules = rule_facts(self.config.root if self.use_cache else None)
        self._check_codes()
        chosen = select_rules(self.select or None, self.ignore or None, self.rules)
        self.rule_ids = tuple(rule.id for rule in chosen)
        from kmigrate.commands.runner import default_jobs

        self.jobs = jobs or self.config.jobs or default_jobs()

    def result_cache(self):
        """The result cache for these rules and this config; None with --no-cache."""
        if not self.use_cache:
            return None
        from kmigrate.commands.cache import ResultCache

        return ResultCache.open(self.config.root, self.rule_ids, self.config.cache_key())

    def _check_codes(self) -> None:
        from kmigrate.rules.registry import unknown_codes

        unknown = unknown_codes(self.select + self.ignore, self.rules)
        if unknown:
            raise click.UsageError(
                f"unknown rule code(s): {', '.join(unknown)} (see `kmigrate rules`)"
            )

    def jobs_for(self, fix: bool = False):
        from kmigrate.commands.runner import plan_jobs

        return plan_jobs(
            self.paths,
            self.config,
            fix=fix,
            shard=self.shard,
            index_cache=self.use_cache,
            workers=self.jobs,
        )


def run_with_progress(settings: RunSettings, jobs, quiet: bool, label: str):
    """Run jobs with a progress bar on a terminal (never when piped or in CI)."""
    from kmigrate.commands.runner import run_jobs

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


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


_SHARD_KEY = "kmigrate.shard"
_NO_CACHE_KEY = "kmigrate.no_cache"


def _remember_shard(ctx: click.Context, param: click.Parameter, value: str | None):
    if value is not None:
        from kmigrate.commands.runner import parse_shard

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
