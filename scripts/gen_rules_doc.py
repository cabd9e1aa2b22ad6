"""Write docs/rules.md from the rules' own metadata and examples."""

from __future__ import annotations

from pathlib import Path

from kmigrate.report.rule_doc import rules_markdown

OUT = Path(__file__).resolve().parent.parent / "docs" / "rules.md"

if __name__ == "__main__":
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(rules_markdown(), encoding="utf-8")
    print(f"wrote {OUT}")
