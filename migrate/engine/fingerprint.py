"""The one recipe for a finding's fingerprint: what baselines and CI reports match on.

A fingerprint is the first 16 hex digits of the SHA-1 of its inputs joined by the unit
separator (``\\x1f``). Inputs that are identical within one file (the same call twice)
get an occurrence number as a last input, so the second one is a finding of its own.
Every value is stored in users' baselines: the recipe must never change.
"""

from __future__ import annotations

import hashlib
from collections import Counter

_SEPARATOR = "\x1f"


def fingerprint(*parts: str) -> str:
    """The fingerprint of ``parts`` (no occurrence number)."""
    return hashlib.sha1(_SEPARATOR.join(parts).encode("utf-8")).hexdigest()[:16]


class Occurrences:
    """Fingerprints for one file's findings, numbering repeats of identical inputs."""

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()

    def fingerprint(self, *parts: str) -> str:
        base = _SEPARATOR.join(parts)
        occurrence = self._seen[base]
        self._seen[base] += 1
        return fingerprint(base, str(occurrence))
