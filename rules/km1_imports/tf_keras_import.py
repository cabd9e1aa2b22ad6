"""KM102: Import from `tensorflow.keras`; Keras 3 is imported as `keras`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ImportSite, ModuleInfo, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.tf_keras_aliases import ALIAS_MODULES
from kmigrate.rules.keras_api import keras3_path, removal_note
from kmigrate.rules.km1_imports._helpers import (
    LEFT_TO_OTHER_RULES,
    PORT_ADVICE,
    TF_KERAS,
    format_alias,
    keras_name,
    legacy_path,
    path_is_portable,
)
from kmigrate.rules.module_escapes import check_module_uses, patched_attributes


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


class TfKerasImport(Rule):
    id = "KM102"
    name = "tf-keras-import"
    summary = "Import from `tensorflow.keras`; Keras 3 is imported as `keras`."
    rationale = (
        "`from tensorflow import keras` and `from tensorflow.keras.X import Y` load Keras "
        "through TensorFlow, so the module cannot run on JAX or PyTorch. The same names "
        "come from the `keras` package on every backend."
    )
    fix_safety = (
        "Exact when every imported name exists in Keras 3 under one module. Imports that "
        "mix Keras and non-Keras TensorFlow names, or names Keras 3 lacks, are reported "
        "for a manual edit."
    )
    wants_imports = True
    examples = [
        Flagged(
            """
            from tensorflow import keras

            model = keras.Sequential()
            """,
            """
            import keras

            model = keras.Sequential()
            """,
        ),
        Flagged(
            """
            from tensorflow.keras import layers, backend as K
            from tensorflow.keras.layers import (
                Dense,  # the head
                Dropout,
            )
            """,
            """
            from keras import layers, backend as K
            from keras.layers import (
                Dense,  # the head
                Dropout,
            )
            """,
        ),
        Flagged(
            """
            from tensorflow.keras.layers.experimental.preprocessing import Rescaling
            import tensorflow.keras as tfk
            """,
            """
            from keras.layers import Rescaling
            import keras as tfk
            """,
        ),
        Flagged("from tensorflow import keras, nn\n"),
        Flagged(
            """
            from tensorflow import losses, optimizers as opt

            model.compile(opt.Adam(), losses.Huber())
            """,
            """
            from keras import losses, optimizers as opt

            model.compile(opt.Adam(), losses.Huber())
            """,
        ),
        Flagged(
            """
            from tensorflow import losses

            loss = losses.mean_squared_error(labels, predictions)  # TF1 or Keras: KM107
            """
        ),
        Flagged(
            """
            from tensorflow.keras import backend as K

            def scale(x):
                return K.mean(x)  # no Keras 3 `keras.backend.mean`: the import stays
            """
        ),
        Flagged(
            """
            import tensorflow.keras as tfkeras

            def swish(x, backend):
                return x * backend.sigmoid(x)  # no `keras.backend.sigmoid` in Keras 3

            def build(backend=tfkeras.backend):
                return swish(tfkeras.Input((4,)), backend)
            """
        ),
        Flagged(
            """
            import tensorflow.keras as tfkeras

            def build(layers=tfkeras.layers):
                return layers.Dense(4)
            """,
            """
            import keras as tfkeras

            def build(layers=tfkeras.layers):
                return layers.Dense(4)
            """,
        ),
        Clean("import keras\nfrom keras import layers\nimport tensorflow as tf\n"),
    ]

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
        touched = False
        for alias in node.names:
            legacy = legacy_path(alias.name, TF_KERAS)
            if legacy is None or alias.asname is None:
                # `import tensorflow.keras` binds `tensorflow`; its uses are KM101's.
                parts.append(format_alias(alias.name, alias.asname))
                continue
            target = keras3_path(legacy)
            if target is None:
                yield self._missing(site, legacy)
                return
            blocked = self._blocked(site, alias.asname, legacy)
            if blocked is not None:
                yield blocked
                return
            touched = True
            parts.append(format_alias(keras_name(target), alias.asname))
        if touched:
            yield self._fix(site, "import " + ", ".join(parts))

    def _from_import(self, site: ImportSite, node: ast.ImportFrom) -> Iterable[Report]:
        module = node.module or ""
        legacy_module = legacy_path(module, TF_KERAS)
        if module in ("tensorflow", "tensorflow.compat.v2"):
            keras_aliases = [a for a in node.names if a.name == "keras"]
            modules = [a for a in node.names if a.name in ALIAS_MODULES]
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
            blocked = self._blocked(site, alias.asname or "keras", "")
            if blocked is not None:
                yield blocked
                return
            yield self._fix(site, "import " + format_alias("keras", alias.asname))
            return
        if legacy_module is None or legacy_module.startswith(LEFT_TO_OTHER_RULES):
            return
        parents: set[str] = set()
        names: list[str] = []
        for alias in node.names:
            if alias.name == "*":
                yield Report(site, "star import from `tensorflow.keras`: import names from `keras`")
                return
            legacy = f"{legacy_module}.{alias.name}" if legacy_module else alias.name
            target = keras3_path(legacy)
            if target is None:
                yield self._missing(site, legacy)
                return
            blocked = self._blocked(site, alias.asname or alias.name, legacy)
            if blocked is not None:
                yield blocked
                return
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
        parent = parents.pop()
        yield self._fix(site, f"from {keras_name(parent)} import {', '.join(names)}")

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
            blocked = self._blocked(site, local, alias.name)
            if blocked is not None:
                yield blocked
                return
        names = ", ".join(format_alias(a.name, a.asname) for a in aliases)
        yield self._fix(site, f"from keras import {names}")

    def _blocked(self, site: ImportSite, local: str, base: str) -> Report | None:
        """Why the import must stay for now: uses of ``local`` with no Keras 3 spelling,
        or the module object passed where its uses cannot be followed."""
        broken = _unportable_uses(site.module, local, base)
        escape = check_module_uses(site.module, local, base)
        escape.missing -= set(broken)
        if escape:
            return Report(
                site,
                f"`{local}` was not changed to Keras 3's `{keras_name(base)}`: "
                f"{escape.sentence()}. {PORT_ADVICE}",
            )
        if not broken:
            return None
        shown = ", ".join(f"`{b}`" for b in broken[:4]) + (" ..." if len(broken) > 4 else "")

        def symbol(chain: str) -> str:
            qualified = ".".join(p for p in (TF_KERAS, base, chain.partition(".")[2]) if p)
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

    def _missing(self, site: ImportSite, legacy: str) -> Report:
        return Report(
            site,
            f"`tf.keras.{legacy}` does not exist in Keras 3: {removal_note(legacy)}",
            severity=Severity.ERROR,
        )
