"""``kmigrate apply --parity``: after rewriting, prove each rewritten model factory
still computes what the original did, on every installed backend.

The original text never touches the disk of the project: apply keeps it in memory
and parity writes it to a temporary file for the reference worker. Entry points are
the rewritten files that define a conventional factory (``build_model`` ...), or the
ones ``[tool.kmigrate.parity] entry-points`` names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kmigrate.parity.plan import (
    DEFAULT_FACTORIES,
    ParityOptions,
    ParityUsageError,
    top_level_callables,
)
from kmigrate.project.config import Config


@dataclass(frozen=True)
class EntryPoint:
    path: Path  # the rewritten file
    factory: str
    original_text: str


def entry_points(changed: Sequence[tuple[Path, str, str]], config: Config) -> list[EntryPoint]:
    """Factories among the rewritten files: (path, old text, new text) triples."""
    named: dict[str, str] = {}
    for item in config.extra.get("parity", {}).get("entry-points", []):
        file_part, _, factory = str(item).partition(":")
        named[Path(file_part).as_posix()] = factory or ""
    found = []
    for path, old_text, new_text in changed:
        if path.suffix != ".py":
            continue  # notebooks: run `kmigrate parity` on an exported module
        try:
            relative = path.resolve().relative_to(config.root).as_posix()
        except ValueError:
            relative = path.as_posix()
        try:
            names = top_level_callables(new_text)
        except SyntaxError:
            continue
        wanted = named.get(relative)
        factory = wanted or next((n for n in DEFAULT_FACTORIES if n in names), None)
        if factory and factory in names:
            found.append(EntryPoint(path, factory, old_text))
    return found


def original_texts(changed: Sequence[tuple[Path, str, str]]) -> dict[str, str]:
    """Absolute path -> text before the rewrite, for every file apply rewrote: the reference
    runs in a copy of the tree with all of them put back, so the original entry point never
    imports a rewritten sibling."""
    return {str(path.resolve()): old for path, old, _ in changed if path.suffix == ".py"}


def check_parity(
    points: Sequence[EntryPoint],
    console,
    originals: dict[str, str] | None = None,
    options: ParityOptions | None = None,
) -> bool:
    """Run parity for every entry point in one batch; print each report; True when all agree.

    Every check of `kmigrate parity` runs: each side in its own process, the Keras 2
    reference for Keras 2 code, the eager call, ``predict`` and one training step on every
    installed backend (OpenVINO when `options` names it), per-input ranges from the model's
    Embedding layers, and whether the converted model still imports TensorFlow. The entry
    points share one worker per side and backend (`run_parity_batch`): the frameworks are
    imported once, not once per factory.
    """
    from kmigrate.parity.report import render, render_summary
    from kmigrate.parity.runner import ParityEntry, run_parity_batch

    entries = [
        ParityEntry(
            f"{point.path}:{point.factory}",
            reference_source=point.original_text,
            reference_originals=originals,
        )
        for point in points
    ]
    unusable: dict[int, ParityUsageError] = {}
    console.print(
        f"[bold]parity[/bold] {len(points)} rewritten model factories (original vs rewritten)"
    )
    reports = run_parity_batch(
        entries,
        options=options or ParityOptions(),
        on_usage_error=lambda index, error: unusable.__setitem__(index, error),
    )
    for index, (point, report) in enumerate(zip(points, reports)):
        console.print(f"[bold]parity[/bold] {point.path}:{point.factory} (original vs rewritten)")
        if report is None:
            console.print(f"[red]cannot check {point.path}: {unusable[index]}[/red]")
            continue
        render(report, console)
    done = [report for report in reports if report is not None]
    if len(points) > 1 and done:
        render_summary(done, console)
    return not unusable and all(report.passed for report in done)
