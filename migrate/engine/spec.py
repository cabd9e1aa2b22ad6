"""The shape of the knowledge the engine is given: :class:`ContextSpec`.

The engine spells symbols, classifies code (model, training loop, data), indexes
projects and writes imports without knowing a TensorFlow symbol; ``rules/context_spec.py``
fills this spec with them and the caller passes it in. :func:`function_refs` is the one
reading of "a function passed as an argument" that both the per-module contexts and the
project index share.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kmigrate.engine.names import Canonical, CanonicalPrefixes, canonical_for

if TYPE_CHECKING:
    from kmigrate.engine.fact_provider import FactProvider


@dataclass(frozen=True)
class ImportStyle:
    """How the editor spells a qualified name a fix introduces (data, from rules/)."""

    # namespaces written through their last part: ``from <parent> import <last>`` then
    # ``<last>.name``, when that local name is free or already bound to the namespace
    from_imports: tuple[str, ...] = ()
    # names written the same way only where the module binds their root to something
    # else, so that ``import <root>`` cannot be added (``from keras import Operation``
    # where ``keras`` is the project's own backend module's)
    from_imports_where_root_taken: tuple[str, ...] = ()
    # packages whose sub-package, bound under its own name (``from <parent> import
    # <root>``), gives way to ``import <root>`` when a spelling starts with ``<root>``
    superseded_parents: tuple[str, ...] = ()
    # modules a name may be bound to that give way to ``import <that name>``: a rule
    # rewrites their import (``import keras_core as keras`` -> ``import keras``)
    superseded_modules: tuple[str, ...] = ()
    # (module, alias): a module a fix needs but the module does not import is imported
    # under its conventional name when that name is free (``import numpy as np``)
    module_aliases: tuple[tuple[str, str], ...] = ()
    # (module, its sub-packages that do not count): a module a fix may spell only where
    # the edited module imports it already. ``import tensorflow`` is never added to a
    # module that did not import it (``from tensorflow.keras import backend`` does not
    # count: after the migration it is Keras's)
    only_where_imported: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class ContextSpec:
    """The TensorFlow/Keras knowledge the engine needs (data, from rules/): how symbols
    are spelled, how code is classified, how new imports are written."""

    model_base_prefixes: tuple[str, ...]  # canonical symbol prefixes of Layer/Model/Loss...
    model_name_suffixes: tuple[str, ...]  # unresolved base names that look like layers
    model_function_keywords: frozenset[str]  # loss=, metrics=, activation= ...
    model_function_callees: tuple[str, ...]  # symbol suffixes taking a function: ".Lambda"
    functional_input_suffixes: tuple[str, ...]  # ".Input": functional model builders
    data_methods: frozenset[str]  # dataset.map(fn) ...
    data_symbol_prefixes: tuple[str, ...]  # tf.data. tf.io. ...
    training_symbols: tuple[str, ...]  # tf.GradientTape ...
    # canonical namespaces (``K``, ``keras``, ``tf.keras``) whose use makes a module Keras
    # code: there, code is model code unless proven TensorFlow by design
    keras_namespaces: tuple[str, ...] = ()
    # symbol prefixes whose call proves its function serving / export code
    # (``tf.saved_model.``) and distribution code (``tf.distribute.``)
    serving_symbols: tuple[str, ...] = ()
    distribution_symbols: tuple[str, ...] = ()
    # ... and training-loop code besides a ``training_symbols`` block (``tf.summary.``)
    training_call_prefixes: tuple[str, ...] = ()
    # canonical symbols of whole namespaces (``K``, ``tf``): a project name that resolves
    # to one of them through re-exports or aliases is bound like an import of it
    namespace_symbols: frozenset[str] = frozenset()
    # ... of those an import swap rebinds (``K``, ``tf.keras``): a module whose own
    # imports bind one is told which other modules import it (``ModuleFacts.imported_by``)
    swapped_namespaces: frozenset[str] = frozenset()
    # endings of saved-model / weights file names (``.h5``): a literal path used by
    # several modules pairs a save in one with a load in another
    saved_file_suffixes: tuple[str, ...] = ()
    # qualified prefix -> canonical spelling, first match wins (see names.Canonical)
    canonical_prefixes: CanonicalPrefixes = ()
    # canonical prefixes of functions named like a dataset method (``data_methods``)
    # that are not one: their function argument is not seeded as data code
    data_method_exempt_prefixes: tuple[str, ...] = ()
    import_style: ImportStyle = ImportStyle()
    # qualified names of classes from other packages that the project's config says are
    # Keras layers/models/losses/metrics (``params_flow.Layer``: ``model-bases``)
    model_base_names: frozenset[str] = frozenset()
    # (canonical symbol, why): a symbol (``tf``) whose optional import (``try: import
    # ... / except ImportError: tf = None``) marks a module's calls through it as
    # deliberate (input-pipeline code of a multi-backend project): never rewritten
    optional_imports: tuple[tuple[str, str], ...] = ()
    # canonical symbols that write a SavedModel of any object, and those that reload one
    # as it was written (called as ``loaded(x)``): a module of the project that reloads
    # makes the saves elsewhere keep their form (KM404's fact provider, ``saved_model_reloads``)
    saved_model_saves: frozenset[str] = frozenset()
    saved_model_loads: frozenset[str] = frozenset()
    # ... and those that read a SavedModel only when handed a folder (they read saved
    # files too): they count when their path is a literal folder (:meth:`reads_folder`)
    saved_model_folder_loads: frozenset[str] = frozenset()
    # symbol suffixes of the getter of Keras's custom-object table: a function put into
    # it (``get_custom_objects()["gelu"] = gelu``, ``.update({...})``) is model code
    custom_object_getters: tuple[str, ...] = ()
    # ... and of decorators that register a function there
    model_function_decorators: tuple[str, ...] = ()
    # (helper name, qualified modules): ``backend, layers, ... = helper(kwargs)`` binds
    # those names to Keras's modules, in order (kmigrate.engine.injected_modules)
    injected_modules: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the cross-file facts the rules declare (``Rule.facts``, engine/fact_provider.py),
    # asked when first needed: every registered rule's, selected or not, so that what is
    # stored does not depend on a selection
    provider_source: Callable[[], tuple[type[FactProvider], ...]] | None = field(
        default=None, compare=False, repr=False
    )

    def providers(self) -> tuple[type[FactProvider], ...]:
        """The fact providers of the rules (none for a spec without a source)."""
        return self.provider_source() if self.provider_source is not None else ()

    @property
    def canonical(self) -> Canonical:
        """The folding of qualified names into canonical symbols this spec gives."""
        return canonical_for(self.canonical_prefixes)

    def is_keras_symbol(self, symbol: str) -> bool:
        """Whether the canonical ``symbol`` is in one of the Keras namespaces."""
        return any(symbol == ns or symbol.startswith(ns + ".") for ns in self.keras_namespaces)

    def reads_folder(self, call: ast.Call) -> bool:
        """Whether the path ``call`` reads (its first argument, or ``filepath=``) is a
        string literal naming no saved file (``saved_file_suffixes``): a SavedModel
        folder. A path built at run time is not known to be one."""
        path = call.args[0] if call.args else None
        for keyword in call.keywords:
            if keyword.arg == "filepath":
                path = keyword.value
        return (
            isinstance(path, ast.Constant)
            and isinstance(path.value, str)
            and not path.value.endswith(self.saved_file_suffixes)
        )

    def reloads_saved_model(self, symbol: str, folder: bool) -> bool:
        """Whether a call of the canonical ``symbol`` reloads a SavedModel; ``folder``:
        whether it reads a literal folder (:meth:`reads_folder`)."""
        if symbol in self.saved_model_folder_loads:
            return folder
        return symbol in self.saved_model_loads


def function_refs(node: ast.AST) -> Iterable[ast.AST]:
    """Function-valued expressions inside an argument: names, lambdas, list items."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for elt in node.elts:
            yield from function_refs(elt)
    elif isinstance(node, ast.Dict):
        for value in node.values:
            yield from function_refs(value)
    elif isinstance(node, ast.IfExp):  # loss=focal if use_focal else smoothed
        yield from function_refs(node.body)
        yield from function_refs(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from function_refs(value)
    else:
        yield node
