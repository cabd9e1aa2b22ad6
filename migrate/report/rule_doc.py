"""Rule documentation generated from the rules' own metadata and examples:
`kmigrate rules`, `kmigrate explain`, and docs/rules.md (scripts/gen_rules_doc.py)."""

from __future__ import annotations

import json

from kmigrate.engine.rule_api import EXAMPLE_PATH, Example, Rule
from kmigrate.rules.registry import all_rules, rule_by_id


def _fixable_mark(rule: type[Rule]) -> str:
    return "fix" if rule.fixable() else "manual"


def render_rules(fmt: str = "table") -> str:
    rules = all_rules()
    if fmt == "json":
        data = [
            {
                "id": r.id,
                "name": r.name,
                "summary": r.summary,
                "fixable": r.fixable(),
                "severity": r.severity.value,
            }
            for r in rules
        ]
        return json.dumps(data, indent=2) + "\n"
    if fmt == "markdown":
        return rules_markdown()
    width = max(len(r.name) for r in rules)
    lines = [f"{r.id}  {r.name:{width}}  {_fixable_mark(r):6}  {r.summary}" for r in rules]
    return "\n".join(lines) + "\n"


def rule_markdown(rule: type[Rule], heading: str = "##") -> str:
    parts = [
        f"{heading} {rule.id} `{rule.name}`",
        "",
        f"**What it finds.** {rule.summary}",
        "",
        f"**Why it matters.** {rule.rationale}",
        "",
        f"**Fix.** {'Automatic (`kmigrate apply`)' if rule.fixable() else 'Manual'}. "
        f"{rule.fix_safety}",
        "",
        f"Severity: {rule.severity.value}."
        + (
            f" Reported in: {', '.join(sorted(c.value for c in rule.contexts))}."
            if rule.contexts
            else ""
        ),
    ]
    for example in rule.examples:
        if not example.flagged:
            continue
        parts += _project_markdown(example)
        parts += ["", "Flagged:", "", "```python", example.code.rstrip(), "```"]
        if example.expected is not None:
            parts += [
                "",
                "After `kmigrate apply`:",
                "",
                "```python",
                example.expected.rstrip(),
                "```",
            ]
        break
    clean = next((e for e in rule.examples if not e.flagged), None)
    if clean is not None:
        parts += ["", "Not flagged:", "", "```python", clean.code.rstrip(), "```"]
    return "\n".join(parts) + "\n"


def _project_markdown(example: Example) -> list[str]:
    """The other files of an example's project, each under its path."""
    files = example.project_files()
    parts = []
    for path, code in files.items():
        if path == EXAMPLE_PATH:
            continue
        if not code.strip():
            parts += ["", f"In the same project, `{path}` (empty)."]
        else:
            parts += ["", f"In the same project, `{path}`:", "", "```python", code.rstrip(), "```"]
    if parts:
        parts += ["", f"and `{EXAMPLE_PATH}`:"]
    return parts


def rules_markdown() -> str:
    rules = all_rules()
    lines = [
        "# kmigrate rule catalog",
        "",
        "Generated from the rules' own metadata by `python scripts/gen_rules_doc.py`; "
        "do not edit by hand.",
        "",
        "| id | name | fix | summary |",
        "|---|---|---|---|",
    ]
    for r in rules:
        lines.append(
            f"| [{r.id}](#{r.id.lower()}-{r.name}) | `{r.name}` "
            f"| {_fixable_mark(r)} | {r.summary} |"
        )
    lines.append("")
    for r in rules:
        lines.append(rule_markdown(r))
    return "\n".join(lines)


def explain_text(code: str) -> str | None:
    """A rule's documentation, or an ops-catalog entry's, as text."""
    rule = rule_by_id(code)
    if rule is not None:
        all_examples = []
        for example in rule.examples:
            label = "Flagged" if example.flagged else "Not flagged"
            files = "".join(
                f"In the project, {path}:\n{_indent(code)}"
                for path, code in example.project_files().items()
                if path != EXAMPLE_PATH
            )
            block = f"{files}{label} ({EXAMPLE_PATH}):\n" if files else f"{label}:\n"
            block += _indent(example.code)
            if example.expected is not None:
                block += f"After `kmigrate apply`:\n{_indent(example.expected)}"
            all_examples.append(block)
        head = (
            f"{rule.id} {rule.name} ({'fixable' if rule.fixable() else 'manual'}, "
            f"{rule.severity.value})\n\n{rule.summary}\n\nWhy: {rule.rationale}\n\n"
            f"Fix: {rule.fix_safety}\n"
        )
        return head + "\n" + "\n".join(all_examples)
    try:
        from kmigrate.rules.ops_catalog import explain_entry  # provided by the ops catalog
    except ImportError:
        return None
    return explain_entry(code)


def _indent(code: str) -> str:
    return "".join(f"    {line}\n" for line in code.rstrip().splitlines()) + "\n"


def catalog_size_text(fmt: str = "table") -> str:
    """The ops catalog's size (symbols covered, exact, conditional, manual)."""
    from kmigrate.rules.ops_catalog import catalog_stats

    stats = catalog_stats()
    if fmt == "json":
        return json.dumps(stats, indent=2, sort_keys=True) + "\n"
    return "".join(f"{key:>24}: {value}\n" for key, value in stats.items())
