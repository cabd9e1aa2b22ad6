"""Rewriting an import of Keras 2 into an import of Keras 3, for every root Keras 2 is
imported from: ``tensorflow.keras`` (KM102), TensorFlow's private copy
``tensorflow.python.keras`` (KM102) and the ``tf_keras`` package (KM104). The import
changes when every use of the name it binds exists in Keras 3 at the same place; until
then it is kept, and waits for the uses other rules migrate."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, replace

from kmigrate.engine import (
    EditPlan,
    ImportSite,
    ModuleInfo,
    ReplaceNode,
    Severity,
    module_binding_counts,
)
from kmigrate.rules.base import Report, Rule
from kmigrate.rules.common.call_differences import KERAS_2
from kmigrate.rules.common.keras_api import keras3_path, keras3_reference, removal_note
from kmigrate.rules.common.keras_paths import (
    LEFT_TO_OTHER_RULES,
    PORT_ADVICE,
    format_alias,
    keras_name,
    legacy_path,
    path_is_portable,
)
from kmigrate.rules.common.module_escapes import check_module_uses, patched_attributes
from kmigrate.rules.common.tf_keras_aliases import ALIAS_MODULES

# Appended to the fix safety of the rules built on this one.
REEXPORT_NOTE = (
    " A name other modules of the project import from this module (by name, by a star "
    "import, or as an attribute of the module) keeps its import, reported with those "
    "modules named: changing it would rebind the name there too, where its uses are not "
    "checked against Keras 3."
)


@dataclass(frozen=True)
class KerasRoot:
    """A module Keras 2 is imported from."""

    path: str  # ``tensorflow.keras``
    shown: str  # how messages name it: ``tf.keras``
    parents: tuple[str, ...] = ()  # ``from <parent> import keras`` binds it too
    # KM101 renames the moved names used through it (`layers.experimental.preprocessing`)
    renamed_by_km101: bool = False


TENSORFLOW_KERAS = KerasRoot(
    "tensorflow.keras", "tf.keras", ("tensorflow", "tensorflow.compat.v2"), True
)
TENSORFLOW_PYTHON_KERAS = KerasRoot(
    "tensorflow.python.keras", "tensorflow.python.keras", ("tensorflow.python",)
)
TF_KERAS_PACKAGE = KerasRoot("tf_keras", "tf_keras")


def _unportable_uses(module: ModuleInfo, local: str, base: str) -> list[str]:
    """Uses of the import bound to ``local`` (``base`` is its path under keras) that
    would break if the name came from Keras 3 instead: ``K.mean`` through
    ``backend``. Those must be migrated (KM2xx) before the import can change."""
    broken: set[str] = set()
    for parts in module.attribute_chains(local):
        path = ".".join(p for p in (base, *parts[1:]) if p)
        if not path_is_portable(path):
            broken.add(".".join(parts))
    return sorted(broken)


def _moved_uses(module: ModuleInfo, local: str, base: str) -> list[str]:
    """Uses of ``local`` whose name Keras 3 has at another place
    (``layers.experimental.preprocessing.Rescaling``): the import alone cannot move them."""
    moved: set[str] = set()
    for parts in module.attribute_chains(local, outermost=True):
        path = ".".join(p for p in (base, *parts[1:]) if p)
        target = keras3_reference(path)
        if target is not None and target != path:
            moved.add(".".join(parts))
    return sorted(moved)


class KerasImportRewrite(Rule):
    """The import rewrite; subclasses say which roots they own (``roots``)."""

    roots: tuple[KerasRoot, ...] = ()

    def _root_of(self, qualified: str) -> tuple[KerasRoot, str] | None:
        for root in self.roots:
            legacy = legacy_path(qualified, root.path)
            if legacy is not None:
                return root, legacy
        return None

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        if site.level:
            return
        node = site.node
        if isinstance(node, ast.ImportFrom):
            yield from self._from_import(site, node)
        else:
            yield from self._plain_import(site, node)

    def _plain_import(self, site: ImportSite, node: ast.Import) -> Iterable[Report]:
        parts: list[str] = []
        waiting: list[Report] = []
        touched = False
        for alias in node.names:
            found = self._root_of(alias.name)
            if found is None:
                parts.append(format_alias(alias.name, alias.asname))
                continue
            root, legacy = found
            if alias.asname is None:
                if "." in root.path:  # `import tensorflow.keras` binds `tensorflow`: KM101's
                    parts.append(alias.name)
                    continue
                yield Report(
                    site,
                    f"`import {alias.name}` binds the name `{root.path}`: import Keras 3 as "
                    f"`import keras` and rename the uses of `{root.path}` to `keras` by hand",
                )
                return
            target = keras3_path(legacy)
            if target is None:
                yield self._missing(site, root, legacy)
                return
            blocked = self._blocked(site, root, alias.asname, legacy)
            if blocked is not None and not blocked.unblocked_by:
                yield blocked
                return
            waiting += [blocked] if blocked is not None else []
            touched = True
            new = keras_name(target)
            parts.append(format_alias(new, alias.asname if alias.asname != new else None))
        if touched:
            yield self._fix_or_wait(site, "import " + ", ".join(parts), waiting)

    def _from_import(self, site: ImportSite, node: ast.ImportFrom) -> Iterable[Report]:
        module = node.module or ""
        parent_of = {parent: root for root in self.roots for parent in root.parents}
        if module in parent_of:
            yield from self._keras_from_parent(site, node, parent_of[module])
            return
        found = self._root_of(module)
        if found is None or found[1].startswith(LEFT_TO_OTHER_RULES):
            return
        root, legacy_module = found
        parents: set[str] = set()
        names: list[str] = []
        waiting: list[Report] = []
        for alias in node.names:
            if alias.name == "*":
                yield Report(site, f"star import from `{root.path}`: import the names from `keras`")
                return
            legacy = f"{legacy_module}.{alias.name}" if legacy_module else alias.name
            target = keras3_path(legacy)
            if target is None:
                yield self._missing(site, root, legacy)
                return
            blocked = self._blocked(site, root, alias.asname or alias.name, legacy)
            if blocked is not None and not blocked.unblocked_by:
                yield blocked
                return
            waiting += [blocked] if blocked is not None else []
            parent, _, leaf = target.rpartition(".")
            parents.add(parent)
            names.append(format_alias(leaf, alias.asname if alias.asname != leaf else None))
        if len(parents) != 1:
            yield Report(
                site,
                "the imported names live in different Keras 3 modules: "
                "import each from its `keras` module",
            )
            return
        text = f"from {keras_name(parents.pop())} import {', '.join(names)}"
        yield self._fix_or_wait(site, text, waiting)

    def _keras_from_parent(
        self, site: ImportSite, node: ast.ImportFrom, root: KerasRoot
    ) -> Iterable[Report]:
        """``from tensorflow import keras`` (and ``losses``...), ``from tensorflow.python
        import keras``."""
        module = node.module or ""
        keras_aliases = [a for a in node.names if a.name == "keras"]
        modules = [a for a in node.names if a.name in ALIAS_MODULES and root is TENSORFLOW_KERAS]
        if modules and len(modules) == len(node.names):
            yield from self._alias_modules(site, module, modules)
            return
        if not keras_aliases and not modules:
            return
        if len(keras_aliases) != len(node.names):
            yield Report(
                site,
                "this import mixes `keras` with other TensorFlow names: split it and "
                "import Keras 3 as `import keras`"
                + (" (and `from keras import losses`...)" if modules else ""),
            )
            return
        alias = keras_aliases[0]
        blocked = self._blocked(site, root, alias.asname or "keras", "")
        if blocked is not None and not blocked.unblocked_by:
            yield blocked
            return
        text = "import " + format_alias("keras", alias.asname)
        yield self._fix_or_wait(site, text, [blocked] if blocked is not None else [])

    def _fix_or_wait(self, site: ImportSite, text: str, waiting: list[Report]) -> Report:
        """The fix, or the report that waits for the uses blocking it: with the fix it
        will get once they are migrated, when a single name waits (the names that import
        binds may then be spelled by that round's other fixes)."""
        if not waiting:
            return self._fix(site, text)
        if len(waiting) > 1:
            return waiting[0]
        return replace(waiting[0], later_fix=self._fix(site, text).fix)

    def _alias_modules(
        self, site: ImportSite, module: str, aliases: list[ast.alias]
    ) -> Iterable[Report]:
        """``from tensorflow import losses``: TensorFlow 2's alias of ``tf.keras.losses``,
        unless the module also uses a name TensorFlow 1's ``tf.losses`` had (KM107)."""
        for alias in aliases:
            local = alias.asname or alias.name
            unsure = sorted(
                ".".join(parts)
                for parts in site.module.attribute_chains(local)
                if not site.module.canonical(".".join((module, alias.name, *parts[1:]))).startswith(
                    "tf.keras."
                )
            )
            if unsure:
                shown = ", ".join(f"`{u}`" for u in unsure[:4])
                yield Report(
                    site,
                    f"`{local}` was not changed to Keras 3's `keras.{alias.name}`: {shown} "
                    "may be TensorFlow 1's functions (KM107); port those first",
                )
                return
            blocked = self._blocked(site, TENSORFLOW_KERAS, local, alias.name)
            if blocked is not None:
                yield blocked
                return
        names = ", ".join(format_alias(a.name, a.asname) for a in aliases)
        yield self._fix(site, f"from keras import {names}")

    def _blocked(self, site: ImportSite, root: KerasRoot, local: str, base: str) -> Report | None:
        """Why the import must stay for now: uses of ``local`` with no Keras 3 spelling,
        or the module object passed where its uses cannot be followed, or (where KM101
        does not rename them) names Keras 3 has at another place."""
        module = site.module
        counts = module.memo(("binding-counts",), lambda: module_binding_counts(module.tree))
        at_module_level = site.scope.function_node is None and site.scope.class_node is None
        if (
            not root.renamed_by_km101
            and at_module_level
            and (counts[local] > 1 or not any(stmt is site.node for stmt in module.tree.body))
        ):
            # Once it is rewritten, the other fixes may spell names through it (`keras.X`):
            # only where the name means this import wherever the module reads it.
            return Report(
                site,
                f"`{local}` is also bound by other statements of this module, or only under "
                "a condition (a version switch?): import it from Keras 3 in their place by hand",
            )
        importers = module.importers_of(local) if at_module_level else ""
        if importers:
            # The swap rebinds the name there too, where its uses are not checked.
            return Report(
                site,
                f"`{local}` is imported from here by {importers}; its uses there are not "
                "checked against Keras 3: change the imports together by hand",
            )
        broken = _unportable_uses(site.module, local, base)
        escape = check_module_uses(site.module, local, base, legacy=KERAS_2)
        escape.missing -= set(broken)
        if escape:
            return Report(
                site,
                f"`{local}` was not changed to Keras 3's `{keras_name(base)}`: "
                f"{escape.sentence(PORT_ADVICE)}",
            )
        moved = [] if root.renamed_by_km101 else _moved_uses(site.module, local, base)
        if moved:
            shown = ", ".join(f"`{m}`" for m in moved[:4])
            return Report(
                site,
                f"`{local}` was not changed to Keras 3's `{keras_name(base)}`: {shown} "
                f"{'is' if len(moved) == 1 else 'are'} at another place in Keras 3; change "
                "the import and those uses by hand",
            )
        if not broken:
            return None
        shown = ", ".join(f"`{b}`" for b in broken[:4]) + (" ..." if len(broken) > 4 else "")

        def symbol(chain: str) -> str:
            qualified = ".".join(p for p in (root.path, base, chain.partition(".")[2]) if p)
            return site.module.canonical(qualified)

        # What the import waits for: the whole chains holding a broken link (KM101
        # rewrites `layers.experimental.preprocessing.Rescaling` as one reference).
        waits_for = {
            ".".join(parts)
            for parts in site.module.attribute_chains(local, outermost=True)
            if any(".".join(parts[:end]) in broken for end in range(2, len(parts) + 1))
        }
        uses = {symbol(".".join(parts)) for parts in site.module.attribute_chains(local)}
        if patched_attributes(site.module, local):  # `K.flatten = flatten` stays
            uses.add(f"{local}.<assigned>")
        return Report(
            site,
            f"keep this import until {shown} are migrated (they do not exist in Keras 3; "
            "see KM2xx findings); `kmigrate apply` changes it once they are gone",
            severity=Severity.INFO,  # a consequence of other findings, not work of its own
            unblocked_by=frozenset(map(symbol, waits_for)),
            kept_by=frozenset(uses),
        )

    def _fix(self, site: ImportSite, text: str) -> Report:
        return Report(
            site,
            f"import Keras 3 directly: `{text}`",
            fix=EditPlan((ReplaceNode(site.span, text, kind="stmt"),), text),
        )

    def _missing(self, site: ImportSite, root: KerasRoot, legacy: str) -> Report:
        return Report(
            site,
            f"`{root.shown}.{legacy}` does not exist in Keras 3: {removal_note(legacy)}",
            severity=Severity.ERROR,
        )
