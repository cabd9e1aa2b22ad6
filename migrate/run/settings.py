"""The settings of a run: paths, rule selection, jobs and cache use, merged with the
project's config file (``[tool.kmigrate]``).

The command line builds them from its options (:mod:`kmigrate.cli.options`), the Python
API (:mod:`kmigrate.api`) from its arguments; a bad value raises :class:`SettingsError`,
which the command line shows as a usage error (exit 2).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


class SettingsError(ValueError):
    """A setting that cannot be used: an unknown rule code, a broken config file."""


def _codes(values: Sequence[str]) -> list[str]:
    """``--select KM1,KM2 --select KM3`` -> ["KM1", "KM2", "KM3"]."""
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


class RunSettings:
    """Options shared by the commands that run rules, merged with the config file."""

    def __init__(
        self,
        paths: Sequence[str | Path],
        select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        jobs: int | None = None,
        config_path: str | Path | None = None,
        shard: tuple[int, int] | None = None,
        use_cache: bool = True,
        default_root: Path | None = None,
    ) -> None:
        """``default_root``: the project root when no pyproject.toml names one (``check``:
        the repository's top, so its cache is one folder there, whatever files it gets)."""
        from kmigrate.project.config import ConfigError, load_config

        self.paths = [Path(p) for p in paths] or [Path(".")]
        start = self.paths[0]
        try:
            self.config = load_config(start, Path(config_path) if config_path else None)
        except ConfigError as error:
            raise SettingsError(str(error)) from None
        if self.config.source is None:
            # no pyproject.toml names the root: the repository's top for `check`, else the
            # folder holding every path given (not the first one's: files of another
            # folder would fall outside the project index and lose its facts)
            self.config.root = default_root or _common_folder(self.paths)
        self.select = _codes(select) or self.config.select
        self.ignore = _codes(ignore) + self.config.ignore
        self.shard = shard
        self.use_cache = use_cache
        from kmigrate.rules.registry import select_rules
        from kmigrate.run.rule_catalog import rule_facts

        # what selection and the reports read of every rule, without importing the
        # rules when the cache holds it (a warm re-scan runs none)
        self.rules = rule_facts(self.config.root if self.use_cache else None)
        self._check_codes()
        chosen = select_rules(self.select or None, self.ignore or None, self.rules)
        self.rule_ids = tuple(rule.id for rule in chosen)
        from kmigrate.run.runner import default_jobs

        self.jobs = jobs or self.config.jobs or default_jobs()

    def result_cache(self):
        """The result cache for these rules and this config; None with --no-cache."""
        if not self.use_cache:
            return None
        from kmigrate.store.cache import ResultCache

        return ResultCache.open(self.config.root, self.rule_ids, self.config.cache_key())

    def _check_codes(self) -> None:
        from kmigrate.rules.registry import unknown_codes

        unknown = unknown_codes(self.select + self.ignore, self.rules)
        if unknown:
            raise SettingsError(
                f"unknown rule code(s): {', '.join(unknown)} (see `kmigrate rules`)"
            )

    def jobs_for(self, fix: bool = False):
        from kmigrate.run.runner import plan_jobs

        return plan_jobs(
            self.paths,
            self.config,
            fix=fix,
            shard=self.shard,
            index_cache=self.use_cache,
            workers=self.jobs,
        )


def _common_folder(paths: Sequence[Path]) -> Path:
    """The deepest folder holding every path (a file counts as its folder)."""
    folders = []
    for path in paths:
        resolved = path.resolve()
        folders.append(str(resolved if resolved.is_dir() else resolved.parent))
    return Path(os.path.commonpath(folders))
