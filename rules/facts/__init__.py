"""The cross-file facts rules declare (``Rule.facts``), one provider per module
(engine/fact_provider.py). They live here, outside the rule families, so that the
registry finds them without importing a rule: a warm re-scan imports none."""
