"""The rule framework, as rule authors import it: ``from kmigrate.rules.base import Rule``.

The contract itself (hooks, metadata, examples) belongs to the engine that calls it:
:mod:`kmigrate.engine.rule_api`. This module re-exports it through the engine's facade so
that every rule file keeps one short import line.
"""

from kmigrate.engine import Claim, Clean, Example, Fallback, Flagged, Report, Rule

__all__ = ["Claim", "Clean", "Example", "Fallback", "Flagged", "Report", "Rule"]
