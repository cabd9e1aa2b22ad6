"""``kmigrate scan --statistics``: one line per rule with its counts, as ruff prints.

``   15  KM102  [*] tf-keras-import  (12 fixable)``: ``[*]`` marks rules with findings
``kmigrate apply`` fixes. Most frequent first; ``--format json`` gives the same as a list.
"""

from __future__ import annotations

import json

from kmigrate.report.summary import ReportData


def render_statistics(data: ReportData, fmt: str = "table") -> str:
    rules = sorted(data.rules, key=lambda r: (-r.count, r.rule))
    if fmt == "json":
        rows = [
            {
                "code": r.rule,
                "name": r.name,
                "count": r.count,
                "fixable": r.fixable,
                "manual": r.manual,
            }
            for r in rules
        ]
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(r.count)) for r in rules), default=1)
    lines = []
    for r in rules:
        mark = "[*]" if r.fixable else "   "
        tail = f"  ({r.fixable} fixable)" if r.fixable and r.fixable != r.count else ""
        lines.append(f"{r.count:>{width}}  {r.rule}  {mark} {r.name}{tail}".rstrip())
    return "\n".join(lines) + ("\n" if lines else "")
