"""What the project says about a module, as plain data: the facts each module gets
(:class:`ModuleFacts`), the part of them its own entry decides once its names are
resolved (:class:`LocalFacts`), and the types of the call graph they are made of.
They travel to worker processes, key cached results and are stored with the
resolution (project/resolution_cache.py), so they hold no index and no record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModuleFacts:
    """What the project says about one module, beyond what the module says itself.
    Plain, hashable data: it travels to worker processes and keys cached results."""

    model_classes: tuple[str, ...] = ()  # top-level classes that are Keras layers/models
    model_functions: tuple[str, ...] = ()  # top-level functions reached from model code
    # ``Class.method`` of classes that are not model classes, reached from model code:
    # helper objects a layer holds, mixins, loss objects, registry values
    model_methods: tuple[str, ...] = ()
    data_functions: tuple[str, ...] = ()  # ... reached from a data pipeline
    mixed_functions: tuple[str, ...] = ()  # ... reached from both: reported, not rewritten
    # (mixed function, where data code reaches it from: "" when it is data code itself,
    # else "`preprocess` in data.py"), so the finding can say which caller is data code
    data_callers: tuple[tuple[str, str], ...] = ()
    bindings: tuple[tuple[str, str], ...] = ()  # local name -> TF/Keras qualified name
    notes: tuple[tuple[str, str], ...] = ()  # (class or function, why it is undecided)
    # (symbol, module): TF/Keras functions the project replaces (``K.reshape = reshape``)
    patched: tuple[tuple[str, str], ...] = ()
    # (file name, other modules using it): a save here pairs with a load there
    shared_paths: tuple[tuple[str, str], ...] = ()
    # (callee as written, why): calls whose project function resolution cannot decide
    undecided_calls: tuple[tuple[str, str], ...] = ()
    # (name, other modules as shown): of the names this module's own imports bind to a
    # namespace an import swap rebinds, those other modules import from it (by name, by
    # a star import, or through the module object): a swap here rebinds them there too
    imported_by: tuple[tuple[str, str], ...] = ()
    # Some module of the project uses Keras (LocalFacts.uses_keras): then code here is
    # model code unless proven TensorFlow by design, Keras import or not (contexts.py)
    keras_project: bool = False
    # (provider name, value): what each fact provider the rules declare tells this
    # module (engine/fact_provider.py; read with ``ModuleInfo.fact``)
    provided: tuple[tuple[str, Any], ...] = ()

    @property
    def reaches_framework(self) -> bool:
        """Whether a file without a TensorFlow/Keras marker still needs analysis: it
        reads a re-exported backend, or defines layers through a base class elsewhere
        (``self.add_weight(...)`` there is Keras code). Helpers without TF/Keras names
        have nothing to report."""
        return bool(self.bindings or self.model_classes)


Node = tuple[str, str]  # (module key, function name or ``Class.method``)
# A file outside the modules that other modules may be told about (a notebook): (path
# as shown, the saved-file names it names, its local values of the fact providers)
FileUse = tuple[str, tuple[str, ...], tuple[tuple[str, Any], ...]]


@dataclass(frozen=True)
class LocalFacts:
    """What one module's own entry decides once its names are resolved against the
    project: its model classes, bindings and notes, and its part of the call graph.

    It depends on the module's entry and on the *shape* of the other modules (what they
    define, import and bind: ``project_entry.entry_shape``), never on their calls: so when a
    file's function bodies change, only its own local facts are made again, and the
    call graph is closed over the stored ones (:class:`ProjectFacts`)."""

    model_classes: tuple[str, ...] = ()
    bindings: tuple[tuple[str, str], ...] = ()
    notes: tuple[tuple[str, str], ...] = ()
    functions: tuple[str, ...] = ()  # top-level functions, in entry order
    # function / method nodes of the module -> the project functions they call (if any)
    edges: tuple[tuple[str, tuple[Node, ...]], ...] = ()
    model_seeds: tuple[Node, ...] = ()  # nodes that are model code whoever calls them
    data_seeds: tuple[Node, ...] = ()  # ... data-pipeline code
    # (callee as written, why): calls of a name resolution cannot decide between project
    # functions (star imports of one backend module per backend): all are followed
    undecided_calls: tuple[tuple[str, str], ...] = ()
    # module-level names bound only by its own imports of a namespace an import swap
    # rebinds (``K``, ``keras``: the spec's ``swapped_namespaces``; ``ModuleFacts.imported_by``)
    namespace_imports: tuple[str, ...] = ()
    star_exports: tuple[str, ...] = ()  # ... of those, the names `from m import *` takes
    # the module binds or calls a Keras namespace itself (its imports, its functions'
    # calls, its model classes, a re-exported ``K``): one such module makes the project
    # one that uses Keras (``ModuleFacts.keras_project``)
    uses_keras: bool = False
    # (provider name, local value): each fact provider's part of this module, decoded
    # (engine/fact_provider.py); other modules' facts are made from these
    provided: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class LocalFactsFrom:
    """A module's local facts made by a smaller index than the project's (a worker's
    first guess, project/facts_guess.py), with what they were made from beyond the
    entries: each module name that index looked up and the keys of the modules it
    found, the first parts of dotted names it took as external without looking (no
    module of its started so), and each TF/Keras function called whose replacement it
    asked for, with the answer (a project patching ``K.flatten`` changes the local facts
    only of the modules calling it). An index that gives the same answers to all of
    these (:meth:`ProjectIndex.agrees`)
    makes the same local facts, the entries being the same (those of the same bytes):
    resolution reads nothing else. Only made when that index did not meet the depth
    bound, where the answers would depend on the order names were asked for."""

    local: LocalFacts
    modules: tuple[tuple[str, tuple[str, ...]], ...]
    outside: frozenset[str]
    # (symbol, (module, what replaces it as plain data) or None), by symbol
    patches_read: tuple[tuple[str, tuple | None], ...]
