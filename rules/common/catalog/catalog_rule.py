"""What KM201 and KM202 share: the plan of each catalog call, made once per call."""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

from kmigrate.engine import CallSite, Context, ReferenceSite, Severity
from kmigrate.rules.base import Claim, Rule
from kmigrate.rules.common.backend_dispatch import in_replaced_chain
from kmigrate.rules.common.catalog.binding import ManualPortError
from kmigrate.rules.common.catalog.builders import plan_call
from kmigrate.rules.common.catalog.plan import Rewrite
from kmigrate.rules.common.catalog.tensor_array_scan import SCAN_RANGES
from kmigrate.rules.ops_catalog import OpEntry, by_symbol, lookup

CATALOG_SYMBOLS = frozenset(s for s in by_symbol() if lookup(s).builder != "variable")
VARIABLE_SYMBOLS = frozenset(s for s in by_symbol() if lookup(s).builder == "variable")

# KM201 and KM202 see the same call sites: the plan is made once per call, kept with
# the module (so nothing outlives the module's analysis). The callee nodes of the
# catalog calls are kept too: the walker visits a call before its callee, so a
# reference that is a callee is skipped.
_PLANS = "KM2-plans"
_CALLEES = "KM2-callees"


def plan_for(site: CallSite) -> tuple[OpEntry, Rewrite | ManualPortError] | None:
    site.module.memo(_CALLEES, set).add(id(site.node.func))  # type: ignore[attr-defined]
    plans: dict[int, Any] = site.module.memo(_PLANS, dict)
    key = id(site.node)
    if key not in plans:
        entry = lookup(site.symbol)
        if entry is None or _names_the_target(site, entry) or _superseded(site):
            plans[key] = None
        else:
            plans[key] = (entry, plan_call(entry, site))
    return plans[key]


def _superseded(site: CallSite) -> bool:
    """Whether another fix rewrites the call with the statement around it, so that it has
    no finding of its own (scan then says what apply does)."""
    if site.symbol == "K.backend":  # a test of the import chain KM208 replaces
        return in_replaced_chain(site.module, site.node)  # type: ignore[arg-type]
    return _loop_becomes_scan(site)


def _loop_becomes_scan(site: CallSite) -> bool:
    """Whether ``site`` is the ``tf.range(n)`` a ``for`` loop runs over that the fix of a
    ``tf.TensorArray`` it writes turns into ``keras.ops.scan`` (tensor_array_scan): that
    fix rewrites the loop's header with it, so the call has no finding of its own."""
    module = site.module
    loop = module.parent_of(site.node)
    function = site.scope.function_node
    if not (
        site.symbol in SCAN_RANGES
        and isinstance(loop, ast.For)
        and loop.iter is site.node
        and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    ):
        return False
    written = {
        statement.targets[0].id
        for statement in loop.body
        if isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    }
    for statement in function.body:
        if statement is loop:
            break
        value = getattr(statement, "value", None)
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id in written
            and isinstance(value, ast.Call)
            and module.resolve(value.func) == "tf.TensorArray"
        ):
            continue
        constructor = dataclasses.replace(
            site,
            node=value,
            span=module.span_of(value),
            symbol="tf.TensorArray",
            args=list(value.args),
            keywords={k.arg: k.value for k in value.keywords if k.arg is not None},
            has_star_args=any(isinstance(a, ast.Starred) for a in value.args)
            or any(k.arg is None for k in value.keywords),
        )
        planned = plan_for(constructor)
        if planned is not None and isinstance(planned[1], Rewrite):
            if planned[1].target == "keras.ops.scan":
                return True
    return False


# Keras 3 keeps these names in `keras.backend` as the very functions the catalog rewrites
# to (`keras.backend.floatx is keras.config.floatx`;
# tests/rules/test_keras3_backend_names_backends.py).
KERAS3_BACKEND_NAMES = {
    "keras.backend.floatx": "keras.config.floatx",
    "keras.backend.epsilon": "keras.config.epsilon",
    "keras.backend.image_data_format": "keras.config.image_data_format",
}


def _names_the_target(site: CallSite | ReferenceSite, entry: OpEntry) -> bool:
    """Whether the code already names the Keras 3 function the entry rewrites to:
    ``keras.backend.get_uid`` folds to ``K.get_uid`` like the tf.keras spelling does,
    but written through Keras itself it is the Keras 3 function (nothing to port); so
    is ``keras.backend.floatx``, Keras 3's other name of ``keras.config.floatx``."""
    node = site.node.func if isinstance(site, CallSite) else site.node  # type: ignore[attr-defined]
    if entry.target is None:
        return False
    resolved = site.module.resolver.resolve(node)
    return resolved == entry.target or KERAS3_BACKEND_NAMES.get(resolved or "") == entry.target


def passed_function(site: ReferenceSite) -> OpEntry | None:
    """The catalog entry of a TF function used as a value (``activation=tf.nn.relu``)."""
    if site.context is not Context.MODEL:
        return None
    entry = lookup(site.symbol)
    if entry is None or entry.builder == "variable" or _names_the_target(site, entry):
        return None
    if id(site.node) in site.module.memo(_CALLEES, set):
        return None  # the callee of a call: check_call reported the call
    parent = site.module.parent_of(site.node)
    if isinstance(parent, ast.Call) and parent.func is site.node:
        return None  # a call no rule selected here; not a function passed around
    return entry


_REFERENCE_PREFIXES = ("tf.", "K.")


# Code is ``other`` only where no module of the project uses Keras
# (``ModuleFacts.keras_project``): in a Keras project unproven code is model code.
OUTSIDE = (
    " (in a project that uses no Keras: left on TensorFlow; convert it if a model runs it "
    "on another backend)"
)


class CatalogRule(Rule):
    """What KM201 and KM202 share: both read the catalog's plan of every catalog call
    (and function reference) in model code; KM201 reports the rewrites, KM202 the rest."""

    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL, Context.UNDECIDED, Context.OTHER})
    call_symbols = CATALOG_SYMBOLS
    reference_prefixes = _REFERENCE_PREFIXES

    @classmethod
    def claims(cls) -> tuple[Claim, ...]:
        """Every catalog call in model code; outside it only TensorFlow's: a Keras 2
        backend function there fails on Keras 3 wherever it runs, which KM108 says."""
        tensorflow = frozenset(s for s in CATALOG_SYMBOLS if not s.startswith("K."))
        return (
            Claim(CATALOG_SYMBOLS, contexts=frozenset({Context.MODEL})),
            Claim(tensorflow, contexts=cls.contexts),
        )
