"""What the project says about a notebook.

A notebook's layers derive from the project's base layers and call its helpers like
any module does (``from mypkg.layers import BaseLayer`` in a cell). Its code cells,
joined as the analysis joins them, are read as one more module of the project: its
names are resolved through the project's modules, and its functions are model code
when its own layers reach them. Nothing can import a notebook, so it changes nothing
the project's modules are told (their facts are those of the project without it).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmigrate.engine.fact_provider import as_json, decode_values
from kmigrate.engine.module_facts import ModuleFacts
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_entry import ValueStore, build_entry, load_entry, store_entry
from kmigrate.engine.project_facts import ProjectFacts
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.store.plain_data import checked_list, checked_pair, checked_text

if TYPE_CHECKING:
    from kmigrate.engine.spec import ContextSpec
    from kmigrate.engine.tree_index import TreeIndex


def notebook_entry(
    path: Path, store: ValueStore | None = None, made: tuple[str, dict | None] | None = None
) -> dict | None:
    """The index entry of the notebook's code cells, from ``store`` when stored there
    (by the notebook's bytes); None when it is not a readable Python notebook (its
    analysis says why). ``made``: what :func:`made_entry` gave in a worker, used if
    the notebook still has the bytes it read."""
    from kmigrate.engine.sources import SourceError, read_bytes

    try:
        data = read_bytes(str(path))
    except SourceError:
        return None
    marked = b"notebook\0" + data  # not the entry of a module with these bytes
    entry = load_entry(store, marked, _spec()) if store is not None else None
    if entry is None:
        if made is not None and made[0] == _digest(data):
            entry = made[1]
        else:
            entry = _entry_of_cells(data)
        if entry is not None and store is not None:
            store_entry(store, marked, entry)
    return entry


def made_entry(path: str) -> tuple[str, dict | None] | None:
    """(digest of the bytes read, their entry) of a notebook, made in a worker process
    while others are analysed; None when it cannot be read."""
    from kmigrate.engine.sources import SourceError, read_bytes

    try:
        data = read_bytes(path)
    except SourceError:
        return None
    return _digest(data), _entry_of_cells(data)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _entry_of_cells(data: bytes) -> dict | None:
    from kmigrate.engine.notebook import NotebookError, load_notebook
    from kmigrate.engine.sources import SourceError, decode_source, parse_or_none
    from kmigrate.engine.tree_index import TreeIndex
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    try:
        text = decode_source(data).text
        notebook = load_notebook(text)
    except (SourceError, NotebookError):
        return None
    tree = parse_or_none(notebook.module_text) if notebook is not None else None
    if tree is None:
        return None
    index = TreeIndex(tree)
    try:
        entry = build_entry(tree, CONTEXT_SPEC, index)
    except RecursionError:
        return None
    if len(_LOADED) >= _LOADED_AT_MOST:  # one made in a process that never analyses it
        del _LOADED[next(iter(_LOADED))]
    _LOADED[text] = LoadedNotebook(notebook, tree, index)
    return entry


@dataclass(frozen=True)
class LoadedNotebook:
    """A notebook read for its entry (:func:`_entry_of_cells`), its code cells' tree and
    that tree's index: what its analysis, later in the same process, reads instead of
    loading and parsing the notebook again (:func:`take_loaded`)."""

    notebook: Any  # notebook.Notebook
    tree: ast.Module
    tree_index: TreeIndex


# Notebooks read for their entries in this process, by their decoded text, until
# their analysis takes them. The analysis of a cold scan's notebooks comes after the
# project is resolved, which needs their entries: without this each notebook was
# decoded, loaded and parsed twice. Keyed by the whole text, so an entry never
# stands for other bytes; taken once, so no two users share a notebook object.
_LOADED: dict[str, LoadedNotebook] = {}
_LOADED_AT_MOST = 64  # the oldest goes first


def take_loaded(text: str) -> LoadedNotebook | None:
    """The notebook with this decoded ``text`` as its entry was made from it in this
    process, or None; each is handed out once."""
    return _LOADED.pop(text, None) if _LOADED else None


def notebook_facts(
    notebooks: Sequence[ModuleRecord],
    records: Sequence[ModuleRecord],
    project: ProjectFacts,
    may_patch: Callable[[ModuleRecord], bool],
    spec: ContextSpec,
) -> dict[str, ModuleFacts]:
    """The facts of each notebook record (no module names: nothing imports it) in the
    project of ``records``, whose facts are ``project``: the project and that notebook,
    not the other notebooks. ``may_patch``: whether a record can replace TF/Keras
    functions (so that only those entries are read); ``spec``: the project's."""
    ordered = sorted(records, key=_key)
    patching = [r for r in ordered if may_patch(r)]
    shared: ProjectIndex | None = None  # for the notebooks that patch nothing
    found = {}
    for notebook in notebooks:
        if notebook.entry["patches"]:  # its patches are its own: an index of its own
            with_it = sorted([*ordered, notebook], key=_key)
            index = ProjectIndex(with_it, spec, sorted([*patching, notebook], key=_key))
        else:  # nothing resolves a name to a notebook: one index serves them all
            if shared is None:
                everything = sorted([*ordered, *notebooks], key=_key)
                shared = ProjectIndex(everything, spec, patching)
            index = shared
        own = (notebook.shown or notebook.key, notebook.entry["paths"])
        local = {notebook.key: index.local(notebook)}
        alone = ProjectFacts(
            local, {notebook.key: own}, index.patched_symbols(), providers=spec.providers()
        )[notebook.key]
        found[notebook.key] = replace(
            alone,
            shared_paths=project.shared_paths(*own),
            provided=project.provided_values(notebook.key, local[notebook.key].provided),
            keras_project=alone.keras_project or project.keras_project(),
        )
    return found


def _key(record: ModuleRecord) -> str:
    return record.key


def _spec() -> ContextSpec:
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    return CONTEXT_SPEC


def notebook_record(
    path: Path,
    layout: dict[str, Any],
    store: ValueStore | None = None,
    made: tuple[str, dict | None] | None = None,
) -> ModuleRecord | None:
    """The notebook as a record with the given ``layout`` (see
    ``index_entries.record_layout``) and no module names: nothing imports it.
    ``made``: see :func:`notebook_entry`."""
    entry = notebook_entry(path, store, made)
    if entry is None:
        return None
    return ModuleRecord(entry=entry, **{**layout, "names": ()})


# -- the notebooks' facts of an unchanged project ------------------------------------
#
# Working a notebook's facts out indexes the whole project (a record per file), which
# an unchanged project's re-scan otherwise skips: so the last run's are kept, one signed
# value per project in the index store, under a key naming everything they come from
# (the project's key, the notebooks' paths, packages and bytes, kmigrate's build).

NOTEBOOKS = "notebooks"  # the index store's namespace; the key is the project root's
_NAME_FIELDS = (
    "model_classes",
    "model_functions",
    "data_functions",
    "mixed_functions",
    "model_methods",
)
_PAIR_FIELDS = (
    "bindings",
    "notes",
    "patched",
    "shared_paths",
    "data_callers",
    "undecided_calls",
    "imported_by",  # always empty: nothing imports a notebook
)
_FLAG_FIELDS = ("keras_project",)
# then the rules' fact providers' values, {name: value} (engine/fact_provider.py)


def load_notebook_facts(store: ValueStore, root_key: str, key: str) -> dict | None:
    """The notebooks' facts stored for ``key`` (by notebook record key), or None."""

    def decode(value: Any) -> dict[str, ModuleFacts]:
        if type(value) is not dict or value["key"] != key or type(value["facts"]) is not dict:
            raise ValueError("not the notebooks' facts of this project")
        return {checked_text(name): _decode_facts(row) for name, row in value["facts"].items()}

    return store.load_value(NOTEBOOKS, root_key, decode)


def store_notebook_facts(
    store: ValueStore, root_key: str, key: str, facts: Mapping[str, ModuleFacts]
) -> None:
    value = {"key": key, "facts": {name: _encode_facts(f) for name, f in facts.items()}}
    store.store_value(NOTEBOOKS, root_key, value)


def _encode_facts(facts: ModuleFacts) -> list:
    return (
        [list(getattr(facts, name)) for name in _NAME_FIELDS]
        + [[list(pair) for pair in getattr(facts, name)] for name in _PAIR_FIELDS]
        + [getattr(facts, name) for name in _FLAG_FIELDS]
        + [as_json(facts.provided)]
    )


def _decode_facts(row: Any) -> ModuleFacts:
    fields = _NAME_FIELDS + _PAIR_FIELDS
    if type(row) is not list or len(row) != len(fields + _FLAG_FIELDS) + 1:
        raise ValueError("not a module's facts")
    found: dict[str, tuple] = {}
    for index, name in enumerate(_NAME_FIELDS):
        found[name] = tuple(map(checked_text, checked_list(row[index])))
    for index, name in enumerate(_PAIR_FIELDS, len(_NAME_FIELDS)):
        found[name] = tuple(map(checked_pair, checked_list(row[index])))
    flags: dict[str, bool] = {}
    for index, name in enumerate(_FLAG_FIELDS, len(fields)):
        if row[index] is not True and row[index] is not False:
            raise ValueError("not a flag")
        flags[name] = row[index]
    provided = decode_values(_spec().providers(), row[-1])
    return ModuleFacts(**found, **flags, provided=provided)
