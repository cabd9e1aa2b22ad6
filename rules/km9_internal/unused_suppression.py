"""KM903: suppression comments that no longer suppress anything.

The engine knows which ``# kmigrate: ignore[...]`` codes were used while a file
was analysed (``kmigrate.engine.suppress.Suppressions``); this rule turns the unused ones
into findings. It is reported on request only (``kmigrate check
--report-unused-suppressions``), because whether a comment is dead depends on
every other rule having run on the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kmigrate.engine import ALL, UNUSED_SUPPRESSION, Context, Finding, Occurrences, Severity, Span
from kmigrate.rules.base import Clean, Flagged, Rule

_COMMENT = re.compile(r"#\s*kmigrate:\s*ignore", re.IGNORECASE)


class UnusedSuppression(Rule):
    id = UNUSED_SUPPRESSION
    name = "unused-suppression"
    summary = "A `# kmigrate: ignore[...]` comment suppresses nothing on its line."
    rationale = (
        "A suppression outlives the code it was written for: the call gets fixed or moved and "
        "the comment stays, silently allowing the next non-portable call on that line. Reporting "
        "dead suppressions keeps the ratchet tight, like the baseline's `--update-baseline`. "
        "Reported by `kmigrate check --report-unused-suppressions` (or `--select KM903`)."
    )
    fix_safety = (
        "Never fixed automatically: delete the comment, or the codes in it that the message names. "
        "Codes of rules that did not run (not selected) are not reported; codes that match no rule "
        "at all (typos) are."
    )
    severity = Severity.WARNING
    examples = [
        Flagged(
            """
            import tensorflow as tf

            # KM1O1 with the letter O: a typo, so the comment protects nothing
            layer = tf.keras.layers.Dense(3)  # kmigrate: ignore[KM1O1]
            """
        ),
        Clean(
            """
            import tensorflow as tf

            layer = tf.keras.layers.Dense(3)  # kmigrate: ignore[KM101]
            """
        ),
    ]

    @classmethod
    def findings_for(
        cls,
        path: str,
        text: str,
        unused: Iterable[tuple[int, str]],
        rule_ids: Sequence[str],
    ) -> list[Finding]:
        """One finding per comment line whose unused codes concern the rules that ran.

        ``unused`` is ``Suppressions.unused()``: (line, code) pairs; ``rule_ids`` are
        the rules of the run. A bare ``ignore`` counts only when every rule ran.
        """
        from kmigrate.rules.registry import all_rules

        known = [r.id for r in all_rules()]
        ran = set(rule_ids)
        everything_ran = all(i in ran for i in known if i != cls.id)
        by_line: dict[int, list[str]] = {}
        for line, code in unused:
            if code == ALL:
                if everything_ran:
                    by_line.setdefault(line, []).append(code)
            elif any(i.startswith(code) for i in ran) or not any(i.startswith(code) for i in known):
                by_line.setdefault(line, []).append(code)
        if not by_line:
            return []
        lines = text.splitlines()
        findings = []
        occurrences = Occurrences()
        for line, codes in sorted(by_line.items()):
            line_text = lines[line - 1] if 0 < line <= len(lines) else ""
            match = _COMMENT.search(line_text)
            column = match.start() if match else 0
            findings.append(
                Finding(
                    rule=cls.id,
                    severity=cls.severity,
                    message=_message(codes, known),
                    path=path,
                    span=Span(line, column, line, len(line_text)),
                    context=Context.OTHER,
                    symbol=",".join(codes),
                    fingerprint=occurrences.fingerprint(path, cls.id, line_text.strip()),
                )
            )
        return findings


def _message(codes: list[str], known: list[str]) -> str:
    if codes == [ALL]:
        return "unused suppression: `# kmigrate: ignore` suppresses nothing on this line"
    parts = []
    for code in codes:
        if code == ALL:
            continue
        matched = any(i.startswith(code) for i in known)
        parts.append(f"`{code}`" + ("" if matched else " (matches no rule)"))
    verb = "suppresses" if len(parts) == 1 else "suppress"
    return f"unused suppression: {', '.join(parts)} {verb} nothing on this line"
