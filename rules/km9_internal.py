"""KM9xx: problems of the run itself, reported like any finding so nothing is silent."""

from __future__ import annotations

from kmigrate.model import Severity
from kmigrate.rules.base import Flagged, Rule


class UnparseableFile(Rule):
    id = "KM901"
    name = "unparseable-file"
    summary = "The file cannot be read or parsed as Python 3; it is left untouched."
    rationale = (
        "kmigrate only rewrites code it fully understands. Python 2 files, syntax errors and "
        "undecodable bytes are reported and skipped so a run over a large repository goes on."
    )
    fix_safety = "Never fixed: port the file to Python 3 (e.g. with 2to3) or fix the syntax error."
    severity = Severity.ERROR
    examples = [Flagged("import tensorflow as tf\nprint 'hello'\n")]


class RuleCrashed(Rule):
    id = "KM902"
    name = "rule-crashed"
    summary = "A rule raised an exception on this file; its findings for the file are incomplete."
    rationale = (
        "One rule failing on unusual code must not stop the run or hide other findings. The "
        "finding names the rule and the exception so the bug can be reported."
    )
    fix_safety = "Not applicable. Please report the bug with the file that triggers it."
    severity = Severity.ERROR
    examples = []
