"""Generated documentation must match the rules it documents."""

from __future__ import annotations

from pathlib import Path

from kmigrate.report.rule_doc import rules_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_rule_catalog_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == rules_markdown(), "run `make docs` (scripts/gen_rules_doc.py)"


def test_every_rule_is_in_the_catalog_with_an_example() -> None:
    text = rules_markdown()
    from kmigrate.rules.registry import all_rules

    for rule in all_rules():
        assert f"## {rule.id} `{rule.name}`" in text
