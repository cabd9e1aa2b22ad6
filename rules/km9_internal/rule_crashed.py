"""KM902: a rule that raised on a file; the engine reports it, this class describes it."""

from __future__ import annotations

from kmigrate.engine import RULE_CRASHED, Severity
from kmigrate.rules.base import Rule


class RuleCrashed(Rule):
    id = RULE_CRASHED
    name = "rule-crashed"
    summary = "A rule raised an exception on this file; its findings for the file are incomplete."
    rationale = (
        "One rule failing on unusual code must not stop the run or hide other findings. The "
        "finding names the rule and the exception so the bug can be reported."
    )
    fix_safety = "Not applicable. Please report the bug with the file that triggers it."
    severity = Severity.ERROR
    examples = []
