"""The JSON finding fields (docs/report.md), in order: tests check every format against it."""

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
