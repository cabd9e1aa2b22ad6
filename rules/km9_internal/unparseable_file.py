"""KM901: a file that cannot be read or parsed; the engine reports it, this class describes it."""

from __future__ import annotations

from kmigrate.engine import UNPARSEABLE, Severity
from kmigrate.rules.base import Flagged, Rule


class UnparseableFile(Rule):
    id = UNPARSEABLE
    name = "unparseable-file"
    summary = "The file cannot be read or parsed as Python 3; it is left untouched."
    rationale = (
        "kmigrate only rewrites code it fully understands. Python 2 files, syntax errors and "
        "undecodable bytes are reported and skipped so a run over a large repository goes on."
    )
    fix_safety = "Never fixed: port the file to Python 3 (e.g. with 2to3) or fix the syntax error."
    severity = Severity.ERROR
    examples = [Flagged("import tensorflow as tf\nprint 'hello'\n")]
