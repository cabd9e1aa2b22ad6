"""KM103: Standalone Keras 2 module path that Keras 3 moved or removed."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ImportSite, ReferenceSite, ReplaceNode
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.call_differences import KERAS_2, SAFETY_NOTE, call_difference
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
        "no longer has; imports of them fail at start-up."
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
            from keras.layers import Dense, Dropout
            from keras import Layer
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
        legacy_module = legacy_path(module, "keras")
        if not legacy_module or legacy_module.startswith(LEFT_TO_OTHER_RULES + _KERAS3_PRIVATE):
            return
        moved: dict[str, list[str]] = {}
        bound: list[tuple[str, str]] = []  # local name, Keras 3 path
        changed = False
        for alias in node.names:
            if alias.name == "*":
                return
            legacy = f"{legacy_module}.{alias.name}"
            target = keras3_path(legacy)
            if target is None:
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
