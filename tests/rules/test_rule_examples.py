"""Every example of every rule is a test: the rules' metadata is their contract.

- flagged examples produce at least one finding of the rule;
- flagged examples with an expected rewrite are rewritten to exactly that, and a
  second ``apply`` changes nothing (idempotence);
- clean examples produce no finding of the rule;
- every example's findings match its rule's golden snapshot (tests/rule_snapshots.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from kmigrate.engine.rule_api import EXAMPLE_PATH
from kmigrate.rules.registry import all_rules
from kmigrate.run.runner import scan_text
from tests.repo_fixtures import apply_repo, run_repo

CASES = [
    pytest.param(
        rule, index, example, id=f"{rule.id}-{'flagged' if example.flagged else 'clean'}-{index}"
    )
    for rule in all_rules()
    for index, example in enumerate(rule.examples)
]


@pytest.mark.parametrize(("rule", "index", "example"), CASES)
def test_rule_example(rule, index, example, tmp_path: Path) -> None:
    if example.project:
        _check_project_example(rule, example, tmp_path)
        return
    findings = [f for f in scan_text(example.code, select=[rule.id]) if f.rule == rule.id]
    if not example.flagged:
        assert findings == [], f"{rule.id} flagged a clean example: {[f.message for f in findings]}"
        return
    assert findings, f"{rule.id} did not flag its example:\n{example.code}"
    if example.expected is None:
        return
    rewritten = apply_to_text(example.code, select=[rule.id])
    assert rewritten == example.expected
    ast.parse(rewritten)
    assert apply_to_text(rewritten, select=[rule.id]) == rewritten, "second apply changed the code"


def _check_project_example(rule, example, tmp_path: Path) -> None:
    """An example that is one module of a project: scanned (and fixed) as a folder."""
    root = tmp_path / "project"
    for path, code in example.project_files().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(code)
    findings = [f for f in run_repo(root).findings if f.rule == rule.id and f.path == EXAMPLE_PATH]
    if not example.flagged:
        assert findings == [], f"{rule.id} flagged a clean example: {[f.message for f in findings]}"
        return
    assert findings, f"{rule.id} did not flag its example:\n{example.code}"
    if example.expected is not None:
        apply_repo(root)
        assert (root / EXAMPLE_PATH).read_text() == example.expected
        assert apply_repo(root) == 0, "second apply changed the code"


def test_every_rule_has_metadata_and_examples() -> None:
    for rule in all_rules():
        assert rule.id and rule.name and rule.summary and rule.rationale and rule.fix_safety, rule
        if rule.id != "KM902":  # a crash cannot be provoked by an example
            assert any(e.flagged for e in rule.examples), f"{rule.id} has no flagged example"


def test_rule_ids_are_unique_and_well_formed() -> None:
    ids = [r.id for r in all_rules()]
    assert len(ids) == len(set(ids))
    assert all(len(i) == 5 and i.startswith("KM") and i[2:].isdigit() for i in ids)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.id)
def test_rule_example_findings_match_the_snapshot(rule) -> None:
    """Each example's findings (rule, span, severity, context, fix, message) are pinned in
    tests/snapshots/rules/<id>.txt; a changed message, a moved span or a duplicated
    finding fails here. After an intended change: scripts/update_rule_snapshots.py."""
    from tests.rule_snapshots import render, snapshot_path

    path = snapshot_path(rule)
    assert path.exists(), f"no snapshot for {rule.id}: run scripts/update_rule_snapshots.py"
    assert render(rule) == path.read_text(encoding="utf-8"), (
        f"{rule.id}'s example findings changed: run scripts/update_rule_snapshots.py "
        "and review the diff"
    )


def test_the_snapshot_catches_a_changed_message(monkeypatch) -> None:
    """The comparison is not vacuous: a rule whose message changes renders differently."""
    from kmigrate.engine.model import Finding
    from tests.rule_snapshots import render

    rule = next(r for r in all_rules() if r.id == "KM201")
    before = render(rule)
    original = Finding.__init__

    def reworded(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.message = self.message.replace("TensorFlow-only", "TF-only")

    monkeypatch.setattr(Finding, "__init__", reworded)
    assert render(rule) != before
