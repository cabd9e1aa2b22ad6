"""KM103: Standalone Keras 2 module path that Keras 3 moved or removed."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ImportSite, ReferenceSite, ReplaceNode, Severity, Span
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.call_differences import KERAS_2, SAFETY_NOTE, call_difference
from kmigrate.rules.common.import_fallbacks import Fallback, fallback_of, keras2_module
from kmigrate.rules.common.keras_api import keras3_path, keras3_reference, removal_note
from kmigrate.rules.common.keras_paths import (
    LEFT_TO_OTHER_RULES,
    format_alias,
    keras_name,
    legacy_path,
)
from kmigrate.rules.common.module_escapes import differing_uses

# `keras.src` is Keras 3's own implementation package: code importing from it is already
# Keras 3 code (often behind a version check), not a Keras 2 path.
_KERAS3_PRIVATE = ("src.", "src")


class Keras2ModulePath(Rule):
    id = "KM103"
    name = "keras2-module-path"
    summary = "Standalone Keras 2 module path that Keras 3 moved or removed."
    rationale = (
        "Keras 2 exposed implementation modules (`keras.layers.core`, `keras.engine`, "
        "`keras.utils.np_utils`, `keras.layers.experimental.preprocessing`) that Keras 3 "
        "no longer has; imports of them fail at start-up. So does a fallback between two "
        "of them (`try: from keras.src.engine.node import Node` / `except ImportError: "
        "from keras.engine.node import Node`): both branches move to the Keras 3 home of "
        "the names, or the `try` is an error when there is none."
    )
    fix_safety = (
        "Exact when the name exists in Keras 3's public API at its new place; otherwise "
        "reported with what replaces it. " + SAFETY_NOTE
    )
    wants_imports = True
    reference_prefixes = ("keras.",)
    examples = [
        Flagged(
            """
            from keras.layers.core import Dense, Dropout
            from keras.engine.base_layer import Layer
            from keras.utils.np_utils import to_categorical
            """,
            """
            from keras import Layer
            from keras.layers import Dense, Dropout
            from keras.utils import to_categorical
            """,
        ),
        Flagged(
            """
            import keras

            norm = keras.layers.experimental.preprocessing.Normalization()
            """,
            """
            import keras

            norm = keras.layers.Normalization()
            """,
        ),
        Flagged("from keras.wrappers.scikit_learn import KerasClassifier\n"),
        Flagged(
            """
            from keras.layers import activations

            act = activations.get("relu")
            config = activations.serialize(act)
            """,
            """
            from keras import activations

            act = activations.get("relu")
            config = activations.serialize(act)
            """,
        ),
        Flagged(
            """
            try:
                from keras.src.engine.input_spec import InputSpec
            except ImportError:
                from keras.engine.input_spec import InputSpec
            """,
            """
            try:
                from keras import InputSpec
            except ImportError:
                from keras import InputSpec
            """,
        ),
        Flagged(
            """
            try:
                from keras.src.engine.node import Node
            except ImportError:
                from keras.engine.node import Node
            """
        ),
        Clean("import keras\nfrom keras.layers import Dense\nx = keras.ops.mean\n"),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        legacy = site.symbol[len("keras.") :]
        if legacy.startswith(LEFT_TO_OTHER_RULES + _KERAS3_PRIVATE):
            return
        target = keras3_reference(legacy)
        if target == legacy:
            return
        if target is None:
            yield Report(site, f"`{site.symbol}` is not in Keras 3: {removal_note(legacy)}")
            return
        new = keras_name(target)
        difference = call_difference(site.module, site.node, target, KERAS_2)
        if difference:
            yield Report(site, f"`{site.symbol}` moved to `{new}` in Keras 3, but {difference}")
            return
        yield Report(
            site,
            f"`{site.symbol}` moved to `{new}` in Keras 3",
            fix=EditPlan((ReplaceNode(site.span, f"{{name:{new}}}"),), f"use {new}"),
        )

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        node = site.node
        if site.level or not isinstance(node, ast.ImportFrom):
            return
        module = node.module or ""
        fallback = fallback_of(site)
        if fallback is not None:
            yield from self._check_fallback(site, fallback)
            return
        legacy_module = legacy_path(module, "keras")
        if not legacy_module or legacy_module.startswith(LEFT_TO_OTHER_RULES + _KERAS3_PRIVATE):
            return
        yield from self._check_moved(site, legacy_module)

    def _check_fallback(self, site: ImportSite, fallback: Fallback) -> Iterable[Report]:
        """Both branches of a fallback between Keras 2 internals move to the Keras 3
        home of their names; without one, the ``try`` line is an error (once, from the
        first branch): the module cannot import under Keras 3."""
        first, second = fallback.branches()
        node = site.node
        gone = [
            f"keras.{legacy}"
            for branch in (fallback.first, fallback.second)
            for alias in branch.names
            for legacy in (f"{keras2_module(branch.module or '')}.{alias.name}",)
            if keras3_path(legacy) is None
        ]
        if not gone:
            yield from self._check_moved(site, keras2_module(node.module) or "")  # type: ignore[attr-defined]
            return
        if node is not fallback.first:
            return
        legacy = gone[0][len("keras.") :]
        try_node = fallback.statement
        col = try_node.col_offset
        yield Report(
            site,
            f"both branches of this import fallback are Keras 2 internals that Keras 3 "
            f"does not have: `from {first} import ...` (Keras 2.13+) and `from {second} "
            f"import ...` (older Keras 2); neither imports under Keras 3, so the module "
            f"fails at start-up. `{gone[0]}`: {removal_note(legacy)}",
            severity=Severity.ERROR,
            span=Span(try_node.lineno, col, try_node.lineno, col + len("try")),
        )

    def _check_moved(self, site: ImportSite, legacy_module: str) -> Iterable[Report]:
        node = site.node
        moved: dict[str, list[str]] = {}
        bound: list[tuple[str, str]] = []  # local name, Keras 3 path
        changed = False
        for alias in node.names:
            if alias.name == "*":
                return
            legacy = f"{legacy_module}.{alias.name}"
            target = keras3_path(legacy)
            if target is None:
                if _every_use_moves(site, alias.asname or alias.name):
                    # the uses' own fixes (check_reference) move each of them, and the
                    # import, then unused, goes: apply leaves nothing of it to port
                    return
                yield Report(site, f"`keras.{legacy}` is not in Keras 3: {removal_note(legacy)}")
                return
            changed |= target != legacy
            bound.append((alias.asname or alias.name, target))
            parent, _, leaf = target.rpartition(".")
            alias_text = format_alias(leaf, alias.asname if alias.asname != leaf else None)
            moved.setdefault(parent, []).append(alias_text)
        if not changed:
            return
        if len(moved) != 1:
            yield Report(site, "the imported names moved to different Keras 3 modules")
            return
        ((parent, names),) = moved.items()
        text = f"from {keras_name(parent)} import {', '.join(names)}"
        for local, target in bound:
            differs = differing_uses(site.module, local, target, KERAS_2)
            if differs:
                yield Report(
                    site, f"Keras 2 module path (`{text}` in Keras 3): {differs.sentence()}"
                )
                return
        yield Report(
            site,
            f"Keras 2 module path: `{text}` in Keras 3",
            fix=EditPlan((ReplaceNode(site.span, text, kind="stmt"),), text),
        )


def _every_use_moves(site: ImportSite, local: str) -> bool:
    """Whether the name ``local`` is read, and only as the start of an attribute chain
    that resolves to a Keras 2 path with a Keras 3 home and no call difference
    (``np_utils.to_categorical``): each is a reference check_reference rewrites."""
    module = site.module
    reads = [n for n in module.nodes(ast.Name) if getattr(n, "id", None) == local]
    if not reads or any(not isinstance(n.ctx, ast.Load) for n in reads):  # type: ignore[attr-defined]
        return False
    if any(getattr(n, "arg", None) == local for n in module.nodes(ast.arg)):
        return False  # a parameter of that name: a read may not be the import
    for read in reads:
        chain: ast.AST = read
        while isinstance(module.parent_of(chain), ast.Attribute):
            chain = module.parent_of(chain)  # type: ignore[assignment]
        symbol = module.resolve(chain) if chain is not read else None  # type: ignore[arg-type]
        if not symbol or not symbol.startswith("keras."):
            return False
        legacy = symbol[len("keras.") :]
        target = keras3_reference(legacy)
        if target is None or target == legacy:
            return False
        if call_difference(module, chain, target, KERAS_2):
            return False
    return True
