"""The baseline file: today's findings, frozen, so that ``check`` fails only on new ones.

``.kmigrate-baseline.json`` (at the project root unless ``[tool.kmigrate] baseline``
says otherwise)::

    {
      "version": 1,
      "tool": "kmigrate",
      "findings": [
        {"fingerprint": "3f0c...", "rule": "KM201", "path": "src/model.py",
         "scope": "Block.call", "symbol": "tf.reduce_mean", "message": "..."},
        ...
      ]
    }

Entries are matched by ``fingerprint`` only (see ``kmigrate.engine.analyze.fingerprint_findings``:
path, rule, symbol, enclosing class/function, the node's ``ast.dump`` and the
occurrence number among identical findings); the other fields are there for the
people reviewing the file. Identical calls in one function get distinct
fingerprints (occurrence 0, 1, ...), so *N* identical calls are *N* entries and a
further one is new. An entry may carry ``"count": n`` (a hand-merged file listing
one fingerprint twice is read the same way); matching takes multiplicities into
account. The file is written sorted (path, scope, rule, symbol, fingerprint), one
entry per line, without line numbers, so regenerating it after unrelated edits
changes nothing and merges are line-based. (Each entry is written on one line;
it is wrapped above for reading.)
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from kmigrate.engine.model import Finding

BASELINE_VERSION = 1
_ENTRY_KEYS = ("fingerprint", "rule", "path", "scope", "symbol", "message")


_LINK_REFUSED = (
    "{path} is a symlink; kmigrate neither reads nor writes a baseline through a link "
    "(replace the link with the file, or pass --baseline with a real file)"
)


class BaselineError(Exception):
    """An unreadable or malformed baseline file; the message names the file."""


@dataclass(frozen=True)
class BaselineEntry:
    fingerprint: str
    rule: str
    path: str
    scope: str = ""
    symbol: str = ""
    message: str = ""
    count: int = 1

    @classmethod
    def of(cls, finding: Finding, count: int = 1) -> BaselineEntry:
        return cls(
            fingerprint=finding.fingerprint,
            rule=finding.rule,
            path=finding.path,
            scope=finding.scope_name,
            symbol=finding.symbol,
            message=finding.message,
            count=count,
        )

    def sort_key(self) -> tuple:
        return (self.path, self.scope, self.rule, self.symbol, self.fingerprint)

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {key: getattr(self, key) for key in _ENTRY_KEYS}
        if self.count != 1:
            data["count"] = self.count
        return data


@dataclass
class Baseline:
    """Baselined findings, by fingerprint."""

    entries: dict[str, BaselineEntry] = field(default_factory=dict)

    @classmethod
    def from_findings(cls, findings: Iterable[Finding]) -> Baseline:
        counts: Counter[str] = Counter()
        first: dict[str, Finding] = {}
        for finding in findings:
            counts[finding.fingerprint] += 1
            first.setdefault(finding.fingerprint, finding)
        return cls({fp: BaselineEntry.of(first[fp], n) for fp, n in counts.items()})

    @classmethod
    def load(cls, path: Path) -> Baseline:
        """The baseline at ``path``; an empty one when the file does not exist.

        Only a regular file is read (a FIFO planted under the baseline's name would
        block ``check`` forever), and not through a symlink (``check
        --update-baseline`` and ``baseline`` write back to it: see :meth:`write`);
        anything else is a BaselineError, which the commands report as a usage error.
        """
        from kmigrate.engine.sources import SourceError, read_bytes

        if not os.path.lexists(path):
            return cls()
        if os.path.islink(path):
            raise BaselineError(_LINK_REFUSED.format(path=path))
        try:
            text = read_bytes(path).decode("utf-8")
        except (SourceError, UnicodeDecodeError) as error:
            raise BaselineError(f"cannot read baseline {path}: {error}") from None
        try:
            return cls.parse(text)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as error:
            raise BaselineError(f"{path} is not a kmigrate baseline: {error}") from None

    @classmethod
    def parse(cls, text: str) -> Baseline:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION:
            raise ValueError(f"expected a JSON object with version {BASELINE_VERSION}")
        raw_entries = data.get("findings")
        if not isinstance(raw_entries, list):
            raise ValueError("'findings' must be a list")
        entries: dict[str, BaselineEntry] = {}
        for raw in raw_entries:
            fingerprint = raw["fingerprint"]
            count = raw.get("count", 1)
            if not isinstance(fingerprint, str) or not isinstance(count, int) or count < 1:
                raise ValueError(f"bad entry {raw!r}")
            known = entries.get(fingerprint)
            total = count + (known.count if known else 0)
            entries[fingerprint] = BaselineEntry(
                fingerprint=fingerprint,
                rule=str(raw.get("rule", "")),
                path=str(raw.get("path", "")),
                scope=str(raw.get("scope", "")),
                symbol=str(raw.get("symbol", "")),
                message=str(raw.get("message", "")),
                count=total,
            )
        return cls(entries)

    def dumps(self) -> str:
        """Stable text: sorted entries, one per line."""
        ordered = sorted(self.entries.values(), key=BaselineEntry.sort_key)
        lines = [json.dumps(e.to_json(), ensure_ascii=False) for e in ordered]
        body = ",\n    ".join(lines)
        findings = f"[\n    {body}\n  ]" if lines else "[]"
        return (
            "{\n"
            f'  "version": {BASELINE_VERSION},\n'
            '  "tool": "kmigrate",\n'
            f'  "findings": {findings}\n'
            "}\n"
        )

    def write(self, path: Path) -> None:
        """Write the baseline to ``path``, never through a symlink: a repository could
        commit ``.kmigrate-baseline.json`` as a link to a file of the user's, and the
        baseline holds text the repository chose (file names, messages)."""
        from kmigrate.engine.sources import write_whole

        if os.path.islink(path):
            raise BaselineError(_LINK_REFUSED.format(path=path))
        data = self.dumps().encode("utf-8")
        existed = path.exists()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_whole(path, data)  # a full disk leaves the old baseline, never an empty one
        except OSError as error:
            kept = "the old baseline is unchanged" if existed else "no baseline was written"
            raise BaselineError(
                f"cannot write baseline {path}: {error.strerror or error}; {kept}"
            ) from None

    def counts(self) -> Counter[str]:
        return Counter({fp: e.count for fp, e in self.entries.items()})

    def total(self) -> int:
        return sum(e.count for e in self.entries.values())

    def replace_paths(
        self, replaced: Callable[[BaselineEntry], bool], findings: Iterable[Finding]
    ) -> Baseline:
        """Entries for which ``replaced(entry)`` holds give way to ``findings``."""
        merged = {fp: e for fp, e in self.entries.items() if not replaced(e)}
        for fingerprint, entry in Baseline.from_findings(findings).entries.items():
            old = merged.get(fingerprint)
            merged[fingerprint] = (
                entry if old is None else replace(entry, count=old.count + entry.count)
            )
        return Baseline(merged)

    def without(self, fixed: Counter[str]) -> Baseline:
        """The ratchet: drop ``fixed`` occurrences, never add any."""
        entries = {}
        for fingerprint, entry in self.entries.items():
            left = entry.count - fixed.get(fingerprint, 0)
            if left > 0:
                entries[fingerprint] = replace(entry, count=left)
        return Baseline(entries)


@dataclass
class BaselineMatch:
    """Findings of a run split into new and already known, plus what was fixed."""

    new: list[Finding] = field(default_factory=list)
    baselined: list[Finding] = field(default_factory=list)
    fixed: Counter[str] = field(default_factory=Counter)  # baseline fingerprint -> occurrences

    @property
    def fixed_total(self) -> int:
        return sum(self.fixed.values())


def match_findings(
    findings: Iterable[Finding],
    baseline: Baseline,
    also_known: Counter[str] | None = None,
    checked: Callable[[BaselineEntry], bool] = lambda entry: False,
) -> BaselineMatch:
    """Split ``findings`` by fingerprint against ``baseline`` (and ``also_known``,
    e.g. the findings at a git ref).

    A fingerprint baselined *n* times covers *n* findings; the rest are new.
    ``checked(entry)`` says whether the run looked at everything that could still
    produce ``entry`` (its file was scanned with its rule enabled): only such entries
    can be counted as fixed.
    """
    known = baseline.counts()
    if also_known:
        known |= also_known
    remaining = Counter(known)
    result = BaselineMatch()
    seen: Counter[str] = Counter()
    for finding in sorted(findings, key=Finding.sort_key):
        seen[finding.fingerprint] += 1
        if remaining[finding.fingerprint] > 0:
            remaining[finding.fingerprint] -= 1
            result.baselined.append(finding)
        else:
            result.new.append(finding)
    for fingerprint, entry in baseline.entries.items():
        gone = entry.count - seen[fingerprint]
        if gone > 0 and checked(entry):
            result.fixed[fingerprint] = gone
    return result
