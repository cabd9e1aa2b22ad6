"""Detection: one ``ast`` parse, a context index, one walk that hands sites to rules.

This is the hot path of ``scan`` and ``check``; it imports neither LibCST nor any
ML framework. Each rule sees only the sites it declared (see ``rules/base.py``),
found through dictionaries built once per rule selection.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field, replace

from kmigrate.engine.contexts import build_context_index
from kmigrate.engine.fingerprint import Occurrences
from kmigrate.engine.model import (
    UNPARSEABLE,
    Context,
    Finding,
    Severity,
    Span,
)
from kmigrate.engine.module_facts import ModuleFacts
from kmigrate.engine.module_info import ModuleInfo
from kmigrate.engine.project_index import module_facts_for_text
from kmigrate.engine.report_findings import (
    apply_project_notes,
    findings_from_reports,
    keep_optional_calls,
    keep_spellable_fixes,
    mark_fixed_later,
    spellable_later,
)
from kmigrate.engine.rule_api import Report, Rule
from kmigrate.engine.rule_walk import RuleSet, RuleWalker, crash_finding
from kmigrate.engine.spec import ContextSpec
from kmigrate.engine.suppress import Suppressions
from kmigrate.engine.tree_index import TreeIndex


@dataclass
class FileAnalysis:
    """Findings of one file plus what the report needs to know about it."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    parsed: bool = True
    suppressions: Suppressions | None = None
    tree: ast.Module | None = None  # for per-file measures computed after the rules
    tree_index: TreeIndex | None = None  # the tree's index, for the same
    # analysed without project facts: the module's own facts and its index entry
    own_facts: ModuleFacts | None = None
    index_entry: dict | None = None
    shared_path_reads: tuple[str, ...] = ()  # see ModuleInfo.shared_path_users


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in legacy code
        return ast.parse(text)


def unparseable_finding(path: str, message: str, line: int = 1, column: int = 0) -> Finding:
    """A fingerprinted KM901 finding: the file cannot be read, decoded or parsed."""
    finding = Finding(
        rule=UNPARSEABLE,
        severity=Severity.ERROR,
        message=message,
        path=path,
        span=Span(line, column, line, column),
        context=Context.OTHER,
    )
    fingerprint_findings([finding])
    return finding


def _syntax_error_finding(path: str, error: SyntaxError) -> Finding:
    message = f"cannot parse this file: {error.msg}"
    if "Missing parentheses in call to" in (error.msg or "") or "print" in (error.text or ""):
        message += " (Python 2 code? kmigrate needs Python 3 syntax; run 2to3 first)"
    column = max((error.offset or 1) - 1, 0)
    return unparseable_finding(
        path, message + "; the file is left untouched", error.lineno or 1, column
    )


def fingerprint_findings(findings: list[Finding]) -> None:
    """Give each finding a fingerprint that survives edits elsewhere in the file.

    Inputs: path, rule, symbol, enclosing class/function and the node's ``ast.dump``
    (so reformatting and moved lines do not change it), plus the occurrence number
    among identical ones (so a second identical call is a new finding).
    """
    occurrences = Occurrences()
    for finding in sorted(findings, key=Finding.sort_key):
        if finding.fingerprint:
            continue  # done already, and its node text is gone
        finding.fingerprint = occurrences.fingerprint(
            finding.path, finding.rule, finding.symbol, finding.scope_name, finding.source_text
        )
        # Only the fingerprint needed the node's text: dropped, it no longer travels
        # from the worker processes or fills the cache (half of a result's bytes).
        finding.source_text = ""


def analyze_module_text(
    path: str,
    text: str,
    ruleset: RuleSet,
    spec: ContextSpec,
    package: str = "",
    facts: ModuleFacts | None = None,
    shared_guess: tuple[tuple[str, str], ...] = (),
    tree: ast.Module | None = None,
    tree_index: TreeIndex | None = None,
) -> FileAnalysis:
    """Run the selected rules over one module's text. Never raises for bad input.

    ``facts``: what the project index decided about this module (classes derived from
    layers in other modules, helpers called from model code elsewhere, re-exported
    backends); None when analysed alone, then the module's own facts are worked out,
    with ``shared_guess`` as the file names other modules use (the runner's guess,
    checked against the project's answer once it is resolved).
    ``tree``: ``ast.parse(text)`` when the caller has it (``apply``'s editor does), and
    ``tree_index`` its :class:`TreeIndex` when the caller made one."""
    result = FileAnalysis(path=path)
    try:
        tree = _parse(text) if tree is None else tree
    except (SyntaxError, ValueError) as error:
        result.parsed = False
        if not isinstance(error, SyntaxError):
            error = SyntaxError(str(error))
        result.findings.append(_syntax_error_finding(path, error))
        fingerprint_findings(result.findings)
        return result
    except RecursionError:
        result.parsed = False
        result.findings.append(
            _syntax_error_finding(path, SyntaxError("nesting too deep for the parser"))
        )
        fingerprint_findings(result.findings)
        return result
    tree_index = tree_index or TreeIndex(tree)
    if facts is None:
        try:
            facts, result.index_entry = module_facts_for_text(tree, spec, package, tree_index)
        except RecursionError:
            facts = ModuleFacts()
        if shared_guess:
            facts = replace(facts, shared_paths=shared_guess)
        result.own_facts = facts
    module = ModuleInfo(path, text, tree, package, canonical=spec.canonical, index=tree_index)
    module.bind(facts.bindings)
    module.project_facts = facts
    result.tree, result.tree_index = tree, tree_index
    index = build_context_index(tree, module.resolver, spec, facts, tree_index)
    module.default_context = index.default
    reports: list[Report] = []
    walker = RuleWalker(module, ruleset, index, reports)
    try:
        walker.visit(tree)
    except RecursionError as error:
        walker.crashes.append((ruleset.rules[0] if ruleset.rules else Rule(), None, error))
    module.walk_path.clear()  # rules run after the walk see no stale path
    for rule in ruleset.rules:
        walker._run(rule, rule.check_module, None)
    waiting: list[tuple[Finding, Report]] = []  # findings a later apply round may fix
    fixable: list[tuple[Finding, ast.AST]] = []  # with the node each one's fix is at
    result.findings.extend(findings_from_reports(path, reports, ruleset, waiting, fixable))
    module.release()
    result.shared_path_reads = tuple(sorted(module.shared_path_reads))
    if (
        facts.mixed_functions
        or facts.notes
        or facts.patched
        or any(f.context is Context.UNDECIDED for f in result.findings)
    ):
        apply_project_notes(result.findings, facts, index.undecided_why)
    if spec.optional_imports:
        keep_optional_calls(result.findings, module, spec.optional_imports)
    result.findings.extend(crash_finding(path, r, s, e) for r, s, e in walker.crashes)
    suppressions = Suppressions.from_text(text)
    result.suppressions = suppressions
    result.findings = [f for f in result.findings if not suppressions.suppresses(f)]
    # after the project's vetoes and the suppressions: apply sees the same fixes
    at = {id(finding): node for finding, node in fixable}
    plans, unspelled = keep_spellable_fixes(result.findings, module, spec, at)
    if waiting:
        mark_fixed_later(result.findings, waiting)
    if unspelled:
        spellable_later(unspelled, plans, module, spec, waiting, at)
    fingerprint_findings(result.findings)
    return result
