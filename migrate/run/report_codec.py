"""The codec of a job's file report in the store: what the runner caches per file.

The store (:mod:`kmigrate.store.cache`) keeps bytes and JSON values and knows no report;
this module, owned by the run, says what a cached :class:`~kmigrate.engine.run_data.FileReport`
holds: its findings packed as rows of interned strings (decoded only when a report
needs them), their counts, and the JSON report's text of its findings, rendered once when
the file is analysed so that a warm run only joins stored text.
"""

from __future__ import annotations

import json
from typing import Any

from kmigrate.engine.model import Context, EditPlan, Finding, Severity, Span
from kmigrate.engine.run_data import LazyFindings
from kmigrate.run.spill import written_text
from kmigrate.store.cache import (
    _MAX_LINE,
    MAX_COUNT,
    MAX_TEXT,
    RESULTS,
    InvalidEntryError,
    ResultCache,
)

# The fix of a trimmed fixable finding: it says "fixable", and nothing about how.
FIX_NOT_KEPT = EditPlan(edits=(), description="(not kept in scan results)")

# -- scan results as plain data ------------------------------------------------------
#
# A result is a JSON object; each finding a JSON array: rule, severity, message, path,
# line, column, end_line, end_column, context, symbol, fixable, fingerprint, scope, extra.
# Arrays rather than objects, and every text that repeats (rule, message, path, symbol,
# scope) as an index into the result's own string table: a warm re-scan decodes tens of
# thousands of findings, and this halves what JSON parses and allocates (pickle's memo
# did the same). Severity and context are indexes into the enums. Only scan results are
# stored: an ``apply`` result (with rewritten text) is never cached.

_SEVERITIES = tuple(Severity)
_CONTEXTS = tuple(Context)
_SEVERITY_CODE = {member: index for index, member in enumerate(_SEVERITIES)}
_CONTEXT_CODE = {member: index for index, member in enumerate(_CONTEXTS)}
_EXTRA_VALUE = (str, int, bool, type(None))


def trim_for_reports(report: Any) -> None:
    """Drop, in place, what only ``apply`` uses from a scan report's findings: edit
    plans (replaced by :data:`FIX_NOT_KEPT`, so ``fixable`` holds; a finding a later
    round fixes, ``fixed_later``, gets it too: a cached finding decodes the same way).
    (``source_text``, the fingerprint's input, is dropped by ``fingerprint_findings``
    already.)

    Edit plans are many small objects (edits, arguments, spans): a scan result without
    them crosses from a worker process in half the time.
    """
    # undecoded findings (a worker's or the cache's) were trimmed before they were
    # packed: not decoded here, which would hold them decoded to the end
    for finding in vars(report).get("findings") or ():
        if finding.fix is not None or finding.fixed_later:
            finding.fix, finding.fixed_later = FIX_NOT_KEPT, False


def digest_findings(report: Any) -> None:
    """Attach to a scan ``FileReport`` what the reports need of its findings
    (``report.digest``: their counts, and their text as the JSON report writes them, in
    report order), for the cache entry and for the report of this run. No text when a
    finding names another file: then the file's findings are not one run of the
    report's sorted list."""
    from kmigrate.engine.run_data import FileReport, FindingsDigest
    from kmigrate.report.json_report import findings_items
    from kmigrate.report.summary import count_findings

    if not isinstance(report, FileReport):
        return
    if report.digest is not None and report.digest.fits(report):
        return  # made by the worker already
    findings = report.findings
    text = None
    if all(finding.path == report.path for finding in findings):
        text = findings_items(sorted(findings, key=Finding.sort_key))
    counts = count_findings(findings)
    report.digest = FindingsDigest(counts, text, findings, len(findings), report.path)


def encode_report(report: Any) -> dict | None:
    """A scan ``FileReport`` as plain data; None for what is not a scan result."""
    from kmigrate.engine.run_data import FileReport

    if not isinstance(report, FileReport):
        return None
    strings: dict[str, int] = {}
    ref = strings.setdefault
    rows = []
    for finding in peek_findings(report):
        span = finding.span
        rows.append(
            [
                ref(finding.rule, len(strings)),
                _SEVERITY_CODE[finding.severity],
                ref(finding.message, len(strings)),
                ref(finding.path, len(strings)),
                span.line,
                span.column,
                span.end_line,
                span.end_column,
                _CONTEXT_CODE[finding.context],
                ref(finding.symbol, len(strings)),
                finding.fixable,  # a fix of its own, or one apply makes in a later round
                finding.fingerprint,
                ref(finding.scope_name, len(strings)),
                finding.extra,
            ]
        )
    return {
        "path": report.path,
        "strings": list(strings),
        "findings": rows,
        "uses_tensorflow": report.uses_tensorflow,
        "parsed": report.parsed,
        "unused_suppressions": [list(item) for item in report.unused_suppressions],
        "tf_statements": report.tf_statements,
        "tf_leftovers": report.tf_leftovers,
        "counts": _encode_counts(report),
        "mentions_backend": report.mentions_backend,
    }


def peek_findings(report: Any) -> list[Finding]:
    """The report's findings, decoded for a look if it holds them undecoded, and left so:
    decoded for good, the findings of every report gathered for the run (a cold scan's
    first phase, kept through the second) are held as objects to the end, several times
    their packed size (120 MB at 10k files)."""
    held = report.findings_or_stored()
    return held.decode() if isinstance(held, LazyFindings) else held or []


def pack_findings(report: Any) -> None:
    """Pack, in place, a scan report's decoded findings again (as a worker hands them
    over: ``FileReport.__getstate__``), its digest first made from them
    (:func:`digest_findings`) and kept pointing at the packed ones: a report kept from
    a cold scan's first phase whose messages the project's notes changed (decoded for
    that) is then held packed, not as objects, until the report is written."""
    from kmigrate.engine.run_data import FileReport

    if not isinstance(report, FileReport) or not vars(report).get("findings"):
        return
    digest_findings(report)
    state = report.__getstate__()
    report.__dict__.clear()
    report.__setstate__(state)


def _encode_counts(report: Any) -> list | None:
    """The digest's counts: [blocked now, blocked after apply, [rule, context, severity,
    fixable, how many]...], kinds by enum index like the findings."""
    digest = report.digest
    if digest is None or not digest.fits(report):
        return None
    counts = digest.counts
    kinds = [
        [rule, _CONTEXT_CODE[context], _SEVERITY_CODE[severity], fixable, count]
        for rule, context, severity, fixable, count in counts.kinds
    ]
    return [counts.blocked_now, counts.blocked_after_apply, kinds]


def _text(value: Any) -> str:
    if type(value) is not str or len(value) > MAX_TEXT:
        raise InvalidEntryError("not a string")
    return value


def _count(value: Any) -> int:
    if type(value) is not int or not 0 <= value < _MAX_LINE:
        raise InvalidEntryError("not a count")
    return value


def _flag(value: Any) -> bool:
    if value is not True and value is not False:
        raise InvalidEntryError("not a boolean")
    return value


def _rows(value: Any) -> list:
    if type(value) is not list or len(value) > MAX_COUNT:
        raise InvalidEntryError("not a list")
    return value


def _decode_finding(row: Any, strings: list[str]) -> Finding:
    """One finding from its row. The checks are written out rather than calls per
    field: a warm re-scan decodes tens of thousands of rows. A text index that is not
    an int inside ``strings`` raises IndexError or TypeError, a miss like any other
    (every string is bounded by ``MAX_ENTRY_BYTES``, so none is measured)."""
    if type(row) is not list:
        raise InvalidEntryError("a finding is not a list")
    # one unpacking: a row of another length raises ValueError
    (
        rule,
        severity,
        message,
        path,
        line,
        column,
        end_line,
        end_column,
        context,
        symbol,
        fixable,
        fingerprint,
        scope_name,
        extra,
    ) = row
    if not (
        type(line) is type(column) is type(end_line) is type(end_column) is int
        and 0 <= line < _MAX_LINE
        and 0 <= column < _MAX_LINE
        and 0 <= end_line < _MAX_LINE
        and 0 <= end_column < _MAX_LINE
        and type(severity) is type(context) is int
        and severity >= 0
        and context >= 0
        and (fixable is True or fixable is False)
        and type(fingerprint) is str
        and type(extra) is dict
    ):
        raise InvalidEntryError("a finding has a field of the wrong type")
    if extra:
        _check_extra(extra)
    return Finding(
        strings[rule],
        _SEVERITIES[severity],
        strings[message],
        strings[path],
        Span(line, column, end_line, end_column),
        _CONTEXTS[context],
        strings[symbol],
        FIX_NOT_KEPT if fixable else None,
        fingerprint,
        strings[scope_name],
        "",
        extra,
    )


def _check_extra(extra: dict) -> None:
    """A finding's extra fields (a notebook cell): a few names with plain values."""
    if len(extra) > 16:
        raise InvalidEntryError("too many extra fields")
    for name, item in extra.items():
        _text(name)
        if not isinstance(item, _EXTRA_VALUE):
            raise InvalidEntryError("extra holds more than plain values")


class StoredFindings(LazyFindings):
    """A cached result's findings as stored (:func:`encode_report`'s ``strings`` and
    ``findings``, as compact JSON), decoded into ``Finding`` objects when a report first
    reads them (``FileReport.findings``). A warm re-scan whose report needs only each
    file's counts and written findings (the JSON report) decodes none of them.

    The entry's MAC covers these bytes, so they are what this build of kmigrate wrote on
    this machine; they are still checked row by row when decoded, and rows that do not
    fit raise :class:`InvalidEntryError` then (a kmigrate bug: the entry was read already,
    too late to be a miss)."""

    __slots__ = ()

    def decode(self) -> list[Finding]:
        try:
            strings, rows = json.loads(self.data)  # another shape: ValueError or TypeError
            for text_item in _rows(strings):
                _text(text_item)
            findings = [_decode_finding(row, strings) for row in _rows(rows)]
        except (ValueError, TypeError, KeyError, IndexError, RecursionError) as error:
            raise InvalidEntryError(f"a cached result's findings do not fit: {error}") from None
        if len(findings) != self.count:
            raise InvalidEntryError("a cached result does not hold the findings it counts")
        return findings


def decode_report(value: Any, findings: bytes = b"", text: str | None = None) -> Any:
    """A ``FileReport`` from what :func:`encode_report` stored, laid out as
    :meth:`ResultCache.store_result` writes it: ``value`` without its findings (their
    number in their place), the ``findings`` themselves (JSON, decoded when first read:
    :class:`StoredFindings`) and their ``text`` as the JSON report writes them; raises
    :class:`InvalidEntryError` (or ``KeyError``, ``IndexError``, ``TypeError``) when
    ``value`` does not fit."""
    from kmigrate.engine.run_data import FileReport, FindingsDigest

    if type(value) is not dict:
        raise InvalidEntryError("not an object")
    tf_statements = value["tf_statements"]
    left = value["tf_leftovers"]  # an entry written before it was stored: a miss
    mentions_backend = value["mentions_backend"]
    unused = []
    for item in _rows(value["unused_suppressions"]):
        if type(item) is not list or len(item) != 2:
            raise InvalidEntryError("an unused suppression has the wrong shape")
        unused.append((_count(item[0]), _text(item[1])))
    count = _count(value["findings"])
    if count and not findings:
        raise InvalidEntryError("the findings are missing")
    fields = {
        "path": _text(value["path"]),
        "uses_tensorflow": _flag(value["uses_tensorflow"]),
        "parsed": _flag(value["parsed"]),
        "unused_suppressions": unused,
        "tf_statements": None if tf_statements is None else _count(tf_statements),
        "tf_leftovers": None if left is None else [_text(name) for name in _rows(left)],
        "mentions_backend": None if mentions_backend is None else _flag(mentions_backend),
    }
    if count:
        of = StoredFindings(findings, count)
        report = FileReport.with_stored_findings(of, **fields)
    else:
        report = FileReport(**fields)
        of = report.findings
    stored = value.get("counts")
    if stored is not None:
        counts = _decode_counts(stored, count)
        report.digest = FindingsDigest(counts, text, of, count, report.path)
    return report


def _decode_counts(value: Any, findings: int) -> Any:
    """The digest's counts (see :func:`_encode_counts`), which must add up to the
    result's ``findings``. The checks are written out, as in :func:`_decode_finding`:
    a warm re-scan decodes every cached result's counts."""
    from kmigrate.engine.run_data import FindingCounts

    blocked_now, blocked_after_apply, rows = value  # another length: ValueError
    kinds = []
    total = 0
    for row in _rows(rows):
        rule, context, severity, fixable, count = row  # another length: ValueError
        if not (
            type(rule) is str
            and len(rule) <= MAX_TEXT
            and type(context) is type(severity) is type(count) is int
            and context >= 0
            and severity >= 0
            and 0 < count < _MAX_LINE
            and (fixable is True or fixable is False)
        ):
            raise InvalidEntryError("a count has a field of the wrong type")
        kinds.append((rule, _CONTEXTS[context], _SEVERITIES[severity], fixable, count))
        total += count
    if total != findings:
        raise InvalidEntryError("the counts are not those of the findings")
    return FindingCounts(tuple(kinds), _count(blocked_now), _count(blocked_after_apply))


# -- a file report in the store ------------------------------------------------------


def load_report(store: ResultCache, key: str) -> Any | None:
    """The stored scan result (a ``FileReport``) for ``key``, or None.

    The entry is the result's JSON (with how many findings it has); after a newline,
    its findings (:func:`encode_report`'s ``strings`` and ``findings``) as compact
    JSON; after another, its findings as the JSON report writes them
    (``FileReport.digest``) when it was stored with them. The findings are decoded
    when first read (:class:`StoredFindings`): the JSON report of a warm re-scan
    reads only the counts and that text."""
    body = store.load_body(RESULTS, key)
    if body is None:
        return None
    head, _, tail = body.partition(b"\n")
    findings, newline, written = tail.partition(b"\n")
    try:
        rendered = written.decode("utf-8") if newline else None
        return decode_report(json.loads(head), findings, rendered)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError):
        return None  # InvalidEntryError, json's and UTF-8's errors are ValueErrors


def store_encoded(store: ResultCache, key: str, value: dict, text: str | None = None) -> bool:
    """Store what :func:`encode_report` made of a result, laid out as :func:`load_report`
    reads it (``text``: its findings as the JSON report writes them); False when it
    was not stored."""
    head = dict(value)
    findings = [head.pop("strings"), head.pop("findings")]
    head["findings"] = len(findings[1]) if type(findings[1]) is list else None
    try:
        rows = json.dumps(findings, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return False
    # compact JSON has no raw newline: the first two end the result and its findings
    return store.store_value(RESULTS, key, head, rows if text is None else f"{rows}\n{text}")


def store_report(store: ResultCache, key: str, value: Any) -> None:
    """Store one scan result; failures only mean the entry is not cached.

    ``value`` (a file's report) is trimmed first, in place (:func:`trim_for_reports`):
    the caller goes on with what a later cache hit returns.
    """
    trim_for_reports(value)
    if store.writable and store.secret is not None:
        digest_findings(value)
        encoded = encode_report(value)
        if encoded is not None:
            store_encoded(store, key, encoded, written_text(value.digest.text))
