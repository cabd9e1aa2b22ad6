"""Inline suppressions: ``# kmigrate: ignore[KM201]`` or a bare ``# kmigrate: ignore``.

A comment suppresses findings that start or end on its line. Codes are rule ids
or prefixes (``KM2`` suppresses the whole ops family). Only real comments count:
the text is tokenized when, and only when, it mentions ``kmigrate:`` at all.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from kmigrate.engine.model import Finding

_DIRECTIVE = re.compile(r"#\s*kmigrate:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
ALL = "*"


@dataclass
class Suppressions:
    """Suppression codes per line, and which of them were used."""

    by_line: dict[int, tuple[str, ...]] = field(default_factory=dict)
    used: set[tuple[int, str]] = field(default_factory=set)

    @classmethod
    def from_text(cls, text: str) -> Suppressions:
        if "kmigrate:" not in text:
            return cls()
        by_line: dict[int, tuple[str, ...]] = {}
        try:
            tokens = tokenize.generate_tokens(io.StringIO(text).readline)
            for token in tokens:
                if token.type != tokenize.COMMENT:
                    continue
                match = _DIRECTIVE.search(token.string)
                if match is None:
                    continue
                codes = match.group("codes")
                parsed = (
                    tuple(c.strip().upper() for c in codes.split(",") if c.strip()) if codes else ()
                )
                by_line[token.start[0]] = parsed or (ALL,)
        except (tokenize.TokenError, SyntaxError, IndentationError):
            pass
        return cls(by_line)

    def suppresses(self, finding: Finding) -> bool:
        for line in {finding.span.line, finding.span.end_line}:
            codes = self.by_line.get(line)
            if not codes:
                continue
            for code in codes:
                if code == ALL or finding.rule.startswith(code):
                    self.used.add((line, code))
                    return True
        return False

    def unused(self) -> list[tuple[int, str]]:
        """(line, code) pairs that suppressed nothing in this run."""
        return sorted(
            (line, code)
            for line, codes in self.by_line.items()
            for code in codes
            if (line, code) not in self.used
        )
