"""Fixing one module's text: detect, execute the plans, verify, repeat until stable.

Several rounds because an outer rewrite built from source text can hide an
inner one (``tf.reduce_mean(tf.keras.activations.relu(x))``): the next round's
scan sees what is left. Every round's result must parse; the loop stops when no
fixable finding remains or a round changes nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from kmigrate.engine.analyze import analyze_module_text
from kmigrate.engine.import_layout import ImportLayout
from kmigrate.engine.model import RULE_CRASHED, EnsureHelper, Finding
from kmigrate.engine.module_facts import ModuleFacts
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.engine.spec import ContextSpec

MAX_ROUNDS = 5


@dataclass
class FixOutcome:
    """The new text of one module and what happened on the way."""

    text: str
    fixed: int = 0  # findings fixed
    remaining: list[Finding] = field(default_factory=list)  # findings after the last round
    skipped: dict[str, str] = field(default_factory=dict)  # fingerprint -> why not fixed
    error: str | None = None  # set when the file was left untouched
    # the helper functions the fixes made call (EnsureHelper): the helper module beside
    # the file must define them (kmigrate.engine.helper_module writes it)
    helpers: list[EnsureHelper] = field(default_factory=list)
    long_lines: list[int] = field(default_factory=list)  # rewritten, still over the limit


def fix_module_text(
    path: str,
    text: str,
    ruleset: RuleSet,
    spec: ContextSpec,
    package: str = "",
    facts: ModuleFacts | None = None,
    layout: ImportLayout | None = None,
) -> FixOutcome:
    """Apply every fix the rules offer for ``text``; never returns code that does not parse.
    ``facts``: the project index's decisions about the module (see analyze_module_text);
    ``layout``: where the project sorts new imports (default: isort's sections, with the
    module's own top-level package as first-party).

    A fix whose finding is still there after every round (it would be made again each
    round: a rule bug) is left out and the rewrite starts over without it; the finding
    stays, without its fix, with the reason."""
    skipped: dict[str, str] = {}
    for _ in range(_MAX_ATTEMPTS):
        outcome, stuck = _fix_rounds(path, text, ruleset, spec, package, facts, skipped, layout)
        if not stuck:
            break
        skipped.update(dict.fromkeys(stuck, _STUCK))
    for finding in outcome.remaining:
        reason = outcome.skipped.get(finding.fingerprint)
        if reason is not None and finding.fix is not None:
            finding.fix, finding.fixed_later = None, False
            finding.message += f" (not rewritten: {reason})"
    if layout is not None and outcome.text != text and not path.endswith(".ipynb"):
        from kmigrate.engine.line_wrap import wrap_long_lines

        wrapped, outcome.long_lines = wrap_long_lines(text, outcome.text, layout.line_length)
        if wrapped != outcome.text:  # the findings left, at their lines in the wrapped text
            analysis = analyze_module_text(path, wrapped, ruleset, spec, package, facts)
            if analysis.parsed:
                outcome.text, outcome.remaining = wrapped, analysis.findings
    return outcome


def _own_package_first(layout: ImportLayout | None, package: str) -> ImportLayout:
    """The module's own top-level package is first-party whatever the settings found."""
    layout = layout or ImportLayout()
    top = package.split(".")[0]
    if not top or top in layout.first_party or top in layout.third_party:
        return layout
    return dataclasses.replace(layout, first_party=layout.first_party | {top})


def _helpers_first_party(layout: ImportLayout, fixable: list[Finding]) -> ImportLayout:
    """A helper module the fixes write beside the file (``EnsureHelper``) is the
    project's own code: its import joins the first-party block, as isort sorts it once
    the module exists."""
    helpers = {
        e.import_from.lstrip(".").split(".")[0]
        for f in fixable
        for e in (f.fix.edits if f.fix else ())
        if isinstance(e, EnsureHelper) and not e.import_from.startswith(".")
    }
    if not helpers - layout.first_party:
        return layout
    return dataclasses.replace(layout, first_party=layout.first_party | helpers)


_MAX_ATTEMPTS = 3
_STUCK = (
    "its fix did not remove the finding, so kmigrate would make it again and again; "
    "please report this kmigrate bug"
)


def _fix_rounds(
    path: str,
    text: str,
    ruleset: RuleSet,
    spec: ContextSpec,
    package: str,
    facts: ModuleFacts | None,
    skipped: dict[str, str],
    layout: ImportLayout | None = None,
) -> tuple[FixOutcome, set[str]]:
    """The rounds of one attempt, leaving out the fixes of ``skipped`` findings; and the
    findings whose fix was made and that were still fixable when the rounds ran out."""
    outcome = FixOutcome(text=text, skipped=dict(skipped))
    current = text
    analysis = analyze_module_text(path, current, ruleset, spec, package, facts)
    if not analysis.parsed:
        outcome.remaining = analysis.findings
        return outcome, set()
    first_crashes = [f for f in analysis.findings if f.rule == RULE_CRASHED]
    # An outer rewrite built from source text re-emits an inner call it contains; the
    # inner call, fixed in the next round, is the same finding (same fingerprint):
    # counted once, so the count matches what scan called fixable.
    counted: set[str] = set()
    stuck: set[str] = set()
    # names other modules import from this one: their imports stay (ModuleFacts.imported_by)
    exported = (
        frozenset(name for name, _ in facts.imported_by) if facts is not None else frozenset()
    )
    for round_number in range(MAX_ROUNDS + 1):
        fixable = [
            f
            for f in analysis.findings
            if f.fix is not None and f.fingerprint not in outcome.skipped
        ]
        if not fixable:
            break
        if round_number == MAX_ROUNDS:  # out of rounds: fixes made before that stayed
            stuck = {f.fingerprint for f in fixable if f.fingerprint in counted}
            break
        from kmigrate.engine.splice_editor import apply_plans  # LibCST only for files with fixes

        try:
            result = apply_plans(
                current,
                [f.fix for f in fixable],
                spec.import_style,
                analysis.tree,
                exported,
                _helpers_first_party(_own_package_first(layout, package), fixable),
            )
        except Exception as error:  # noqa: BLE001 - LibCST cannot parse something ast can
            outcome.error = f"could not edit this file: {type(error).__name__}: {error}"
            break
        for index, reason in result.failed.items():
            outcome.skipped[fixable[index].fingerprint] = reason
        if result.text == current:
            break
        # The next round's analysis parses the new text: that is the parse check.
        new_analysis = analyze_module_text(
            path, result.text, ruleset, spec, package, facts, tree=result.tree
        )
        if not new_analysis.parsed:
            outcome.error = "the rewritten code did not parse; the file was left untouched"
            current = text
            break
        for index in result.applied:
            outcome.helpers += [
                e
                for e in fixable[index].fix.edits  # type: ignore[union-attr]
                if isinstance(e, EnsureHelper) and e not in outcome.helpers
            ]
            if fixable[index].fingerprint not in counted:
                counted.add(fixable[index].fingerprint)
                outcome.fixed += 1
        current = result.text
        analysis = new_analysis
    outcome.text = current
    outcome.remaining = analysis.findings
    if current != text:  # a rule that crashed on the original stays reported (KM902)
        known = {(f.symbol, f.message) for f in outcome.remaining if f.rule == RULE_CRASHED}
        outcome.remaining += [f for f in first_crashes if (f.symbol, f.message) not in known]
    if outcome.error:
        outcome.text, outcome.helpers = text, []
    return outcome, stuck
