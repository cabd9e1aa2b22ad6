"""The resolved project, stored, so that a run after an edit re-resolves what the edit
can change instead of the whole project.

The pre-commit hook checks the file that was just edited: every run sees a project one
file away from the last one. Resolving a thousand-file project costs a fifth of a
second; one file's :class:`~kmigrate.engine.module_facts.LocalFacts` cost a few
milliseconds. So the last resolution is kept (one signed file in the index store):
per file its content digest, its shape (:func:`~kmigrate.engine.project_entry.entry_shape`),
the names it is imported by, the import paths it resolves names through, the modules
those reach, its file names and its local facts.

Against it, a run redoes the local facts of

- the files whose content changed;
- when a file's shape changed (a new import, base class or re-export), every file
  whose imports reach it: only those can resolve a name through it
  (``ProjectIndex.modules_used``);
- when files were added, removed or renamed (or a new ``__init__.py`` renamed the
  modules below it), the files whose import paths can name them
  (:func:`~kmigrate.engine.project_facts.path_reaches`), and every file whose imports
  reach those;

and closes the call graph again over all local facts, unless no file came or went
and every file redone has the graph its row holds: then the stored closure holds, and
only the rows of the files redone are read (see :class:`StoredResolution`). That is
the same as resolving from scratch: what a name resolves to does not depend on the
order names are asked for, import cycles included (``NameResolution._settled``), unless
resolution met its depth bound. Such a project, a change that reaches a module patching
TF/Keras functions, or another kmigrate build, is resolved in full.

Call graph nodes are stored as "slot:name" strings, a slot being a file's index in the
stored key list. Slots stay put while files come and go (a new file takes a new slot,
a removed one leaves a hole) so that the rows of files not resolved again stay valid;
a full resolution lays them out afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kmigrate.engine.module_facts import LocalFacts, LocalFactsFrom
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_entry import entry_shape
from kmigrate.engine.project_facts import ProjectFacts, path_reaches
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.project.resolution_store import patches_of, store_resolution
from kmigrate.project.resolved_facts import ResolvedFacts
from kmigrate.project.site_modules import outside_models
from kmigrate.project.stored_resolution import (
    DamagedRowError,
    StoredResolution,
    layout,
    layout_digest,
    load_resolution,
)

if TYPE_CHECKING:
    from kmigrate.store.cache import ResultCache

__all__ = ["load_resolution", "resolve"]


def resolve(
    records: Sequence[ModuleRecord],
    digests: Mapping[str, str],
    project_key: str,
    spec: Any,
    store: ResultCache | None,
    root_key: str,
    stored: StoredResolution | None = None,
    load_all: Callable[[], None] | None = None,
    made: Mapping[str, LocalFactsFrom] | None = None,
    stamps: Mapping[str, list[int] | None] | None = None,
) -> ProjectFacts:
    """The facts of every module of ``records`` (``digests``: each record's file digest),
    reusing the stored resolution where the changes allow, and storing this one.
    ``load_all``: reads every record's entry at once, before a full resolution (records
    may read their entries one by one, when resolution first needs them). ``made``:
    local facts made by smaller indexes (a cold scan's first analyses), which a full
    resolution takes where they are its own (``LocalFactsFrom``). ``stamps``: each
    file's stat, kept with its digest (``project_files.ProjectFiles``). A stored row that
    does not fit, met now or when a module's facts are asked for, means a full
    resolution."""
    stamps = stamps or {}
    records = sorted(records, key=lambda r: r.key)

    def full() -> ProjectFacts:
        if load_all is not None:
            load_all()
        index, local = _local_facts(records, spec, made or {})
        facts = ResolvedFacts(records, local, None, index.patched_symbols(), index)
        if store is not None:
            store_resolution(store, root_key, digests, stamps, project_key, facts)
        return facts

    if stored is not None and stored.reusable:
        try:
            facts = _resolve_again(records, digests, spec, stored, full)
            if facts is not None:
                if store is not None:
                    store_resolution(store, root_key, digests, stamps, project_key, facts)
                return facts
        except DamagedRowError:
            pass
    return full()


def _local_facts(
    records: Sequence[ModuleRecord], spec: Any, made: Mapping[str, LocalFactsFrom]
) -> tuple[ProjectIndex, dict[str, LocalFacts]]:
    """The index of ``records`` and every module's local facts in it: those ``made``
    elsewhere where this index agrees with the one they came from, the others made
    here. If this index meets the depth bound, what a name resolves to depends on the
    order names are asked for: then all are made here, in order, as a resolution
    without ``made`` would."""
    index = ProjectIndex(records, spec, outside=outside_models(spec))
    local = {}
    for record in records:
        found = made.get(record.key)
        if found is not None and index.agrees(found):
            local[record.key] = found.local
        else:
            local[record.key] = index.local(record)
    if made and index.order_sensitive:
        return _local_facts(records, spec, {})
    return index, local


def _resolve_again(
    records: Sequence[ModuleRecord],
    digests: Mapping[str, str],
    spec: Any,
    stored: StoredResolution,
    fallback: Callable[[], ProjectFacts],
) -> ResolvedFacts | None:
    """The facts, with only what the changes since ``stored`` reach resolved again;
    None when that cannot be exact (the depth bound met, a patching module reached)."""
    known = stored.files
    new = {
        r.key
        for r in records
        if r.key not in known or layout_digest(layout(r)) != stored.layout_digest(r.key)
    }
    changed = {
        r.key for r in records if r.key not in new and digests[r.key] != stored.digest(r.key)
    }
    current = {r.key for r in records}
    gone = [key for key in known if key not in current or key in new]
    # a module that may patch TF/Keras functions: read its entry only if it changed
    patching = [
        r
        for r in records
        if (r.entry["patches"] if r.key in new or r.key in changed else stored.patches(r.key))
    ]
    index = ProjectIndex(records, spec, patching, outside=outside_models(spec))
    by_key = {r.key: r for r in records}
    if stored.patch_targets is not None:  # unless a patching module is redone (below)
        patches = patches_of(stored.patch_targets, by_key)
        if patches is not None:
            index.reuse_patches(patches)
    redo = new | changed
    # whose resolution may change: files whose import paths can name a module that
    # came, went or moved, and those whose imports reach a reshaped or moved module
    names = {n for key in new for n in by_key[key].names}
    names.update(n for key in gone for n in stored.names(key))
    seeds = set(new) | set(gone)
    seeds.update(key for key in changed if entry_shape(by_key[key].entry) != stored.shape(key))
    if names:
        for record in records:
            key = record.key
            paths = index.import_paths(record) if key in redo else stored.import_paths(key)
            if any(path_reaches(p, n) for p in paths for n in names):
                seeds.add(key)
    if seeds:
        users: dict[str, set[str]] = {}  # module -> the modules whose imports reach it
        for record in records:
            key = record.key
            for used in index.modules_used(record) if key in redo else stored.uses(key):
                users.setdefault(used, set()).add(key)
        todo = list(seeds)
        reached = set(seeds)
        while todo:
            for user in users.get(todo.pop(), ()):
                if user not in reached:
                    reached.add(user)
                    todo.append(user)
        redo |= reached & current
    # a module replacing TF/Keras functions changes what calls run everywhere
    if any(by_key[key].entry["patches"] for key in redo) or any(
        stored.patches(key) for key in redo | set(gone) if key in known
    ):
        return None
    made = {key: index.local(by_key[key]) for key in sorted(redo)}
    if index.order_sensitive:
        return None  # the depth bound: what was reused may differ from a fresh resolution
    return ResolvedFacts(records, made, stored, stored.patched, index, fallback)
