"""KM106: Import of `keras_core`, the 2023 preview of Keras 3, now released as `keras`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ImportSite, ReplaceNode
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.call_differences import KERAS_CORE
from kmigrate.rules.common.keras_paths import (
    format_alias,
    keras_name,
    legacy_path,
    path_is_portable,
)
from kmigrate.rules.common.module_escapes import differing_uses

_KERAS_CORE = "keras_core"


class KerasCoreImport(Rule):
    id = "KM106"
    name = "keras-core-import"
    summary = "Import of `keras_core`, the 2023 preview of Keras 3, now released as `keras`."
    rationale = (
        "`keras_core` was Keras 3 before its release; it is no longer maintained and its "
        "API lives on unchanged in `keras` >= 3.0. Code importing it already runs on every "
        "backend: only the package name changes."
    )
    fix_safety = (
        "Exact when every imported name exists in Keras 3 (the preview's public API did). "
        "`import keras_core` without an alias becomes `import keras as keras_core`, so "
        "every use keeps working; rename it at leisure. Not when a use calls "
        "`sparse_categorical_crossentropy` with a fourth positional argument, or passes it "
        "on: that is `axis` before keras_core 0.1.6 and `ignore_class` from then on, as in "
        "Keras 3; the finding asks for `axis=` by keyword."
    )
    wants_imports = True
    examples = [
        Flagged(
            """
            import keras_core as keras
            from keras_core import layers, ops
            from keras_core.random import SeedGenerator
            """,
            """
            import keras
            from keras import layers, ops
            from keras.random import SeedGenerator
            """,
        ),
        Flagged("import keras_core\n", "import keras as keras_core\n"),
        Flagged("import keras_core.layers\n"),
        Flagged(  # the fourth parameter was `axis` before keras_core 0.1.6
            """
            import keras_core as keras

            loss = keras.losses.sparse_categorical_crossentropy(labels, probs, False, 1)
            """
        ),
        Clean("import keras\nfrom keras import layers\n"),
    ]

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        node = site.node
        if site.level:
            return
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            sub = legacy_path(module, _KERAS_CORE)
            if sub is None:
                return
            missing = [
                a.name
                for a in node.names
                if a.name == "*" or not path_is_portable(f"{sub}.{a.name}" if sub else a.name)
            ]
            if missing:
                yield Report(site, self._manual(f"`{missing[0]}` is not in Keras 3's API"))
                return
            names = ", ".join(format_alias(a.name, a.asname) for a in node.names)
            bound = [(a.asname or a.name, f"{sub}.{a.name}" if sub else a.name) for a in node.names]
            yield self._fix(site, f"from {keras_name(sub)} import {names}", bound)
            return
        if not any(legacy_path(a.name, _KERAS_CORE) is not None for a in node.names):
            return
        parts = []
        bound = []
        for alias in node.names:
            sub = legacy_path(alias.name, _KERAS_CORE)
            if sub is None:
                parts.append(format_alias(alias.name, alias.asname))
                continue
            if alias.asname:
                asname = None if alias.asname == "keras" and not sub else alias.asname
                parts.append(format_alias(keras_name(sub), asname))
            elif not sub:
                parts.append("keras as keras_core")
            else:  # `import keras_core.layers` binds `keras_core`: no import spells that
                yield Report(site, self._manual(f"`import {alias.name}` binds `keras_core`"))
                return
            bound.append((alias.asname or _KERAS_CORE, sub))
        yield self._fix(site, "import " + ", ".join(parts), bound)

    @staticmethod
    def _manual(why: str) -> str:
        return f"`keras_core` is now `keras`: {why}; import it from `keras` by hand"

    def _fix(self, site: ImportSite, text: str, bound: list[tuple[str, str]]) -> Report:
        """The fix, unless a use of a name the import binds (``bound``: local name and
        its path under keras) means something else in Keras 3 than in the preview."""
        for local, base in bound:
            differs = differing_uses(site.module, local, base, KERAS_CORE)
            if differs:
                return Report(site, self._manual(differs.sentence()))
        return Report(
            site,
            f"`keras_core` is released as `keras`: `{text}`",
            fix=EditPlan((ReplaceNode(site.span, text, kind="stmt"),), text),
        )
