"""The engine's public face: everything a rule may use, and nothing else.

The engine reads Python with stdlib ``ast`` (source model, name resolution, contexts,
the project index), dispatches sites to rules, and executes their edit plans with one
LibCST editor. It has no command line, never imports the rules (they are passed in) and
spells no framework name: what it must know of TensorFlow and Keras (canonical
spellings, context seeds, import style) is the ``ContextSpec`` the caller hands over. Rules
(``kmigrate.rules``) import the engine only through this module, so what the engine
promises them is this list; ``tests/test_architecture.py`` holds both sides to it.
LibCST is not imported here: ``scan`` and ``check`` never load it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Where each public name lives. The names are loaded on first use (PEP 562), so a run
# that needs only the data model (a warm re-scan, ``check`` answered by the cache) does
# not pay for the resolver, the sites and the rule contract.
_HOMES = {
    "Occurrences": "fingerprint",
    **dict.fromkeys(("EntrySource", "FactProvider", "Resolve", "providers_of"), "fact_provider"),
    **dict.fromkeys(
        (
            "MISSING",
            "NOT_LITERAL",
            "RULE_CRASHED",
            "UNPARSEABLE",
            "UNUSED_SUPPRESSION",
            "ArgOut",
            "CallEdit",
            "ClassEdit",
            "Context",
            "EditPlan",
            "EnsureHelper",
            "EnsureImport",
            "Finding",
            "ReplaceNode",
            "Severity",
            "Span",
        ),
        "model",
    ),
    "ModuleInfo": "module_info",
    **dict.fromkeys(
        ("code_children", "code_walk", "dotted_parts", "scope_bindings", "statements"), "names"
    ),
    **dict.fromkeys(
        ("Claim", "Clean", "Example", "Fallback", "Flagged", "Report", "Rule"), "rule_api"
    ),
    **dict.fromkeys(("CallSite", "ImportSite", "Node", "ReferenceSite", "Scope"), "sites"),
    **dict.fromkeys(("ContextSpec", "ImportStyle"), "spec"),
    "module_binding_counts": "speller",
    "ALL": "suppress",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


if TYPE_CHECKING:  # for type checkers and editors: the same names, eagerly
    from kmigrate.engine.fact_provider import EntrySource, FactProvider, Resolve, providers_of
    from kmigrate.engine.fingerprint import Occurrences
    from kmigrate.engine.model import (
        MISSING,
        NOT_LITERAL,
        RULE_CRASHED,
        UNPARSEABLE,
        UNUSED_SUPPRESSION,
        ArgOut,
        CallEdit,
        ClassEdit,
        Context,
        EditPlan,
        EnsureHelper,
        EnsureImport,
        Finding,
        ReplaceNode,
        Severity,
        Span,
    )
    from kmigrate.engine.module_info import ModuleInfo
    from kmigrate.engine.names import (
        code_children,
        code_walk,
        dotted_parts,
        scope_bindings,
        statements,
    )
    from kmigrate.engine.rule_api import Claim, Clean, Example, Fallback, Flagged, Report, Rule
    from kmigrate.engine.sites import CallSite, ImportSite, Node, ReferenceSite, Scope
    from kmigrate.engine.spec import ContextSpec, ImportStyle
    from kmigrate.engine.speller import module_binding_counts
    from kmigrate.engine.suppress import ALL

__all__ = [
    "ALL",
    "MISSING",
    "NOT_LITERAL",
    "Occurrences",
    "Resolve",
    "RULE_CRASHED",
    "UNPARSEABLE",
    "UNUSED_SUPPRESSION",
    "ArgOut",
    "CallEdit",
    "CallSite",
    "Claim",
    "ClassEdit",
    "Clean",
    "Context",
    "ContextSpec",
    "EditPlan",
    "EnsureHelper",
    "EnsureImport",
    "EntrySource",
    "Example",
    "FactProvider",
    "Fallback",
    "Finding",
    "Flagged",
    "ImportStyle",
    "ImportSite",
    "ModuleInfo",
    "Node",
    "ReferenceSite",
    "ReplaceNode",
    "Report",
    "Rule",
    "Scope",
    "Severity",
    "Span",
    "code_children",
    "code_walk",
    "dotted_parts",
    "module_binding_counts",
    "providers_of",
    "scope_bindings",
    "statements",
]
