"""`kmigrate merge`: one report from the JSON reports of sharded runs."""

from __future__ import annotations

import sys

import click

from kmigrate.cli.options import write_output
from kmigrate.report.merge import MergeError, load_report, merge_data, parse_input, render_merged

# `scan --format`'s formats (kmigrate.cli.main.REPORT_FORMATS, not imported: main loads this)
MERGE_FORMATS = ("json", "table", "sarif", "markdown", "html", "github", "gitlab")


@click.command(name="merge")
@click.argument("reports", nargs=-1, required=True, metavar="[NAME=]REPORT.json...")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(MERGE_FORMATS),
    default="json",
    show_default=True,
    help="Format of the merged report.",
)
def merge_command(reports: tuple[str, ...], output: str | None, fmt: str) -> None:
    """Combine JSON reports of `kmigrate scan` into one, summary recomputed.

    \b
    Shards of one repository (CI matrix, `scan --shard K/N`):
      kmigrate merge shard-*.json -o report.json
    Several repositories (paths get NAME/ in front):
      kmigrate merge api=api.json models=models.json -o org.json
    """
    loaded = []
    try:
        for text in reports:
            prefix, path = parse_input(text)
            loaded.append((prefix, load_report(path)))
    except MergeError as error:
        raise click.UsageError(str(error)) from None
    from kmigrate.report import FORMATS

    if fmt != "json" and fmt not in FORMATS:
        raise click.UsageError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    text = render_merged(merge_data(loaded), fmt)
    if output:
        write_output(output, text)
    else:
        sys.stdout.write(text)
