"""KM1xx: imports and namespaces. ``tf.keras`` becomes ``keras``; Keras 2 module paths
that moved or vanished in Keras 3 are mapped or reported.

``K.*`` backend *functions* are not handled here: the ops catalog (KM2xx) owns them;
KM102 only moves the ``backend`` namespace import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import (
    EditPlan,
    ImportSite,
    ModuleInfo,
    ReferenceSite,
    ReplaceNode,
    Severity,
    canonical,
)
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.keras_api import keras3_path, keras3_reference, removal_note
from kmigrate.rules.module_escapes import check_module_uses, escaping_reference

_TF_KERAS = "tensorflow.keras"
# Left to KM5xx, which knows the argument changes of the legacy optimizers.
_LEFT_TO_OTHER_RULES = ("optimizers.legacy",)
# `keras.src` is Keras 3's own implementation package: code importing from it is already
# Keras 3 code (often behind a version check), not a Keras 2 path.
_KERAS3_PRIVATE = ("src.", "src")


def _legacy_path(qualified: str, root: str) -> str | None:
    """``tensorflow.keras.layers.Dense`` -> ``layers.Dense`` (relative to the keras root)."""
    if qualified == root:
        return ""
    if qualified.startswith(root + "."):
        return qualified[len(root) + 1 :]
    return None


def _keras_name(path: str) -> str:
    return f"keras.{path}" if path else "keras"


def _format_alias(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname else name


def _path_is_portable(path: str) -> bool:
    """Whether ``keras.<path>`` exists in Keras 3 (or is an attribute of a public class)."""
    return keras3_reference(path) is not None


def _unportable_uses(module: ModuleInfo, local: str, base: str) -> list[str]:
    """Uses of the import bound to ``local`` (``base`` is its path under keras) that
    would break if the name came from Keras 3 instead: ``K.mean`` through
    ``backend``. Those must be migrated (KM2xx) before the import can change."""
    broken: set[str] = set()
    for parts in module.attribute_chains(local):
        path = ".".join(p for p in (base, *parts[1:]) if p)
        if not _path_is_portable(path):
            broken.add(".".join(parts))
    return sorted(broken)


_PORT_CALLS = (
    "Port the calls made through it (for example `backend.sigmoid(x)` becomes "
    "`keras.activations.sigmoid(x)`, `backend.mean` becomes `keras.ops.mean`)"
)
_PORT_ADVICE = _PORT_CALLS + ", then change the import to `keras` by hand"


def _assigns_attributes(tree: ast.Module, local: str) -> bool:
    """Whether the module sets attributes on ``local`` (``K.flatten = flatten``)."""
    return any(
        isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == local
        for node in ast.walk(tree)
    )


class TfKerasNamespace(Rule):
    id = "KM101"
    name = "tf-keras-namespace"
    summary = "`tf.keras.X` used through the TensorFlow namespace; Keras 3 is `keras.X`."
    rationale = (
        "`tf.keras` ties model code to TensorFlow: it is only an alias of Keras on the "
        "TensorFlow backend, and on TensorFlow < 2.16 it is Keras 2. Importing `keras` "
        "directly gives the same classes on every backend."
    )
    fix_safety = (
        "Exact when the name exists in Keras 3 (checked against the public Keras 3 API, "
        "including moved namespaces such as `layers.experimental.preprocessing`); otherwise "
        "reported for a manual port with what replaces it."
    )
    reference_prefixes = ("tf.keras",)
    examples = [
        Flagged(
            """
            import tensorflow as tf

            dense = tf.keras.layers.Dense(4)  # a comment that stays
            """,
            """
            import keras

            dense = keras.layers.Dense(4)  # a comment that stays
            """,
        ),
        Flagged(
            """
            import tensorflow as tfx

            class Block(tfx.keras.layers.Layer):
                def call(self, x):
                    return tfx.keras.activations.relu(x)
            """,
            """
            import keras

            class Block(keras.layers.Layer):
                def call(self, x):
                    return keras.activations.relu(x)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            scale = tf.keras.layers.experimental.preprocessing.Rescaling(1 / 255)
            """,
            """
            import keras

            scale = keras.layers.Rescaling(1 / 255)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf

            rnn = tf.keras.layers.CuDNNLSTM(8)
            """
        ),
        Clean(
            """
            import keras

            dense = keras.layers.Dense(4)
            """
        ),
        Clean(
            """
            def build(tf):
                return tf.keras.layers.Dense(4)  # `tf` is a parameter, not TensorFlow
            """
        ),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        root_name = site.node
        while isinstance(root_name, ast.Attribute):
            root_name = root_name.value
        assert isinstance(root_name, ast.Name)
        root_target = site.module.resolver.qualified_name(root_name.id) or ""
        qualified = site.module.resolver.resolve(site.node) or ""
        legacy = _legacy_path(qualified, _TF_KERAS)
        if legacy is None or legacy.startswith(_LEFT_TO_OTHER_RULES):
            return
        through_tensorflow = root_target in ("tensorflow", "tensorflow.compat.v2")
        target = keras3_reference(legacy)
        if target is None:
            yield Report(
                site,
                f"`{site.symbol}` does not exist in Keras 3: {removal_note(legacy)}",
                severity=Severity.ERROR,
            )
            return
        if not through_tensorflow and target == legacy:
            return  # e.g. `layers.Dense` after `from tensorflow.keras import layers`: KM102
        new = _keras_name(target)
        escape = escaping_reference(site.module, site.node, target)
        if escape:
            yield Report(
                site,
                f"`{site.symbol}` was not renamed to `{new}`: {escape.sentence()}. {_PORT_ADVICE}",
            )
            return
        yield Report(
            site,
            f"`{site.symbol}` is `{new}` in Keras 3",
            fix=EditPlan((ReplaceNode(site.span, f"{{name:{new}}}"),), f"use {new}"),
        )


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
            legacy = _legacy_path(alias.name, _TF_KERAS)
            if legacy is None or alias.asname is None:
                # `import tensorflow.keras` binds `tensorflow`; its uses are KM101's.
                parts.append(_format_alias(alias.name, alias.asname))
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
            parts.append(_format_alias(_keras_name(target), alias.asname))
        if touched:
            yield self._fix(site, "import " + ", ".join(parts))

    def _from_import(self, site: ImportSite, node: ast.ImportFrom) -> Iterable[Report]:
        module = node.module or ""
        legacy_module = _legacy_path(module, _TF_KERAS)
        if module in ("tensorflow", "tensorflow.compat.v2"):
            keras_aliases = [a for a in node.names if a.name == "keras"]
            if not keras_aliases:
                return
            if len(keras_aliases) != len(node.names):
                yield Report(
                    site,
                    "this import mixes `keras` with other TensorFlow names: split it and "
                    "import Keras 3 as `import keras`",
                )
                return
            alias = keras_aliases[0]
            blocked = self._blocked(site, alias.asname or "keras", "")
            if blocked is not None:
                yield blocked
                return
            yield self._fix(site, "import " + _format_alias("keras", alias.asname))
            return
        if legacy_module is None or legacy_module.startswith(_LEFT_TO_OTHER_RULES):
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
            names.append(_format_alias(leaf, alias.asname if alias.asname != leaf else None))
        if len(parents) != 1:
            yield Report(
                site,
                "the imported names live in different Keras 3 modules: "
                "import each from its `keras` module",
            )
            return
        parent = parents.pop()
        yield self._fix(site, f"from {_keras_name(parent)} import {', '.join(names)}")

    def _blocked(self, site: ImportSite, local: str, base: str) -> Report | None:
        """Why the import must stay for now: uses of ``local`` with no Keras 3 spelling,
        or the module object passed where its uses cannot be followed."""
        broken = _unportable_uses(site.module, local, base)
        escape = check_module_uses(site.module, local, base)
        escape.missing -= set(broken)
        if escape:
            return Report(
                site,
                f"`{local}` was not changed to Keras 3's `{_keras_name(base)}`: "
                f"{escape.sentence()}. {_PORT_ADVICE}",
            )
        if not broken:
            return None
        shown = ", ".join(f"`{b}`" for b in broken[:4]) + (" ..." if len(broken) > 4 else "")

        def symbol(chain: str) -> str:
            return canonical(".".join(p for p in (_TF_KERAS, base, chain.partition(".")[2]) if p))

        uses = {symbol(".".join(parts)) for parts in site.module.attribute_chains(local)}
        if _assigns_attributes(site.module.tree, local):  # `K.flatten = flatten` stays
            uses.add(f"{local}.<assigned>")
        return Report(
            site,
            f"keep this import until {shown} are migrated (they do not exist in Keras 3; "
            "see KM2xx findings); `kmigrate apply` changes it once they are gone",
            severity=Severity.INFO,  # a consequence of other findings, not work of its own
            unblocked_by=frozenset(map(symbol, broken)),
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
        "reported with what replaces it."
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
            import keras

            act = keras.activations.get("relu")
            config = keras.activations.serialize(act)
            """,
        ),
        Clean("import keras\nfrom keras.layers import Dense\nx = keras.ops.mean\n"),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        legacy = site.symbol[len("keras.") :]
        if legacy.startswith(_LEFT_TO_OTHER_RULES + _KERAS3_PRIVATE):
            return
        target = keras3_reference(legacy)
        if target == legacy:
            return
        if target is None:
            yield Report(site, f"`{site.symbol}` is not in Keras 3: {removal_note(legacy)}")
            return
        new = _keras_name(target)
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
        legacy_module = _legacy_path(module, "keras")
        if not legacy_module or legacy_module.startswith(_LEFT_TO_OTHER_RULES + _KERAS3_PRIVATE):
            return
        moved: dict[str, list[str]] = {}
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
            parent, _, leaf = target.rpartition(".")
            alias_text = _format_alias(leaf, alias.asname if alias.asname != leaf else None)
            moved.setdefault(parent, []).append(alias_text)
        if not changed:
            return
        if len(moved) != 1:
            yield Report(site, "the imported names moved to different Keras 3 modules")
            return
        ((parent, names),) = moved.items()
        text = f"from {_keras_name(parent)} import {', '.join(names)}"
        yield Report(
            site,
            f"Keras 2 module path: `{text}` in Keras 3",
            fix=EditPlan((ReplaceNode(site.span, text, kind="stmt"),), text),
        )


class LegacyKerasPinned(Rule):
    id = "KM104"
    name = "legacy-keras-pinned"
    summary = "Code pins Keras 2 through `tf_keras` or `TF_USE_LEGACY_KERAS`."
    rationale = (
        "`tf_keras` is Keras 2 kept alive for TensorFlow only, and `TF_USE_LEGACY_KERAS=1` "
        "makes `tf.keras` resolve to it. Both keep the code off JAX and PyTorch; they are a "
        "bridge while migrating, not a destination."
    )
    fix_safety = "Not fixed automatically: remove the pin once the code runs on Keras 3."
    wants_imports = True
    visit_types = (ast.Constant,)
    examples = [
        Flagged("import tf_keras as keras\n"),
        Flagged('import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n'),
        Clean("import keras\n"),
    ]

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        if any(m == "tf_keras" or m.startswith("tf_keras.") for m in site.modules):
            yield Report(
                site,
                "imports `tf_keras` (Keras 2, TensorFlow only): import `keras` (Keras 3) once "
                "the code is migrated",
            )

    def check_node(self, site) -> Iterable[Report]:
        if site.node.value == "TF_USE_LEGACY_KERAS":
            yield Report(
                site,
                "`TF_USE_LEGACY_KERAS` pins `tf.keras` to Keras 2: remove it after migrating",
            )


class BackendModuleEscapes(Rule):
    id = "KM105"
    name = "backend-module-escapes"
    summary = "The Keras 2 `backend` module is passed on as a value (keras_applications style)."
    rationale = (
        "Keras 3's `keras.backend` keeps a handful of functions (`floatx`, "
        "`image_data_format`, `epsilon`...); the Keras 2 math (`sigmoid`, `mean`, `dot`...) "
        "moved to `keras.ops` and `keras.activations`. Code that receives the module as an "
        "argument (`build(backend=keras.backend)`) and calls `backend.sigmoid(x)` fails on "
        "every backend, and the call is made through a name no import resolves."
    )
    fix_safety = (
        "Reported: the calls made through the receiving name have to move to `keras.ops` / "
        "`keras.activations`; kmigrate names those it can follow in the same file."
    )
    reference_prefixes = ("K",)
    examples = [
        Flagged(
            """
            import keras

            def swish(x, backend):
                return x * backend.sigmoid(x)

            y = swish(keras.Input((4,)), keras.backend)
            """
        ),
        Clean(
            """
            import keras

            def build(backend=keras.backend):
                return backend.floatx()
            """
        ),
    ]

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        if site.symbol != "K":
            return
        qualified = site.module.resolver.resolve(site.node) or ""
        if qualified != "keras.backend":
            return  # through TensorFlow: KM102 keeps that import and says why
        escape = escaping_reference(site.module, site.node, "backend")
        if escape:
            yield Report(
                site,
                f"`{site.source}` (Keras's backend module) is passed on: {escape.sentence()}. "
                f"{_PORT_CALLS}",
            )


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
        "every use keeps working; rename it at leisure."
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
        Clean("import keras\nfrom keras import layers\n"),
    ]

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        node = site.node
        if site.level:
            return
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            sub = _legacy_path(module, _KERAS_CORE)
            if sub is None:
                return
            missing = [
                a.name
                for a in node.names
                if a.name == "*" or not _path_is_portable(f"{sub}.{a.name}" if sub else a.name)
            ]
            if missing:
                yield Report(site, self._manual(f"`{missing[0]}` is not in Keras 3's API"))
                return
            names = ", ".join(_format_alias(a.name, a.asname) for a in node.names)
            yield self._fix(site, f"from {_keras_name(sub)} import {names}")
            return
        if not any(_legacy_path(a.name, _KERAS_CORE) is not None for a in node.names):
            return
        parts = []
        for alias in node.names:
            sub = _legacy_path(alias.name, _KERAS_CORE)
            if sub is None:
                parts.append(_format_alias(alias.name, alias.asname))
            elif alias.asname:
                asname = None if alias.asname == "keras" and not sub else alias.asname
                parts.append(_format_alias(_keras_name(sub), asname))
            elif not sub:
                parts.append("keras as keras_core")
            else:  # `import keras_core.layers` binds `keras_core`: no import spells that
                yield Report(site, self._manual(f"`import {alias.name}` binds `keras_core`"))
                return
        yield self._fix(site, "import " + ", ".join(parts))

    @staticmethod
    def _manual(why: str) -> str:
        return f"`keras_core` is now `keras`: {why}; import it from `keras` by hand"

    def _fix(self, site: ImportSite, text: str) -> Report:
        return Report(
            site,
            f"`keras_core` is released as `keras`: `{text}`",
            fix=EditPlan((ReplaceNode(site.span, text, kind="stmt"),), text),
        )
