"""What a run needs to know of the rules without running them: each rule's id, name,
severity and declared effort, for ``--select`` / ``--ignore`` and for the report's rule
table and effort.

Read off the rule classes, that means importing every rule module and the ops catalog
they parse: 45 ms, a third of a warm re-scan of a small project, in which no rule runs
(every result comes from the cache). So the table is kept in the project's cache
folder, signed like the result cache's entries (docs/security.md: a planted or damaged
table is a miss), under a key naming kmigrate's own code: the fingerprint the result
cache's run key uses, so an edited rule makes a new table, never a stale one. A miss,
``--no-cache`` or a cache that cannot be used reads the classes (and stores the table).
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kmigrate import __version__
from kmigrate.engine.model import Severity

CATALOG_FOLDER = ".rules"  # inside the cache root; the dot keeps it out of run-key pruning
_NAMESPACE = "rules"
_SEVERITIES = {member.value: member for member in Severity}


@dataclass(frozen=True)
class RuleFacts:
    """One rule as selection and the reports read it (the attributes of its class of
    the same names)."""

    id: str
    name: str
    severity: Severity
    effort_minutes: float | None = None


def rule_facts(project_root: Path | None) -> tuple[RuleFacts, ...]:
    """Every registered rule's facts, in id order: the table stored in the cache of the
    project at ``project_root`` for this build of kmigrate, else read from the rule
    classes (and stored there). ``None``: no cache, read the classes."""
    from kmigrate.store.cache import side_store

    store = side_store(project_root, CATALOG_FOLDER) if project_root is not None else None
    key = _code_key()
    if store is not None:
        found = store.load_value(_NAMESPACE, key, _decode)
        if found:
            return found
    facts = _from_classes()
    if store is not None and store.store_value(_NAMESPACE, key, [_encode(f) for f in facts]):
        _drop_others(store.folder, f"{_NAMESPACE}.{key}")
    return facts


def _code_key() -> str:
    """kmigrate's version and code (the result cache's fingerprint) and the Python."""
    from kmigrate.store.cache import FORMAT, code_fingerprint

    parts = (FORMAT, __version__, code_fingerprint(), sys.version_info[:2])
    return hashlib.blake2b(repr(parts).encode(), digest_size=10).hexdigest()


def _from_classes() -> tuple[RuleFacts, ...]:
    from kmigrate.rules.registry import all_rules

    return tuple(
        RuleFacts(rule.id, rule.name, rule.severity, _declared_minutes(rule))
        for rule in all_rules()
    )


def _declared_minutes(rule: type) -> float | None:
    """A rule's own ``effort_minutes`` when it is a number (rules/effort.py reads it so)."""
    value = getattr(rule, "effort_minutes", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _encode(facts: RuleFacts) -> list[Any]:
    return [facts.id, facts.name, facts.severity.value, facts.effort_minutes]


def _decode(value: Any) -> tuple[RuleFacts, ...]:
    """The stored table; raises ``ValueError``, ``TypeError`` or ``KeyError`` (a miss)
    when it does not have its shape."""
    if type(value) is not list:
        raise TypeError("the rule table is not a list")
    found = []
    for row in value:
        rule_id, name, severity, minutes = row  # a row of another length: ValueError
        if type(rule_id) is not str or type(name) is not str or not rule_id:
            raise TypeError("a rule's id or name is not a string")
        if minutes is not None and type(minutes) not in (int, float):
            raise TypeError("a rule's effort is not a number")
        found.append(RuleFacts(rule_id, name, _SEVERITIES[severity], minutes))
    return tuple(found)


def _drop_others(folder: Path, kept: str) -> None:
    """Remove the tables of other builds of kmigrate: one is read at a time."""
    try:
        for entry in os.scandir(folder):
            if entry.name.startswith(f"{_NAMESPACE}.") and entry.name != kept:
                os.unlink(entry.path)
    except OSError:
        pass
