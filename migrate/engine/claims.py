"""What the rules claim, computed once per rule selection, so that a fallback rule is shown
only what no other rule claims.

A fallback (``Rule.fallback``: KM205 for TensorFlow calls in model code no rule knows,
KM108 for Keras 2 backend functions outside model code) would otherwise repeat, less
precisely, what the rule that owns a call says about it. Each rule declares its claims
(``Rule.claims``: by default the calls it asks to see, in its contexts); the walk asks
:meth:`ClaimIndex.claimed` before it hands a fallback a call or a reference. Claims are
read from every registered rule, selected or not, so that selecting a fallback alone
does not change what it reports.
"""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine.model import Context
from kmigrate.engine.rule_api import Claim, Fallback, Rule


class ClaimIndex:
    """The claims of ``rule_classes`` (fallbacks claim nothing), looked up by symbol."""

    def __init__(self, rule_classes: Iterable[type[Rule]]) -> None:
        claims = [
            claim for rule in rule_classes if rule.fallback is None for claim in rule.claims()
        ]
        # symbol -> the contexts of the claims naming it exactly (None: every context)
        self._by_symbol: dict[str, list[frozenset[Context] | None]] = {}
        self._by_prefix: list[Claim] = [c for c in claims if c.prefixes]
        for claim in claims:
            for symbol in claim.symbols:
                self._by_symbol.setdefault(symbol, []).append(claim.contexts)
        self._memo: dict[tuple[str, Context, Fallback], bool] = {}

    def claimed(self, symbol: str, context: Context, how: Fallback) -> bool:
        """Whether a rule claims ``symbol``: in ``context`` (``Fallback.IN_CONTEXT``), or
        in any context (``Fallback.ANY_CONTEXT``)."""
        key = (symbol, context, how)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._claimed(symbol, context, how)
        return found

    def _claimed(self, symbol: str, context: Context, how: Fallback) -> bool:
        where = [*self._by_symbol.get(symbol, ())]
        where += [c.contexts for c in self._by_prefix if symbol.startswith(c.prefixes)]
        if how is Fallback.ANY_CONTEXT:
            return bool(where)
        return any(contexts is None or context in contexts for contexts in where)
