"""What the rules' reports become: findings (one per rule, span and message), their
fixes kept only where the project's facts and the module's imports allow them (a
helper shared with a data pipeline, a function the project patches, a name the
module cannot spell, a call through an optional import), and the node text that
fingerprints them (:func:`node_dump`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from kmigrate.engine.model import (
    RULE_CRASHED,
    CallEdit,
    Context,
    EditPlan,
    Finding,
    ReplaceNode,
    Severity,
)
from kmigrate.engine.module_facts import ModuleFacts
from kmigrate.engine.module_info import ModuleInfo
from kmigrate.engine.optional_imports import optional_imports
from kmigrate.engine.rule_api import Report
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.engine.sites import Node
from kmigrate.engine.spec import ContextSpec
from kmigrate.engine.speller import Speller

_DUMP_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def node_dump(node: object) -> str:
    """``ast.dump(node)``, the same text, about three times faster: the per-class
    field tables are built once instead of on every call (fingerprints use it for
    every finding)."""
    cls = node.__class__
    if cls is ast.Name:  # the most common nodes, spelled out
        return f"Name(id={node.id!r}, ctx={node.ctx.__class__.__name__}())"  # type: ignore[attr-defined]
    if cls is ast.Constant and node.kind is None:  # type: ignore[attr-defined]
        return f"Constant(value={node.value!r})"  # type: ignore[attr-defined]
    if cls is ast.Attribute:
        value = node_dump(node.value)  # type: ignore[attr-defined]
        return f"Attribute(value={value}, attr={node.attr!r}, ctx={node.ctx.__class__.__name__}())"  # type: ignore[attr-defined]
    if cls is ast.Call:  # kept on the node: findings often point at calls nested in calls
        attributes = node.__dict__
        text = attributes.get("_kmigrate_dump")
        if text is None:
            args = ", ".join([node_dump(a) for a in node.args])  # type: ignore[attr-defined]
            keywords = ", ".join([node_dump(k) for k in node.keywords])  # type: ignore[attr-defined]
            text = f"Call(func={node_dump(node.func)}, args=[{args}], keywords=[{keywords}])"  # type: ignore[attr-defined]
            attributes["_kmigrate_dump"] = text
        return text
    fields = _DUMP_FIELDS.get(cls)
    if fields is None:
        if cls is list:
            return "[" + ", ".join([node_dump(item) for item in node]) + "]"  # type: ignore[attr-defined]
        if not isinstance(node, ast.AST):
            return repr(node)
        # (name, omitted when None): optional fields default to None on the class
        fields = tuple((name, getattr(cls, name, ...) is None) for name in cls._fields)
        _DUMP_FIELDS[cls] = fields
    args = []
    for name, optional in fields:
        try:
            value = getattr(node, name)
        except AttributeError:
            continue
        if value is None and optional:
            continue
        args.append(f"{name}={node_dump(value)}")
    return f"{cls.__name__}({', '.join(args)})" if args else f"{cls.__name__}()"


def findings_from_reports(
    path: str,
    reports: Iterable[Report],
    ruleset: RuleSet,
    waiting: list[tuple[Finding, Report]] | None = None,
    fixable: list[tuple[Finding, ast.AST]] | None = None,
) -> list[Finding]:
    """The rules' reports as findings; ``waiting`` gets those a later ``apply`` round
    may fix (:func:`mark_fixed_later` decides once the findings are final), ``fixable``
    those with a fix, with their site's node."""
    findings: list[Finding] = []
    seen: set[tuple] = set()
    for report in reports:
        rule = report.rule
        site = report.site
        if rule.contexts is not None and site.context not in rule.contexts:
            continue
        span = report.span or site.span
        key = (rule.id, span, report.message)
        if key in seen:
            continue
        seen.add(key)
        findings.append(
            Finding(
                rule=rule.id,
                severity=report.severity or rule.severity,
                message=report.message,
                path=path,
                span=span,
                context=site.context,
                symbol=report.symbol if report.symbol is not None else _site_symbol(site),
                fix=report.fix,
                scope_name=site.scope.qualname,
                source_text=node_dump(site.node),
            )
        )
        if report.unblocked_by and report.fix is None and waiting is not None:
            waiting.append((findings[-1], report))
        if report.fix is not None and fixable is not None:
            fixable.append((findings[-1], site.node))
    return findings


def mark_fixed_later(findings: list[Finding], waiting: list[tuple[Finding, Report]]) -> None:
    """Which blocked findings ``apply`` fixes in a later round, so that scan counts them
    as fixable: every blocker is fixable, and a use is left that keeps the fix needed."""
    fixable = {f.symbol for f in findings if f.fix is not None}
    manual = {f.symbol for f in findings if f.fix is None}
    for finding, report in waiting:
        unblocked = report.unblocked_by <= fixable and not report.unblocked_by & manual
        left = any(s not in fixable or s in manual for s in report.kept_by)
        finding.fixed_later = unblocked and left


def apply_project_notes(
    findings: list[Finding], facts: ModuleFacts, feeders: Mapping[str, str] | None = None
) -> None:
    """Findings in helpers shared by model code and a data pipeline keep no fix (a rewrite
    must suit both callers: report them), nor calls of TF/Keras functions the project
    replaces; findings in undecided classes say why. ``feeders``: in a module without
    Keras, the undecided functions that call data code, with the data function each
    calls (``ContextIndex.undecided_why``)."""
    feeders = feeders or {}
    mixed = {**dict.fromkeys(facts.mixed_functions, ""), **dict(facts.data_callers)}
    notes = dict(facts.notes)
    patched = dict(facts.patched)
    for finding in findings:
        where = patched.get(finding.symbol)
        if where is not None and finding.fix is not None:
            finding.fix = None
            finding.message += (
                f" (not rewritten: {where} replaces `{finding.symbol}` with its own function, "
                "so this call may not be the TensorFlow one)"
            )
        owner = finding.scope_name.split(".", 1)[0]
        undecided = finding.context is Context.UNDECIDED
        if owner in mixed and (finding.fix is not None or undecided):
            finding.fix = None
            caller = mixed[owner]
            data = f"from data code, {caller}" if caller else "is data code itself"
            finding.message += (
                f" (undecided, not rewritten: `{owner}` is called from model code and {data} "
                f"({_DATA_CODE}); change it by hand or split it)"
            )
        elif undecided and owner in feeders:
            finding.fix = None
            finding.message += (
                f" (undecided, not rewritten: `{owner}` calls `{feeders[owner]}`, data code "
                f"({_DATA_CODE}), in a module without Keras, and nothing shows a model runs "
                "it; change it by hand if a model does)"
            )
        elif undecided:
            finding.fix = None
            finding.message += (
                f" (undecided, not rewritten: `{owner}` is reached from model code and "
                f"from data code in this module ({_DATA_CODE}); change it by hand or split it)"
            )
        note = notes.get(owner)
        if note is not None:
            finding.message += _note_text(note)


def keep_spellable_fixes(
    findings: list[Finding], module: ModuleInfo, spec: ContextSpec, at: Mapping[int, ast.AST]
) -> tuple[list[EditPlan], list[tuple[Finding, EditPlan, str]]]:
    """Fixes whose new names the module cannot spell keep no fix: with ``import tf_keras
    as keras`` a written ``keras.random.SeedGenerator`` would be tf_keras's, and the
    editor refuses it (:class:`~kmigrate.engine.speller.UnspellableNameError`); scan says so
    first, so that it promises only what ``apply`` makes. Names are spelled as the module
    binds them once this round's import rewrites are made (``import tf_keras as keras``
    becoming ``import keras``). In a function with a parameter or variable ``ops``, a
    written ``ops.mean`` would name that: refused too (``at``: each finding's node, by
    the finding's id). Returns this round's plans, and the findings that lost their fix
    with that fix and why (:func:`spellable_later` decides about them)."""
    plans = [f.fix for f in findings if f.fix is not None]
    if not plans:
        return plans, []
    speller = _speller(module, spec, plans)
    unspelled: list[tuple[Finding, EditPlan, str]] = []
    for finding in findings:
        plan = finding.fix
        if plan is not None:
            why = _unspellable(speller, plan, module, at.get(id(finding)))
            if why:
                unspelled.append((finding, plan, why))
                finding.fix, finding.fixed_later = None, False
    return plans, unspelled


def _speller(module: ModuleInfo, spec: ContextSpec, plans: list[EditPlan]) -> Speller:
    scope = module.index.scope_bindings(module.tree)
    return Speller.for_scope(scope, module.tree, spec.import_style, plans)


def _unspellable(speller: Speller, plan: EditPlan, module: ModuleInfo, node: ast.AST | None) -> str:
    """Why ``plan`` cannot be written at ``node`` ("" when it can): a name it spells
    is bound to something else by the module, or by a function around ``node``."""
    for qualified in sorted(plan.spelled_names()):
        name, why = speller.first_name(qualified)
        if why:
            return why
        function = module.index.local_binder(node, name) if node is not None else None
        if function is not None:
            return f"`{name}` is a local name in `{function}` here"
    return ""


def spellable_later(
    unspelled: list[tuple[Finding, EditPlan, str]],
    plans: list[EditPlan],
    module: ModuleInfo,
    spec: ContextSpec,
    waiting: list[tuple[Finding, Report]],
    at: Mapping[int, ast.AST],
) -> None:
    """Of the fixes that lost their fix for a name the module binds otherwise, those a
    later round makes are fixable too: the import that binds the name is rewritten in
    that round (a waiting finding that ``apply`` fixes once its blockers are, whose
    rule said what the import becomes), and no fix of this round edits their code (a
    save's fix moves its load's path: the load's finding is gone in the next round).
    The others say why they are not rewritten."""
    later = [
        report.later_fix
        for finding, report in waiting
        if finding.fixed_later and report.later_fix is not None
    ]
    speller = _speller(module, spec, [*plans, *later]) if later else None
    unspelled_plans = {id(p) for _, p, _ in unspelled}
    edited = [
        edit.span
        for plan in plans
        if id(plan) not in unspelled_plans
        for edit in plan.edits
        if isinstance(edit, (CallEdit, ReplaceNode))
    ]
    for finding, plan, why in unspelled:
        if (
            speller is not None
            and not _unspellable(speller, plan, module, at.get(id(finding)))
            and not any(finding.span.overlaps(span) for span in edited)
        ):
            finding.fixed_later = True
        else:
            finding.message += f" (not rewritten: {why})"


def keep_optional_calls(
    findings: list[Finding], module: ModuleInfo, optional: tuple[tuple[str, str], ...]
) -> None:
    """Findings on calls through a framework the module imports only optionally keep no
    fix and become notes, manual ones too (see :mod:`~kmigrate.engine.optional_imports`):
    that code runs in an input pipeline, where it works on every backend as it is and a
    rewrite would break it on the other backends; nothing there is porting work."""
    why = dict(optional)
    found = optional_imports(module.tree, module.canonical, tuple(why), module.package)
    if not found:
        return
    for finding in findings:
        for symbol, line in found.items():
            if finding.symbol == symbol or finding.symbol.startswith(symbol + "."):
                finding.fix = None
                finding.severity = Severity.INFO  # a note: there is nothing to port
                finding.message += (
                    f" (not rewritten: this module imports `{symbol}` as optional (line "
                    f"{line}), {why[symbol]}; port it by hand if it runs in the model)"
                )
                break


# What the project index counts as data code (ContextSpec.data_methods and
# data_symbol_prefixes), for the findings of helpers shared with model code.
_DATA_CODE = "a dataset's `map` function, or code calling TensorFlow's data or I/O APIs"


def _note_text(note: str) -> str:
    return f" ({note})"


def replace_project_notes(
    findings: Iterable[Finding],
    old: tuple[tuple[str, str], ...],
    new: tuple[tuple[str, str], ...],
) -> None:
    """Turn findings analysed with the project notes ``old`` into those analysed with
    ``new`` (``ModuleFacts.notes``), in place, without analysing again: a note only ends
    the messages of the findings in its class or function (see
    :func:`apply_project_notes`, which adds it last; crash findings get none)."""
    before, after = dict(old), dict(new)
    for finding in findings:
        owner = finding.scope_name.split(".", 1)[0]
        note, wanted = before.get(owner), after.get(owner)
        if note == wanted or finding.rule == RULE_CRASHED:
            continue
        if note is not None:
            finding.message = finding.message.removesuffix(_note_text(note))
        if wanted is not None:
            finding.message += _note_text(wanted)


def _site_symbol(site: Node) -> str:
    return getattr(site, "symbol", "") or ""
