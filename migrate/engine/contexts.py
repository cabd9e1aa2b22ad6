"""Static context classification: is this code model code, a training loop, a data
pipeline, serving or distribution code, or undecided?

It matters because only model code is rewritten to Keras 3: ``tf.data`` pipelines are
portable inputs and a ``GradientTape`` loop is backend-specific by nature. What counts as
a Keras base class or a data API is TensorFlow knowledge and comes in as a
:class:`~kmigrate.engine.spec.ContextSpec` from ``rules/``; this module only knows how
to propagate it.

In a module that uses Keras, code is model code unless positive evidence proves it
TensorFlow by design: seeds (a ``.map(f)``, a ``tf.data`` / ``tf.io`` call, a
``GradientTape`` block, a ``tf.saved_model`` or ``tf.distribute`` call) propagate along
the module's own call graph; the absence of a recognised base class proves nothing. A
function reached both from model code (a layer's method, a function applied to
``keras.Input`` tensors) and from data code is ``undecided``: reported, never rewritten.
A layer's own methods are model code whatever they call. Nested functions inherit their
enclosing context unless seeded themselves. A module without any Keras name of its own
is held to the same default when another module of its project uses Keras
(``ModuleFacts.keras_project``): a helper a layer reaches through something the project
index cannot follow is still model code. Only in a project without Keras (or a module
analysed alone without Keras) does unseeded code stay ``other``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kmigrate.engine.model import Context
from kmigrate.engine.names import Resolver
from kmigrate.engine.spec import ContextSpec, function_refs
from kmigrate.engine.tree_index import TreeIndex, innermost

if TYPE_CHECKING:
    from kmigrate.engine.module_facts import ModuleFacts


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class ContextIndex:
    """Context per function node and the set of model classes of one module; code
    outside any function (module and class bodies) has ``default``."""

    function_context: dict[int, Context] = field(default_factory=dict)
    model_classes: set[str] = field(default_factory=set)
    default: Context = Context.OTHER
    # (symbol prefixes, context): a call of one of these outside any function (a script's
    # `tf.saved_model.load(...)`) is its own evidence: that call has that context
    call_contexts: tuple[tuple[tuple[str, ...], Context], ...] = ()
    # top-level function or class -> the data function it calls (at any depth) that
    # made it undecided in a module without Keras (``_undecided_feeders``)
    undecided_why: dict[str, str] = field(default_factory=dict)

    def for_function(self, node: ast.AST) -> Context | None:
        return self.function_context.get(id(node))

    def for_call(self, symbol: str) -> Context | None:
        """The context a call of ``symbol`` proves by itself, if any."""
        for prefixes, context in self.call_contexts:
            if symbol.startswith(prefixes):
                return context
        return None


def _callee_name(call: ast.Call) -> tuple[str | None, bool]:
    """(name, is_self_method) for ``f(...)`` and ``self.f(...)`` calls."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id, False
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("self", "cls")
    ):
        return func.attr, True
    return None, False


class _Indexer:
    def __init__(
        self,
        tree: ast.Module,
        resolver: Resolver,
        spec: ContextSpec,
        facts: ModuleFacts | None,
        index: TreeIndex,
    ) -> None:
        self.tree = tree
        self.index = index
        self.facts = facts
        self.resolver = resolver
        self.spec = spec
        self.module_functions: dict[str, ast.AST] = {}
        self.class_methods: dict[str, dict[str, ast.AST]] = {}
        self.class_of_method: dict[int, str] = {}
        self.calls: dict[int, set[int]] = {}  # function id -> called function ids
        self.nested: dict[int, set[int]] = {}  # function id -> functions defined in it
        self._assignments: dict[str, list[ast.expr]] | None = None
        self.nodes: dict[int, ast.AST] = {}
        self.seeds: dict[Context, set[int]] = {c: set() for c in Context}
        self.model_classes: set[str] = set()
        self.own_model: set[int] = set()  # model code whoever calls it: layer methods...

    def run(self) -> ContextIndex:
        self._collect_definitions()
        self._find_model_classes()
        self._walk_bodies()
        self._seed_from_project()
        own_keras = self._uses_keras()
        keras = own_keras or (self.facts is not None and self.facts.keras_project)
        spec = self.spec
        index = ContextIndex(
            model_classes=self.model_classes,
            default=Context.MODEL if keras else Context.OTHER,
            call_contexts=(
                ((*spec.training_symbols, *spec.training_call_prefixes), Context.TRAINING_LOOP),
                ((*spec.serving_symbols, *spec.saved_model_saves), Context.SERVING),
                (spec.distribution_symbols, Context.DISTRIBUTION),
                (spec.data_symbol_prefixes, Context.DATA),
            ),
        )
        seeded = set().union(*self.seeds.values())
        reach = {c: self._reachable(self.seeds[c], seeded) for c in self.seeds}
        data = reach[Context.DATA]
        for fid in reach[Context.MODEL]:
            conflict = fid in data and fid not in self.own_model
            index.function_context[fid] = Context.UNDECIDED if conflict else Context.MODEL
        for context in _TF_BY_DESIGN:
            for fid in reach[context]:
                index.function_context.setdefault(fid, context)
        if keras and not own_keras:
            self._undecided_feeders(index, data, seeded)
        if keras:
            for fid in self.nodes:
                index.function_context.setdefault(fid, Context.MODEL)
        return index

    def _uses_keras(self) -> bool:
        """Whether the module is Keras code: it defines or reaches model code, or binds
        or reads a Keras namespace (``K``, ``from tensorflow import keras``, ``tf.keras``)."""
        facts = self.facts
        if self.model_classes or (
            facts is not None and (facts.model_functions or facts.mixed_functions)
        ):
            return True
        spec = self.spec
        canonical = self.resolver.canonical
        bound = [*self.resolver.stack[0].imports.values(), *self.index.added_bindings()]
        if any(spec.is_keras_symbol(canonical(q)) for q in bound):  # Keras's injected modules too
            return True
        if any(  # `from keras.layers import *` binds no name the resolver lists
            not node.level and spec.is_keras_symbol(canonical(node.module or ""))
            for node in self.index.nodes(ast.ImportFrom)
            if any(alias.name == "*" for alias in node.names)
        ):
            return True
        tails = {ns.rpartition(".")[2] for ns in spec.keras_namespaces if "." in ns}
        for node in self.index.nodes(ast.Attribute):
            if node.attr in tails:  # type: ignore[attr-defined]
                symbol = self.resolver.symbol(node)  # type: ignore[arg-type]
                if symbol is not None and spec.is_keras_symbol(symbol):
                    return True
        return False

    def _undecided_feeders(self, index: ContextIndex, data: set[int], seeded: set[int]) -> None:
        """In a module without Keras of its own (model code only by the project's
        default), a function nothing decided that calls data code, at any depth, works
        on what an input pipeline parses: ``undecided``, reported and never rewritten."""
        callers: dict[int, set[int]] = {}
        for fid, out in self.calls.items():
            for callee in out:
                callers.setdefault(callee, set()).add(fid)
        via: dict[int, int] = {}  # feeder -> the data function it reaches first
        # in the order of the module's walk, not of the ids (memory addresses): the data
        # function a finding names must not change from one run to the next
        numbers = self.index.numbers

        def order(fid: int) -> tuple[int, int]:
            return numbers.get(fid, len(numbers)), fid

        stack = [(fid, fid) for fid in sorted(data, key=order)]
        while stack:
            fid, first = stack.pop()
            for caller in sorted(callers.get(fid, ()), key=order):
                if caller not in via and caller not in index.function_context:
                    via[caller] = first
                    stack.append((caller, first))
        for fid in self._reachable(set(via), seeded) - set(index.function_context):
            index.function_context[fid] = Context.UNDECIDED
        names = self._owner_names()
        for fid, first in via.items():
            owner, used = names.get(fid), names.get(first)
            if owner is not None and used is not None:
                index.undecided_why.setdefault(owner, used)

    def _owner_names(self) -> dict[int, str]:
        """Function node id -> the name findings in it carry first (its top-level
        function, or its class for a method)."""
        names = {id(node): name for name, node in self.module_functions.items()}
        names.update(self.class_of_method)
        return names

    # -- definitions ---------------------------------------------------------
    def _collect_definitions(self) -> None:
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.module_functions[stmt.name] = stmt
            elif isinstance(stmt, ast.ClassDef):
                methods = {}
                for item in stmt.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        methods[item.name] = item
                        self.class_of_method[id(item)] = stmt.name
                self.class_methods[stmt.name] = methods

    def _seed_from_project(self) -> None:
        """Functions other modules call from model code or data pipelines."""
        if self.facts is None:
            return
        for names, context in (
            (self.facts.model_functions, Context.MODEL),
            (self.facts.data_functions, Context.DATA),
            (self.facts.mixed_functions, Context.DATA),  # and model: undecided
        ):
            for name in names:
                node = self.module_functions.get(name)
                if node is not None:
                    self.seeds[context].add(id(node))
        for name in self.facts.model_methods:  # helper objects, mixins, loss objects
            cname, _, method = name.partition(".")
            node = self.class_methods.get(cname, {}).get(method)
            if node is not None:
                self.seeds[Context.MODEL].add(id(node))

    def _find_model_classes(self) -> None:
        classes = [s for s in self.tree.body if isinstance(s, ast.ClassDef)]
        if self.facts is not None:  # bases resolved through the project's modules
            known = self.class_methods
            self.model_classes.update(n for n in self.facts.model_classes if n in known)
        changed = True
        while changed:  # a subclass of a model class in this module is a model class
            changed = False
            for cls in classes:
                if cls.name not in self.model_classes and self._is_model_class(cls):
                    self.model_classes.add(cls.name)
                    changed = True
        for name in self.model_classes:
            for method in self.class_methods.get(name, {}).values():
                self.seeds[Context.MODEL].add(id(method))
                self.own_model.add(id(method))

    def _is_model_class(self, cls: ast.ClassDef) -> bool:
        for base in cls.bases:
            symbol = self.resolver.symbol(base)
            if symbol and symbol.startswith(self.spec.model_base_prefixes):
                return True
            if isinstance(base, ast.Name) and base.id in self.model_classes:
                return True
            tail = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
            if symbol is None and tail.endswith(self.spec.model_name_suffixes):
                return True
        return False

    # -- bodies: call graph and seeds -----------------------------------------
    def _walk_bodies(self) -> None:
        """The call graph and the seeds, from the calls, ``with`` blocks and nested
        functions of the module, each with the innermost function (its owner) and
        class around it: sweeps over the tree index instead of a walk."""
        index = self.index
        functions = index.function_regions()
        for function, owner in innermost([(r[0], r[2]) for r in functions], functions, True):
            self.nodes[id(function)] = function
            self.calls.setdefault(id(function), set())
            if owner is not None:  # nested: inherits unless seeded itself
                self.nested.setdefault(id(owner), set()).add(id(function))
        classes = index.class_regions()
        calls = index.numbered(ast.Call)
        owners = innermost(calls, functions)
        for (call, owner), (_, owner_class) in zip(owners, innermost(calls, classes)):
            self._on_call(call, owner, owner_class)  # type: ignore[arg-type]
        for block, owner in innermost(index.numbered(ast.With, ast.AsyncWith), functions):
            if owner is None:
                continue
            for item in block.items:  # type: ignore[attr-defined]
                expr = item.context_expr
                target = expr.func if isinstance(expr, ast.Call) else expr
                if self._symbol_in(target, self.spec.training_symbols):
                    self.seeds[Context.TRAINING_LOOP].add(id(owner))
                elif self._symbol_in(target, self.spec.distribution_symbols):
                    self.seeds[Context.DISTRIBUTION].add(id(owner))

    def _symbol_in(self, node: ast.AST, prefixes: tuple[str, ...]) -> bool:
        symbol = self.resolver.symbol(node) if isinstance(node, ast.expr) else None
        return bool(symbol and symbol.startswith(prefixes))

    def _on_call(self, call: ast.Call, owner: ast.AST | None, owner_class: str | None) -> None:
        name, is_method = _callee_name(call)
        if owner is not None and name is not None:
            if is_method and owner_class is not None:
                target = self.class_methods.get(owner_class, {}).get(name)
            else:
                target = self.module_functions.get(name)
            if target is not None:
                self.calls[id(owner)].add(id(target))
        symbol = self.resolver.symbol(call.func) or ""
        if owner is not None:
            spec = self.spec
            if symbol.endswith(spec.functional_input_suffixes):
                self.seeds[Context.MODEL].add(id(owner))
                self.own_model.add(id(owner))
            elif symbol.startswith(spec.data_symbol_prefixes):
                self.seeds[Context.DATA].add(id(owner))
            elif symbol.startswith(spec.serving_symbols) or symbol in spec.saved_model_saves:
                self.seeds[Context.SERVING].add(id(owner))
            elif symbol.startswith(spec.distribution_symbols):
                self.seeds[Context.DISTRIBUTION].add(id(owner))
            elif symbol.startswith(spec.training_call_prefixes):
                self.seeds[Context.TRAINING_LOOP].add(id(owner))
        # Functions handed to Keras (loss=, Lambda(f)) or to a dataset (.map(f)).
        for keyword in call.keywords:
            if keyword.arg in self.spec.model_function_keywords:
                self._seed_refs(keyword.value, Context.MODEL)
        if symbol.endswith(self.spec.model_function_callees) and call.args:
            self._seed_refs(call.args[0], Context.MODEL)
        method = call.func.attr if isinstance(call.func, ast.Attribute) else None
        if method in self.spec.data_methods and not symbol.startswith(
            self.spec.data_method_exempt_prefixes
        ):
            for arg in call.args[:1]:
                self._seed_refs(arg, Context.DATA)

    def _seed_refs(self, expr: ast.AST, context: Context, depth: int = 0) -> None:
        for ref in function_refs(expr):
            if isinstance(ref, ast.Lambda):
                self.nodes[id(ref)] = ref
                self.calls.setdefault(id(ref), set())
                self.seeds[context].add(id(ref))
            elif isinstance(ref, ast.Name) and ref.id in self.module_functions:
                self.seeds[context].add(id(self.module_functions[ref.id]))
            elif isinstance(ref, ast.Name) and depth < 3:
                # `loss = focal if cond else other; compile(loss=loss)`: follow the name.
                for value in self._assigned_values().get(ref.id, ()):
                    self._seed_refs(value, context, depth + 1)

    def _assigned_values(self) -> dict[str, list[ast.expr]]:
        """Values assigned to plain names anywhere in the module (built on first use)."""
        if self._assignments is None:
            self._assignments = {}
            for node in self.index.nodes(ast.Assign):
                if len(node.targets) == 1:  # type: ignore[attr-defined]
                    target = node.targets[0]
                    if isinstance(target, ast.Name):
                        self._assignments.setdefault(target.id, []).append(node.value)
        return self._assignments

    def _reachable(self, seeds: set[int], seeded: set[int]) -> set[int]:
        """The functions ``seeds`` call, and those defined in them that no seed
        decides (``seeded``: every seed of every context)."""
        seen: set[int] = set()
        stack = list(seeds)
        while stack:
            fid = stack.pop()
            if fid in seen:
                continue
            seen.add(fid)
            stack.extend(self.calls.get(fid, ()))
            stack.extend(f for f in self.nested.get(fid, ()) if f not in seeded)
        return seen


# The contexts positive evidence proves TensorFlow by design, in the order they win.
_TF_BY_DESIGN = (Context.TRAINING_LOOP, Context.SERVING, Context.DISTRIBUTION, Context.DATA)


def build_context_index(
    tree: ast.Module,
    resolver: Resolver,
    spec: ContextSpec,
    facts: ModuleFacts | None = None,
    index: TreeIndex | None = None,
) -> ContextIndex:
    """Classify every function and lambda of ``tree``; see the module docstring.
    ``facts``: what the project index decided about this module's classes and functions;
    ``index``: the module's :class:`TreeIndex` when the caller has it."""
    return _Indexer(tree, resolver, spec, facts, index or TreeIndex(tree)).run()
