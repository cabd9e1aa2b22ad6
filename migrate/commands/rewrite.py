"""Rewrite one module's text with the registered rules: the fix loop wired to the rule set.

The engine's fix loop (:func:`kmigrate.engine.apply.fix_module_text`) takes its rules and
context spec as arguments; this is the one-call form for tests and tools that want
"what would ``apply`` make of this text".
"""

from __future__ import annotations

from collections.abc import Sequence

from kmigrate.engine.analyze import RuleSet
from kmigrate.engine.apply import fix_module_text
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.registry import select_rules


def apply_to_text(text: str, select: Sequence[str] | None = None, path: str = "<memory>") -> str:
    """Rewrite module ``text`` with the selected rules (all when None)."""
    ruleset = RuleSet(select_rules(select))
    return fix_module_text(path, text, ruleset, CONTEXT_SPEC).text
