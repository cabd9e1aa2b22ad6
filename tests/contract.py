"""The JSON finding fields DESIGN.md fixes, in order: tests check every format against it."""

FINDING_FIELDS = (
    "rule",
    "severity",
    "message",
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "context",
    "fixable",
    "symbol",
    "fingerprint",
)
