"""Running scan and apply over a whole fixture repository, as the CLI does, in-process.

Shared by the fast tests (findings, contexts, rewrites) and the backend tests (the
converted models compute what the originals do)."""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from kmigrate.engine.run_data import RunResult
from kmigrate.project.config import Config
from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

REPOS = Path(__file__).resolve().parent / "fixtures" / "repos"
# A stand-in for an installed third-party Keras package (``third_party_keras`` uses it):
# on the resolution path while a fixture runs, read by scan and apply, never imported.
FAKE_SITE = REPOS.parent / "site_packages"
REPO_NAMES = sorted(p.name for p in REPOS.iterdir() if p.is_dir())
# Every fixture repository and every sample project: the trees whole-tree promises are held on.
# Hidden folders (a scan's `.kmigrate_cache`, left by `make demo`) are not projects.
SAMPLES = REPOS.parents[2] / "samples"
SOURCE_TREES = [REPOS / n for n in REPO_NAMES] + sorted(
    p for p in SAMPLES.iterdir() if p.is_dir() and not p.name.startswith(".")
)


def copy_repo(name_or_path: str | Path, into: Path) -> Path:
    """A writable copy (the fixtures are excluded by the project's own config)."""
    source = REPOS / name_or_path if isinstance(name_or_path, str) else name_or_path
    target = into / source.name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@contextlib.contextmanager
def fake_site() -> Iterator[None]:
    """:data:`FAKE_SITE` on ``sys.path`` (kmigrate's resolution path) meanwhile."""
    sys.path.insert(0, str(FAKE_SITE))
    try:
        yield
    finally:
        sys.path.remove(str(FAKE_SITE))


def run_repo(root: Path, fix: bool = False, index: bool = True) -> RunResult:
    """``kmigrate scan``/``apply`` of ``root`` (no result cache), results not written;
    :data:`FAKE_SITE` is installed meanwhile."""
    config = Config(root=root.resolve())
    with fake_site():
        jobs = plan_jobs([root], config, fix=fix, index=index, index_cache=False)
        return run_jobs(jobs, select_ids((), ()), workers=1)


def apply_repo(root: Path) -> int:
    """Rewrite ``root`` in place like ``kmigrate apply``; the number of fixes made."""
    result = run_repo(root, fix=True)
    for report in result.files:
        if report.new_text is not None:
            with open(root / report.path, "w", encoding="utf-8", newline="") as out:
                out.write(report.new_text)
    return sum(r.fixed for r in result.files)


def finding_lines(result: RunResult) -> list[str]:
    """One line per finding: where, which rule, which context, fixable or not."""
    return [
        f"{f.path}:{f.span.line} {f.rule} {f.context.value} {'fixable' if f.fixable else 'manual'}"
        for f in result.findings
    ]


def apply_diff(source: Path, applied: Path) -> str:
    """The unified diff of every ``.py`` file of fixture ``source`` against its copy
    ``applied`` after ``apply``: the golden ``repos_expected/<name>.diff``."""
    import difflib

    diff: list[str] = []
    for path in sorted(source.rglob("*.py")):
        rel = path.relative_to(source).as_posix()
        before = path.read_text().splitlines(True)
        after = (applied / rel).read_text().splitlines(True)
        diff += difflib.unified_diff(before, after, f"a/{rel}", f"b/{rel}")
    return "".join(diff)
