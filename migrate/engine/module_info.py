"""One parsed module as rules see it: text, ``ast`` tree, positions, name resolution.

Positions follow :class:`kmigrate.engine.model.Span` (character columns), converted from the
UTF-8 byte offsets ``ast`` reports, so spans match LibCST's for the editor.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from kmigrate.engine.fact_provider import FactProvider
from kmigrate.engine.model import NOT_LITERAL, Context, Span
from kmigrate.engine.names import Canonical, Resolver, dotted_parts
from kmigrate.engine.tree_index import TreeIndex

T = TypeVar("T")

# Python's own line breaks; str.splitlines also splits on \f, \x1c, \u2028 ...
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split the way the Python tokenizer splits them."""
    return _LINE_RE.findall(text)


class ModuleInfo:
    """A module's source and tree, plus the helpers rules need to read them."""

    def __init__(
        self,
        path: str,
        text: str,
        tree: ast.Module,
        package: str = "",
        *,
        canonical: Canonical,
        index: TreeIndex | None = None,
    ) -> None:
        self.path = path
        self.text = text
        self.tree = tree
        self.index = index or TreeIndex(tree)  # nodes by class, parents, scopes
        self.lines = split_lines(text)
        self.is_ascii = text.isascii()  # then byte columns are character columns
        self.package = package
        self.module_scope = self.index.scope_bindings(tree, package)
        self.canonical = canonical  # the spelling table of symbols (the rules' spec)
        # The analyzer replaces this with a scope-aware resolver during its walk.
        self.resolver = Resolver(self.module_scope, canonical)
        self._chains: dict[bool, dict[str, list[list[str]]]] = {}  # by `outermost`
        self._memo: dict[Hashable, Any] = {}
        # The analyzer's walk: the nodes from the module down to the node being checked.
        self.walk_path: list[ast.AST] = []
        # What the project index decided about this module (kmigrate.engine.project_index.
        # ModuleFacts), for rules that pair things across files; set by the analyzer.
        self.project_facts: Any = None
        # the context of code outside functions (``ContextIndex.default``): module-level
        # passes of the rules report in it
        self.default_context: Context = Context.OTHER
        # The file names whose users elsewhere a rule asked about (shared_path_users):
        # a result found without the project stays right if their answers do not change.
        self.shared_path_reads: set[str] = set()

    def bind(self, bindings: Iterable[tuple[str, str]]) -> None:
        """Module-level names the project index resolved to TF/Keras namespaces
        (``K`` re-exported by the project's backend module, ``K = tf.keras.backend``):
        they resolve like imports of their target."""
        scope = self.module_scope
        for local, qualified in bindings:
            scope.imports[local] = qualified
            scope.others.discard(local)
        self.resolver = Resolver(scope, self.canonical)

    # -- positions -----------------------------------------------------------
    def _char_column(self, line: int, byte_col: int) -> int:
        if line - 1 >= len(self.lines):
            return byte_col
        text = self.lines[line - 1]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span_of(self, node: ast.AST) -> Span:
        if self.is_ascii:
            line = getattr(node, "lineno", 1)
            end_line = getattr(node, "end_lineno", None) or line
            end_col = getattr(node, "end_col_offset", None) or 0
            return Span(line, getattr(node, "col_offset", 0), end_line, end_col)
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        col = self._char_column(line, getattr(node, "col_offset", 0))
        end_col = self._char_column(end_line, getattr(node, "end_col_offset", None) or 0)
        return Span(line, col, end_line, end_col)

    def segment(self, span: Span) -> str:
        """Source text covered by ``span``."""
        if span.line == span.end_line:
            return self.lines[span.line - 1][span.column : span.end_column]
        first = self.lines[span.line - 1][span.column :]
        middle = self.lines[span.line : span.end_line - 1]
        last = self.lines[span.end_line - 1][: span.end_column]
        return "".join([first, *middle, last])

    def node_text(self, node: ast.AST) -> str:
        return self.segment(self.span_of(node))

    def line_text(self, line: int) -> str:
        return self.lines[line - 1].rstrip("\r\n") if 0 < line <= len(self.lines) else ""

    # -- values and names ----------------------------------------------------
    @staticmethod
    def literal(node: ast.AST) -> Any:
        """The value of a literal expression (numbers, strings, tuples, lists,
        dicts, sets, None, booleans, negations) or ``NOT_LITERAL``."""
        kind = node.__class__
        if kind is ast.Constant:  # what literal_eval answers, without its closures
            return node.value  # type: ignore[attr-defined]
        if kind is ast.Name or kind is ast.Attribute:  # never literal
            return NOT_LITERAL
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return NOT_LITERAL

    def resolve(self, node: ast.expr) -> str | None:
        """Canonical symbol of ``node`` in the scope being walked, or None."""
        return self.resolver.symbol(node)

    def bound_names(self) -> set[str]:
        """Module-level names, whether bound by imports or otherwise."""
        return set(self.module_scope.imports) | self.module_scope.others

    def attribute_chains(self, root: str, outermost: bool = False) -> list[list[str]]:
        """Dotted parts of every attribute chain read in the module that starts at the
        name ``root`` (``K.mean`` -> ``["K", "mean"]``; ``a.b.c`` also gives ``a.b``
        unless ``outermost``: then only whole chains as written), each once. Built on
        first use from :meth:`nodes`."""
        chains = self._chains.get(outermost)
        if chains is None:
            chains = self._chains[outermost] = self._index_chains(outermost)
        return chains.get(root, [])

    def _index_chains(self, outermost: bool) -> dict[str, list[list[str]]]:
        seen: dict[tuple[str, ...], None] = {}
        attributes = self.nodes(ast.Attribute)
        # links inside a longer chain: the value of another attribute
        inner = (
            {id(a.value) for a in attributes if a.value.__class__ is ast.Attribute}
            if outermost
            else ()
        )  # type: ignore[attr-defined]
        for node in attributes:
            if id(node) in inner:
                continue
            parts = dotted_parts(node)  # type: ignore[arg-type]
            if not parts:
                continue
            stored = node.ctx.__class__ is ast.Store  # type: ignore[attr-defined]
            longest = len(parts) - 1 if stored else len(parts)
            ends = [longest] if outermost else range(longest, 1, -1)
            for end in ends:
                if end > 1:
                    seen[tuple(parts[:end])] = None
        chains: dict[str, list[list[str]]] = {}
        for chain in seen:
            chains.setdefault(chain[0], []).append(list(chain))
        return chains

    def shared_path_users(self, name: str) -> str:
        """The other modules of the project that use the file name ``name`` ("" when none),
        recorded so that the runner knows which answers this module's result depends on."""
        self.shared_path_reads.add(name)
        facts = self.project_facts
        return dict(facts.shared_paths).get(name, "") if facts is not None else ""

    def importers_of(self, name: str) -> str:
        """The other modules of the project that import ``name`` from this one, as shown
        ("" when none, or when ``name`` is not bound here by an import of a TF/Keras
        namespace: ``ModuleFacts.imported_by``)."""
        facts = self.project_facts
        return dict(facts.imported_by).get(name, "") if facts is not None else ""

    def project_model_classes(self) -> tuple[str, ...]:
        """The module's top-level classes the project's resolution found to be Keras
        layers/models/losses/metrics: through base classes in other modules, and on the
        third-party bases the config names (``model-bases``)."""
        facts = self.project_facts
        return facts.model_classes if facts is not None else ()

    def fact(self, provider: type[FactProvider]) -> Any:
        """What the fact provider ``provider`` (declared in the rule's ``facts``) tells
        this module: its ``default`` when the module has no project facts, or the
        provider is not one the registered rules declare."""
        facts = self.project_facts
        if facts is None:
            return provider.default
        return dict(facts.provided).get(provider.name, provider.default)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, once per module and ``key``: for facts several sites of one
        class or function ask about (``key`` should hold the rule and the node)."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    def release(self) -> None:
        """Forget what the rules memoised, once they have run: a memoised value may
        refer back to this module (a save call's path use holds its site, the site the
        module), a reference cycle that would keep the whole tree alive until the
        garbage collector runs, which workers pause while they analyse."""
        self._memo.clear()

    def parent_of(self, node: ast.AST) -> ast.AST | None:
        """The node ``node`` hangs from (``ast`` has no parent links).

        Rules mostly ask about the node they are checking or its ancestors, which are
        on the analyzer's path; anything else is looked up in a map of the module."""
        path = self.walk_path
        for depth in range(len(path) - 1, 0, -1):
            if path[depth] is node:
                return path[depth - 1]
        return self.index.parent(node)

    def nodes_in(self, node: ast.AST, *kinds: type) -> list[ast.AST]:
        """Nodes of the given classes in ``node``'s subtree (``node`` included), in
        walk order: a bisection of the module's index, not a walk of the subtree."""
        return self.index.below_any(node, kinds)

    def nodes(self, *kinds: type) -> list[ast.AST]:
        """Every node of the given classes in the module (``Load()``/``Add()`` leaves
        excepted), in :func:`~kmigrate.engine.names.code_walk` order, from the module's
        :class:`~kmigrate.engine.tree_index.TreeIndex`. Do not change the list."""
        return self.index.nodes(*kinds)
