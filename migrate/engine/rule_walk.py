"""The one walk over a parsed module that hands each rule the sites it declared (calls,
references, imports, functions, classes: see ``rules/base.py``), found through
dictionaries built once per rule selection (:class:`RuleSet`). A fallback rule is
handed only the sites no other rule claims (``engine/claims.py``). A rule that raises
becomes a KM902 finding for that file; the other rules run on."""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kmigrate.engine.claims import ClaimIndex
from kmigrate.engine.contexts import ContextIndex
from kmigrate.engine.model import (
    RULE_CRASHED,
    Context,
    Finding,
    Severity,
    Span,
)
from kmigrate.engine.module_info import ModuleInfo
from kmigrate.engine.names import LEAF_KINDS, Resolver, child_nodes, code_children, dotted_parts
from kmigrate.engine.rule_api import Report, Rule
from kmigrate.engine.sites import CallSite, ImportSite, Node, ReferenceSite, Scope

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class RuleSet:
    """The selected rules, indexed by what they want to see. ``claimants``: the rules
    whose claims fallbacks leave alone (the callers pass every registered rule, so that
    a selection does not change what a fallback reports); None: ``rule_classes``."""

    def __init__(
        self,
        rule_classes: Sequence[type[Rule]],
        claimants: Sequence[type[Rule]] | None = None,
    ) -> None:
        self.rules: list[Rule] = [cls() for cls in rule_classes]
        self.claims = ClaimIndex(rule_classes if claimants is None else claimants)
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

    def shown(self, rule: Rule, site: CallSite | ReferenceSite) -> bool:
        """Whether ``rule`` is handed ``site``: a fallback is not, where another rule
        claims the site's symbol."""
        how = rule.fallback
        return how is None or not self.claims.claimed(site.symbol, site.context, how)  # type: ignore[arg-type]


class RuleWalker:
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
            if self.ruleset.shown(rule, site):
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
                if self.ruleset.shown(rule, site):
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
_HANDLERS: dict[type, Callable[[RuleWalker, Any], bool | None]] = {
    ast.Call: RuleWalker._on_call,
    ast.Attribute: RuleWalker._on_reference,
    ast.Name: RuleWalker._on_name,
    ast.Constant: RuleWalker._on_constant,
    ast.Import: RuleWalker._on_import,
    ast.ImportFrom: RuleWalker._on_import,
    ast.ClassDef: RuleWalker._on_class,
    **dict.fromkeys(_FUNCTIONS, RuleWalker._on_function),
}


def crash_finding(path: str, rule: Rule, site: Node | None, error: BaseException) -> Finding:
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
