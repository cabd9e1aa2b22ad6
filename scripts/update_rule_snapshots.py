"""Regenerate the golden snapshots of the rule examples (tests/snapshots/rules/*.txt).

Run after an intended change to a rule's findings, then review ``git diff`` of the
snapshots: every changed line is a changed message, span, severity or fix."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kmigrate.rules.registry import all_rules  # noqa: E402
from tests.rule_snapshots import SNAPSHOTS, render, snapshot_path  # noqa: E402


def main() -> int:
    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    wanted = {snapshot_path(rule) for rule in all_rules()}
    changed = 0
    for rule in all_rules():
        path = snapshot_path(rule)
        text = render(rule)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed += 1
    for stale in set(SNAPSHOTS.glob("*.txt")) - wanted:
        stale.unlink()
        changed += 1
    print(f"{len(wanted)} rule snapshots, {changed} written or removed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
