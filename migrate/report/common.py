"""Small pieces every report format shares: rule metadata, fingerprints, links, levels."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from kmigrate import __version__

if TYPE_CHECKING:
    from kmigrate.model import Finding

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
    base = "\x1f".join((finding.path, finding.rule, finding.symbol, finding.message))
    return hashlib.sha1(base.encode("utf-8")).hexdigest()[:16]


def rule_class(rule_id: str) -> type | None:
    from kmigrate.rules.registry import rule_by_id

    return rule_by_id(rule_id)


def one_line(text: str) -> str:
    """Messages are single lines in every format."""
    return " ".join(text.split())
