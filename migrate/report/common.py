"""Small pieces every report format shares: rule metadata, fingerprints, links, levels."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from kmigrate import __version__
from kmigrate.engine.fingerprint import fingerprint

if TYPE_CHECKING:
    from kmigrate.engine.model import Finding

TOOL_NAME = "kmigrate"
TOOL_VERSION = __version__
# Where the generated rule catalog (docs/rules.md, scripts/gen_rules_doc.py) is published;
# SARIF helpUri and the links in Markdown/HTML reports point into it.
PROJECT_URL = "https://github.com/kmigrate/kmigrate"
RULES_DOC_URL = f"{PROJECT_URL}/blob/main/docs/rules.md"


def rule_url(rule_id: str, name: str = "") -> str:
    """Link to a rule's section of the catalog (GitHub's heading anchor of
    ``## KM201 `name```)."""
    anchor = f"{rule_id} {name}".strip().lower().replace(" ", "-")
    return f"{RULES_DOC_URL}#{''.join(c for c in anchor if c.isalnum() or c in '-_')}"


def fingerprint_of(finding: Finding) -> str:
    """The finding's fingerprint; findings made outside the analysis (a file that
    cannot be read) may lack one, so derive a stable one from what is known."""
    if finding.fingerprint:
        return finding.fingerprint
    return fingerprint(finding.path, finding.rule, finding.symbol, finding.message)


def rule_class(rule_id: str) -> type | None:
    from kmigrate.rules.registry import rule_by_id

    return rule_by_id(rule_id)


@functools.cache
def _unprintable() -> re.Pattern[str]:
    """C0 and C1 controls (terminal escape sequences, line breaks that end a Markdown
    table row), line/paragraph separators and bidirectional overrides (text that reads
    in a different order than it runs: "Trojan Source"). Compiled on first use: its
    Unicode ranges cost a third of a millisecond, which a JSON report never needs."""
    return re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str, keep: str = "") -> str:
    """Text from the scanned tree (a file name, a message quoting code) with control and
    direction-changing characters shown as escapes (``\\x1b``, ``\\n``, ``\\u202e``), so
    it can neither drive a terminal nor break out of the line or cell it is shown in.
    ``keep``: characters left as they are (tabs in a line of code shown in HTML)."""
    unprintable = _unprintable()
    if unprintable.search(text) is None:
        return text

    def shown(match: re.Match[str]) -> str:
        found = match.group()
        return found if found in keep else found.encode("unicode_escape").decode("ascii")

    return unprintable.sub(shown, text)


def one_line(text: str) -> str:
    """Messages are single lines in every format, without control characters."""
    return printable(" ".join(text.split()))


def stored_lines(finding: Finding) -> tuple[int, int]:
    """(first, last) line of the finding in the file as stored: for a notebook, the line
    of the ``.ipynb`` JSON holding the cell's line (``extra["file_line"]``), not the line
    inside the cell, which lands elsewhere in the file."""
    span = finding.span
    stored = finding.extra.get("file_line") if finding.extra else None
    if isinstance(stored, int):
        return stored, stored + max(span.end_line - span.line, 0)
    return span.line, max(span.end_line, span.line)


def cell_prefix(finding: Finding) -> str:
    """``cell 3, line 2: `` for a notebook finding (how a reader finds it in Jupyter)."""
    extra = finding.extra or {}
    if "cell" not in extra:
        return ""
    return f"cell {extra['cell']}, line {extra.get('cell_line', finding.span.line)}: "
