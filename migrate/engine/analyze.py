"""Detection: one ``ast`` parse, a context index, one walk that hands sites to rules.

This is the hot path of ``scan`` and ``check``; it imports neither LibCST nor any
ML framework. Each rule sees only the sites it declared (see ``rules/base.py``),
found through dictionaries built once per rule selection.
"""

from __future__ import annotations

import ast
import traceback
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kmigrate.engine.contexts import ContextIndex, build_context_index
from kmigrate.engine.fingerprint import Occurrences
from kmigrate.engine.model import (
    RULE_CRASHED,
    UNPARSEABLE,
    CallEdit,
    Context,
    EditPlan,
    Finding,
    ReplaceNode,
    Severity,
    Span,
)
from kmigrate.engine.module_facts import ModuleFacts
from kmigrate.engine.module_info import ModuleInfo
from kmigrate.engine.names import LEAF_KINDS, Resolver, child_nodes, code_children, dotted_parts
from kmigrate.engine.optional_imports import optional_imports
from kmigrate.engine.project_index import module_facts_for_text
from kmigrate.engine.rule_api import Report, Rule
from kmigrate.engine.sites import CallSite, ImportSite, Node, ReferenceSite, Scope
from kmigrate.engine.spec import ContextSpec
from kmigrate.engine.speller import Speller
from kmigrate.engine.suppress import Suppressions
from kmigrate.engine.tree_index import TreeIndex

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class RuleSet:
    """The selected rules, indexed by what they want to see."""

    def __init__(self, rule_classes: Sequence[type[Rule]]) -> None:
        self.rules: list[Rule] = [cls() for cls in rule_classes]
        self.ids = tuple(sorted(r.id for r in self.rules))
        self.by_symbol: dict[str, list[Rule]] = {}
        self.by_prefix: list[tuple[tuple[str, ...], Rule]] = []
        self.by_method: dict[str, list[Rule]] = {}
        self.by_type: dict[type, list[Rule]] = {}
        self.by_string: dict[str, list[Rule]] = {}
        self.reference_rules: list[Rule] = []
        self.import_rules: list[Rule] = []
        self.undecided_call_rules: list[Rule] = []
        for rule in self.rules:
            for symbol in rule.call_symbols:
                self.by_symbol.setdefault(symbol, []).append(rule)
            if rule.call_prefixes:
                self.by_prefix.append((tuple(rule.call_prefixes), rule))
            for method in rule.method_names:
                self.by_method.setdefault(method, []).append(rule)
            for node_type in rule.visit_types:
                self.by_type.setdefault(node_type, []).append(rule)
            for value in rule.string_constants:
                self.by_string.setdefault(value, []).append(rule)
            if rule.reference_prefixes:
                self.reference_rules.append(rule)
            if rule.wants_imports:
                self.import_rules.append(rule)
            if rule.wants_undecided_calls:
                self.undecided_call_rules.append(rule)
        self._call_cache: dict[str, list[Rule]] = {}
        self._reference_cache: dict[str, list[Rule]] = {}
        # The walk skips Load()/Add() leaves unless a rule asked to see them.
        self.visits_leaves = any(issubclass(t, LEAF_KINDS) for t in self.by_type)

    def for_call(self, symbol: str) -> list[Rule]:
        cached = self._call_cache.get(symbol)
        if cached is None:
            cached = list(self.by_symbol.get(symbol, ()))
            cached += [r for prefixes, r in self.by_prefix if symbol.startswith(prefixes)]
            self._call_cache[symbol] = cached
        return cached

    def for_reference(self, symbol: str) -> list[Rule]:
        found = self._reference_cache.get(symbol)
        if found is None:
            found = [r for r in self.reference_rules if symbol.startswith(r.reference_prefixes)]
            if len(self._reference_cache) > 50_000:
                self._reference_cache.clear()
            self._reference_cache[symbol] = found
        return found


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


class _Walker:
    def __init__(
        self, module: ModuleInfo, ruleset: RuleSet, index: ContextIndex, sink: list[Report]
    ) -> None:
        self.module = module
        self.ruleset = ruleset
        self.index = index
        self.sink = sink
        self.crashes: list[tuple[Rule, Node | None, BaseException]] = []
        self.resolver = Resolver(module.module_scope, module.canonical)
        module.resolver = self.resolver
        self.path: list[ast.AST] = module.walk_path
        self.scope = Scope()
        self.context = index.default  # module and class bodies
        self.children = child_nodes if ruleset.visits_leaves else code_children
        self.lean = not ruleset.visits_leaves  # Name and Constant have nothing below
        self.by_type = ruleset.by_type
        self.by_string = ruleset.by_string
        # The callee of the call being dispatched and its symbol: the walk reaches the
        # callee right after the call, and resolving the same chain twice is a tenth
        # of the walk.
        self._callee: tuple[ast.AST | None, str | None] = (None, None)
        # calls (as written) the project index could not decide: in few modules, if any
        facts = module.project_facts
        self.undecided = (
            dict(facts.undecided_calls) if facts and ruleset.undecided_call_rules else {}
        )

    # -- traversal -------------------------------------------------------------
    def visit(self, node: ast.AST) -> None:
        # The path from the root, so rules get parents without a pass of their own
        # (ModuleInfo.parent_of).
        path = self.path
        path.append(node)
        node_type = node.__class__
        typed_rules = self.by_type.get(node_type)
        if typed_rules:
            site = self._site(Node, node)
            for rule in typed_rules:
                self._run(rule, rule.check_node, site)
        handler = _HANDLERS.get(node_type)
        if handler is None or not handler(self, node):  # a handler says True: done below
            for child in self.children(node):
                self.visit(child)
        path.pop()

    def _on_name(self, node: ast.Name) -> bool:
        if self.lean and self.resolver.qualified_name(node.id) is None:
            return True  # most names are local variables: nothing to dispatch, nothing below
        return self._on_reference(node) or self.lean

    def _on_constant(self, node: ast.Constant) -> bool:
        value = node.value
        if self.by_string and value.__class__ is str:
            rules = self.by_string.get(value)
            if rules:
                site = self._site(Node, node)
                for rule in rules:
                    self._run(rule, rule.check_node, site)
        return self.lean  # nothing below it but a leaf

    def _on_function(self, node: ast.AST) -> bool:
        self._enter_function(node)
        return True

    def _on_class(self, node: ast.ClassDef) -> bool:
        self._enter_class(node)
        return True

    def _visit_below(self, parent: ast.AST, nodes: Iterable[ast.AST | None]) -> None:
        """Visit ``nodes``, children of ``parent`` (a node the walk does not enter)."""
        self.path.append(parent)
        for node in nodes:
            if node is not None:
                self.visit(node)
        self.path.pop()

    def _enter_function(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Lambda):
            for expr in node.decorator_list:
                self.visit(expr)
            self._visit_below(node.args, (*node.args.defaults, *node.args.kw_defaults))
            if node.returns is not None:
                self.visit(node.returns)
        saved = (self.scope, self.context)
        own = self.index.for_function(node)
        if own is not None:
            self.context = own
        if not isinstance(node, ast.Lambda):
            self.scope = Scope(
                class_name=self.scope.class_name,
                class_span=self.scope.class_span,
                class_bases=self.scope.class_bases,
                class_node=self.scope.class_node,
                function_name=(
                    node.name
                    if self.scope.function_name is None
                    else f"{self.scope.function_name}.{node.name}"
                ),
                function_node=node,
            )
        self.resolver.push(self.module.index.scope_bindings(node, self.module.package))
        body = [node.body] if isinstance(node, ast.Lambda) else node.body
        for stmt in body:
            self.visit(stmt)
        self.resolver.pop()
        self.scope, self.context = saved

    def _enter_class(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases):
            self.visit(expr)
        for keyword in node.keywords:
            self._visit_below(keyword, (keyword.value,))
        saved = (self.scope, self.context)
        bases = tuple(s for s in (self.resolver.symbol(b) for b in node.bases) if s)
        self.scope = Scope(
            class_name=node.name,
            class_span=self.module.span_of(node),
            class_bases=bases,
            class_node=node,
        )
        if node.name in self.index.model_classes and self.scope.function_name is None:
            self.context = Context.MODEL
        self.resolver.push(self.module.index.scope_bindings(node, self.module.package))
        for stmt in node.body:
            self.visit(stmt)
        self.resolver.pop()
        self.scope, self.context = saved

    # -- sites ------------------------------------------------------------------
    def _site(self, cls: type, node: ast.AST, **extra: object) -> Node:
        return cls(
            node=node,
            span=self.module.span_of(node),
            context=self.context,
            scope=self.scope,
            module=self.module,
            **extra,
        )

    def _on_call(self, node: ast.Call) -> None:
        symbol = self.resolver.symbol(node.func)
        self._callee = (node.func, symbol)
        receiver = None
        if symbol is not None:
            rules = self.ruleset.for_call(symbol)
        elif isinstance(node.func, ast.Attribute):
            rules = self.ruleset.by_method.get(node.func.attr, [])
            symbol = f"<method>.{node.func.attr}"
            receiver = node.func.value
        else:
            rules = []
        if self.undecided:
            written = dotted_parts(node.func)
            callee = ".".join(written) if written else None
            if callee in self.undecided:
                rules = [*rules, *self.ruleset.undecided_call_rules]
                symbol = symbol or callee
        if not rules:
            return
        keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
        context = self.context
        if self.scope.function_node is None and context is Context.MODEL and symbol:
            # outside functions, a call of a TensorFlow-by-design API proves its own context
            self.context = self.index.for_call(symbol) or context
        site = self._site(
            CallSite,
            node,
            symbol=symbol,
            args=list(node.args),
            keywords=keywords,
            has_star_args=any(isinstance(a, ast.Starred) for a in node.args)
            or any(k.arg is None for k in node.keywords),
            receiver=receiver,
        )
        self.context = context
        for rule in rules:
            self._run(rule, rule.check_call, site)

    def _on_reference(self, node: ast.Attribute | ast.Name) -> bool:
        """Dispatch a whole dotted chain once; True when its parts need no visit."""
        if not self.ruleset.reference_rules:
            return False
        callee, symbol = self._callee
        if callee is not node:
            symbol = self.resolver.symbol(node)
        if symbol is None:
            return False
        rules = self.ruleset.for_reference(symbol)
        if rules:
            site = self._site(ReferenceSite, node, symbol=symbol)
            for rule in rules:
                self._run(rule, rule.check_reference, site)
        return True

    def _on_import(self, node: ast.Import | ast.ImportFrom) -> None:
        if not self.ruleset.import_rules:
            return
        if isinstance(node, ast.Import):
            modules = tuple(a.name for a in node.names)
            level = 0
        else:
            base = node.module or ""
            modules = tuple(f"{base}.{a.name}" if base else a.name for a in node.names)
            level = node.level
        site = self._site(
            ImportSite,
            node,
            modules=modules,
            aliases=tuple(a.asname for a in node.names),
            is_from=isinstance(node, ast.ImportFrom),
            level=level,
        )
        for rule in self.ruleset.import_rules:
            self._run(rule, rule.check_import, site)

    def _run(self, rule: Rule, hook, site: Node | None) -> None:
        try:
            reports = hook(site) if site is not None else hook(self.module)
            for report in reports or ():
                report.rule = rule
                self.sink.append(report)
        except Exception as error:  # a crashing rule never stops the run
            self.crashes.append((rule, site, error))


# What the walk does at each kind of node besides visiting its children; a handler
# returning True has taken care of the children itself. (Plain functions, not bound
# methods held by the walker: those would make every walker a reference cycle that
# only the garbage collector frees, and keep each module alive until it runs.)
_HANDLERS: dict[type, Callable[[_Walker, Any], bool | None]] = {
    ast.Call: _Walker._on_call,
    ast.Attribute: _Walker._on_reference,
    ast.Name: _Walker._on_name,
    ast.Constant: _Walker._on_constant,
    ast.Import: _Walker._on_import,
    ast.ImportFrom: _Walker._on_import,
    ast.ClassDef: _Walker._on_class,
    **dict.fromkeys(_FUNCTIONS, _Walker._on_function),
}


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


def _crash_finding(path: str, rule: Rule, site: Node | None, error: BaseException) -> Finding:
    span = site.span if site is not None else Span(1, 0, 1, 0)
    where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    location = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    return Finding(
        rule=RULE_CRASHED,
        severity=Severity.ERROR,
        message=(
            f"rule {rule.id} crashed on this file: {type(error).__name__}: {error}{location}; "
            "other rules ran, this rule's findings for the file are incomplete"
        ),
        path=path,
        span=span,
        context=site.context if site is not None else Context.OTHER,
        symbol=rule.id,
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
    walker = _Walker(module, ruleset, index, reports)
    try:
        walker.visit(tree)
    except RecursionError as error:
        walker.crashes.append((ruleset.rules[0] if ruleset.rules else Rule(), None, error))
    module.walk_path.clear()  # rules run after the walk see no stale path
    for rule in ruleset.rules:
        walker._run(rule, rule.check_module, None)
    waiting: list[tuple[Finding, Report]] = []  # findings a later apply round may fix
    fixable: list[tuple[Finding, ast.AST]] = []  # with the node each one's fix is at
    result.findings.extend(_findings_from_reports(path, reports, ruleset, waiting, fixable))
    module.release()
    result.shared_path_reads = tuple(sorted(module.shared_path_reads))
    if (
        facts.mixed_functions
        or facts.notes
        or facts.patched
        or any(f.context is Context.UNDECIDED for f in result.findings)
    ):
        _apply_project_notes(result.findings, facts)
    if spec.optional_imports:
        _keep_optional_calls(result.findings, module, spec.optional_imports)
    result.findings.extend(_crash_finding(path, r, s, e) for r, s, e in walker.crashes)
    suppressions = Suppressions.from_text(text)
    result.suppressions = suppressions
    result.findings = [f for f in result.findings if not suppressions.suppresses(f)]
    # after the project's vetoes and the suppressions: apply sees the same fixes
    at = {id(finding): node for finding, node in fixable}
    plans, unspelled = _keep_spellable_fixes(result.findings, module, spec, at)
    if waiting:
        _mark_fixed_later(result.findings, waiting)
    if unspelled:
        _spellable_later(unspelled, plans, module, spec, waiting, at)
    fingerprint_findings(result.findings)
    return result


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


def _findings_from_reports(
    path: str,
    reports: Iterable[Report],
    ruleset: RuleSet,
    waiting: list[tuple[Finding, Report]] | None = None,
    fixable: list[tuple[Finding, ast.AST]] | None = None,
) -> list[Finding]:
    """The rules' reports as findings; ``waiting`` gets those a later ``apply`` round
    may fix (:func:`_mark_fixed_later` decides once the findings are final), ``fixable``
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


def _mark_fixed_later(findings: list[Finding], waiting: list[tuple[Finding, Report]]) -> None:
    """Which blocked findings ``apply`` fixes in a later round, so that scan counts them
    as fixable: every blocker is fixable, and a use is left that keeps the fix needed."""
    fixable = {f.symbol for f in findings if f.fix is not None}
    manual = {f.symbol for f in findings if f.fix is None}
    for finding, report in waiting:
        unblocked = report.unblocked_by <= fixable and not report.unblocked_by & manual
        left = any(s not in fixable or s in manual for s in report.kept_by)
        finding.fixed_later = unblocked and left


def _apply_project_notes(findings: list[Finding], facts: ModuleFacts) -> None:
    """Findings in helpers shared by model code and a data pipeline keep no fix (a rewrite
    must suit both callers: report them), nor calls of TF/Keras functions the project
    replaces; findings in undecided classes say why."""
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
        elif undecided:
            finding.fix = None
            finding.message += (
                f" (undecided, not rewritten: `{owner}` is reached from model code and "
                f"from data code in this module ({_DATA_CODE}); change it by hand or split it)"
            )
        note = notes.get(owner)
        if note is not None:
            finding.message += _note_text(note)


def _keep_spellable_fixes(
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
    with that fix and why (:func:`_spellable_later` decides about them)."""
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


def _spellable_later(
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


def _keep_optional_calls(
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
    :func:`_apply_project_notes`, which adds it last; crash findings get none)."""
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
