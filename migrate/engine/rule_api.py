"""The rule plug-in interface: one class per rule, carrying its metadata and its own examples.

The engine owns this contract (it dispatches sites to the hooks below and reads the
:class:`Report` objects back); ``kmigrate.rules`` implements it, one subclass per rule,
and reaches it through the ``kmigrate.engine`` facade (``rules/base.py`` re-exports it).

A rule is looked up by the engine through what it declares it wants to see
(``call_symbols``, ``method_names``, ``reference_prefixes``, ``visit_types``,
``string_constants``, ``wants_imports``, ``wants_undecided_calls``) and answers with
:class:`Report` objects. A rule claims the calls it reports (:meth:`Rule.claims`); a
*fallback* rule (``Rule.fallback``) is shown only the calls no other rule claims. A
report with an :class:`~kmigrate.engine.model.EditPlan` is fixable; the engine never
asks a rule to build LibCST nodes, so ``scan`` and ``apply`` cannot disagree.

The examples are the rule's contract: ``tests/rules/test_rule_examples.py`` turns every
:class:`Example` of every registered rule into a test, and a rule counts as
auto-fixable exactly when one of its flagged examples has an expected rewrite.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

from kmigrate.engine.model import Context, EditPlan, Severity, Span

if TYPE_CHECKING:
    from kmigrate.engine.fact_provider import FactProvider
    from kmigrate.engine.module_info import ModuleInfo
    from kmigrate.engine.sites import CallSite, ImportSite, Node, ReferenceSite


@dataclass(frozen=True)
class Example:
    """A whole module of code. ``flagged`` examples must produce at least one
    finding of the rule; when ``after`` is given, ``apply`` must turn ``before``
    into exactly ``after`` (and a second ``apply`` must change nothing).
    Clean examples (``flagged=False``) must produce no finding of the rule.

    ``project``: the other files of a project the module is part of, (path, code)
    pairs, for rules about what one module sees of another; the module itself is then
    :data:`EXAMPLE_PATH` in that project, scanned as ``kmigrate scan`` scans a folder."""

    before: str
    after: str | None = None
    flagged: bool = True
    project: tuple[tuple[str, str], ...] = ()

    def project_files(self) -> dict[str, str]:
        """The whole project (the module included), path -> code, when there is one."""
        if not self.project:
            return {}
        files = {path: textwrap.dedent(code).lstrip("\n") for path, code in self.project}
        return {**files, EXAMPLE_PATH: self.code}

    @property
    def code(self) -> str:
        return textwrap.dedent(self.before).lstrip("\n")

    @property
    def expected(self) -> str | None:
        return None if self.after is None else textwrap.dedent(self.after).lstrip("\n")


EXAMPLE_PATH = "example.py"  # where an example's module lies in its project


def Flagged(  # noqa: N802 - reads as data
    before: str, after: str | None = None, project: dict[str, str] | None = None
) -> Example:
    """Code the rule must flag; ``after`` is the exact rewrite when the rule fixes it;
    ``project`` the other files (path -> code) when the rule is about them."""
    return Example(before, after, flagged=True, project=tuple((project or {}).items()))


def Clean(code: str, project: dict[str, str] | None = None) -> Example:  # noqa: N802
    """Code the rule must not flag (in ``project``, when given)."""
    return Example(code, None, flagged=False, project=tuple((project or {}).items()))


class Fallback(Enum):
    """Which other rules' claims a fallback rule leaves alone (see :meth:`Rule.claims`)."""

    # What no other rule reports where the site is: a message that holds wherever the
    # call is ("Keras 3 has no `K.cast`"), left only to a rule that reports it there.
    IN_CONTEXT = "in-context"
    # What no other rule knows, in any context: a message that would be false of a call
    # some rule reports elsewhere ("kmigrate has no Keras 3 form for it").
    ANY_CONTEXT = "any-context"


@dataclass(frozen=True)
class Claim:
    """Calls a rule reports itself, so that fallback rules leave them to it: those whose
    canonical symbol is one of ``symbols`` or starts with one of ``prefixes``, in
    ``contexts`` (None: every context)."""

    symbols: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    contexts: frozenset[Context] | None = None

    def covers(self, symbol: str) -> bool:
        """Whether the claim names ``symbol`` (in whichever of its contexts)."""
        return symbol in self.symbols or symbol.startswith(self.prefixes)


@dataclass
class Report:
    """What a rule says about one site. ``span``/``symbol`` default to the site's."""

    site: Node
    message: str
    fix: EditPlan | None = None
    severity: Severity | None = None
    symbol: str | None = None
    span: Span | None = None
    rule: Rule | None = None  # set by the engine
    # No fix now, but one once every finding on ``unblocked_by`` symbols is fixed (an
    # import kept for ``K.mean`` uses), provided a use of ``kept_by`` symbols is left
    # afterwards (otherwise the import goes as unused): then apply fixes it in a later round.
    unblocked_by: frozenset[str] = frozenset()
    kept_by: frozenset[str] = frozenset()
    # The fix such a waiting report gets once unblocked, when it rewrites an import: the
    # names that import will bind may be spelled by the other fixes of that round.
    later_fix: EditPlan | None = None


class Rule:
    """Base class of every rule. Subclasses set the metadata and override the
    ``check_*`` methods for the sites they declared."""

    id: ClassVar[str] = ""
    name: ClassVar[str] = ""  # kebab-case, e.g. "tf-keras-namespace"
    summary: ClassVar[str] = ""  # one line: what it finds
    rationale: ClassVar[str] = ""  # why it matters on Keras 3 multi-backend
    fix_safety: ClassVar[str] = ""  # when the fix is exact, when it is not offered
    severity: ClassVar[Severity] = Severity.WARNING
    # Contexts the rule reports in; None = every context.
    contexts: ClassVar[frozenset[Context] | None] = None

    # What the engine dispatches to the rule.
    call_symbols: ClassVar[frozenset[str]] = frozenset()  # canonical symbols, exact
    call_prefixes: ClassVar[tuple[str, ...]] = ()  # canonical symbol prefixes
    method_names: ClassVar[frozenset[str]] = frozenset()  # x.save(...) -> "save"
    reference_prefixes: ClassVar[tuple[str, ...]] = ()  # any resolved reference
    visit_types: ClassVar[tuple[type[ast.AST], ...]] = ()  # raw nodes, e.g. ast.With
    # String constants with exactly these values, to check_node: a dictionary lookup per
    # constant instead of a site for each of the module's thousands of constants.
    string_constants: ClassVar[frozenset[str]] = frozenset()
    wants_imports: ClassVar[bool] = False
    # Calls the project index could not decide (``ModuleFacts.undecided_calls``: a name
    # star-imported from one of several modules, one per backend), to check_call.
    wants_undecided_calls: ClassVar[bool] = False
    # A fallback reports what no other rule claims (:meth:`claims`): the engine shows it
    # only the calls and references whose symbol no other registered rule claims, in the
    # site's context or in any (:class:`Fallback`). A fallback claims nothing itself.
    fallback: ClassVar[Fallback | None] = None
    # The cross-file facts the rule reads (``site.module.fact(Provider)``): the engine
    # keeps each declared provider's values for every module (engine/fact_provider.py).
    facts: ClassVar[tuple[type[FactProvider], ...]] = ()

    examples: ClassVar[list[Example]] = []

    # -- hooks ---------------------------------------------------------------
    def check_call(self, site: CallSite) -> Iterable[Report]:
        return ()

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        return ()

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        return ()

    def check_node(self, site: Node) -> Iterable[Report]:
        return ()

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        """Called once per file right after that file's walk, in the same process and on
        the same rule instance, for rules that need the whole module (e.g. pairing a
        save with its load). State kept from the walk must be reset per module."""
        return ()

    # -- claims --------------------------------------------------------------
    @classmethod
    def claims(cls) -> tuple[Claim, ...]:
        """The calls this rule reports itself, which fallback rules then leave to it. By
        default every call it asks to see (``call_symbols``, ``call_prefixes``) in the
        contexts it reports in; a rule that reports only some of them, or calls it sees as
        references, says so here (tests/engine/test_claims.py holds every claim within what the
        rule asks to see)."""
        if cls.fallback is not None or not (cls.call_symbols or cls.call_prefixes):
            return ()
        return (Claim(frozenset(cls.call_symbols), tuple(cls.call_prefixes), cls.contexts),)

    # -- derived metadata ----------------------------------------------------
    @classmethod
    def fixable(cls) -> bool:
        """Derived from the examples, never declared twice."""
        return any(e.flagged and e.after is not None for e in cls.examples)

    @classmethod
    def family(cls) -> str:
        return cls.id[:3] + "xx"
