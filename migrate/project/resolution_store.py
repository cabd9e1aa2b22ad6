"""This run's resolution written as :class:`~kmigrate.project.stored_resolution.StoredResolution`
reads it: the rows of files not resolved again copied as stored, and the TF/Keras
functions the project replaces with their targets by module key."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kmigrate.engine.fact_provider import as_json
from kmigrate.engine.module_record import ModuleRecord, imported_paths
from kmigrate.engine.project_entry import entry_shape
from kmigrate.engine.project_index import RECORD_TARGETS, plain_target
from kmigrate.project.local_facts_rows import encode_nodes, encode_own
from kmigrate.project.resolved_facts import ResolvedFacts
from kmigrate.project.stored_resolution import (
    RESOLVED,
    DamagedRowError,
    build_key,
    layout,
    layout_digest,
)

if TYPE_CHECKING:
    from kmigrate.store.cache import ResultCache


def store_resolution(
    store: ResultCache,
    root_key: str,
    digests: Mapping[str, str],
    stamps: Mapping[str, list[int] | None],
    project_key: str,
    facts: ResolvedFacts,
) -> None:
    """Store this resolution, laid out as :class:`StoredResolution` reads it. The row
    of a file not resolved again whose reach did not change is copied as stored (its
    slots hold): after an edit, most of the file is bytes copied, not data encoded."""
    try:
        data = _stored_bytes(project_key, digests, stamps, facts)
    except DamagedRowError:
        raise  # a stored row read for its reach: resolve in full
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        return  # not plain data (a path that is no text): not stored
    store.store_bytes(RESOLVED, root_key, data)


def _patches_to_store(facts: ResolvedFacts) -> list | None:
    """``ProjectIndex.patched`` as worked out in this run, else as stored (still right:
    a run that resolves a patching module again resolves the whole project)."""
    patches = facts.index.known_patches()
    if patches is None:
        patches = facts.stored.patch_targets if facts.stored is not None else None
    if patches is None:
        return None
    return [
        [symbol, where, list(plain_target(t))] for symbol, (where, t) in sorted(patches.items())
    ]


def patches_of(
    stored: dict[str, tuple[str, tuple]], by_key: Mapping[str, ModuleRecord]
) -> dict[str, tuple[str, tuple]] | None:
    """The stored patches with each key back to its record; None if one is gone."""
    found = {}
    for symbol, (where, target) in stored.items():
        if target and target[0] in RECORD_TARGETS:
            record = by_key.get(target[1]) if len(target) > 1 else None
            if record is None:
                return None
            target = (target[0], record, *target[2:])
        found[symbol] = (where, target)
    return found


def _stored_bytes(
    project_key: str,
    digests: Mapping[str, str],
    stamps: Mapping[str, list[int] | None],
    facts: ResolvedFacts,
) -> list[bytes]:
    """The stored resolution, in pieces whose join it is (lines and their newlines)."""
    index = facts.index
    position = facts.position
    stored = facts.stored
    heads: list[list | None] = []
    lines: list[bytes] = []
    by_key = {record.key: record for record in facts.records}
    roots = {name.partition(".")[0] for record in facts.records for name in record.names}
    for key in facts.slots:
        record = by_key.get(key) if key is not None else None
        if record is None:
            heads.append(None)
            lines.append(b"")
            continue
        if key in facts.made or stored is None:
            entry = record.entry
            row_layout = layout(record)
            heads.append(
                [
                    digests[key],
                    bool(entry["patches"]),
                    layout_digest(row_layout),
                    record.shown or key,
                    entry["paths"],
                    stamps.get(key),
                    as_json(facts.made[key].provided),
                    [p for p in imported_paths(record) if p.partition(".")[0] in roots],
                    facts.made[key].uses_keras,
                ]
            )
            own = [encode_own(facts.made[key]), *_reach(facts, key)]
            rest = [
                entry_shape(entry),
                sorted(position[u] for u in index.modules_used(record)),
                facts.graph_of(key),
                row_layout,
                index.import_paths(record),
            ]
            lines.append(_encode(own) + b"\t" + _encode(rest))
            continue
        heads.append(
            [digests[key], *stored.heads[key][1:5], stamps.get(key), *stored.heads[key][6:]]
        )
        line = stored.lines[stored.position[key]]
        if facts.graph_kept:
            lines.append(line)
            continue
        own = stored.own(key)
        reach = _reach(facts, key)
        if reach == own[1:]:
            lines.append(line)
        else:  # the rest of the row is copied as stored
            lines.append(_encode([own[0], *reach]) + b"\t" + line.partition(b"\t")[2])
    head = {
        "build": build_key(),
        "project": project_key,
        "reusable": not index.order_sensitive,
        "patched": [list(p) for p in facts.patched],
        "patch_targets": _patches_to_store(facts),
        "keys": facts.slots,
        "files": heads,
    }
    pieces = [_encode(head)]
    for line in lines:  # joined by the store as it writes them (never held twice)
        pieces += (b"\n", line)
    return pieces


def _reach(facts: ResolvedFacts, key: str) -> list:
    """What the closed call graph reached in module ``key``, as its row's first part
    keeps it: functions from model code, from data pipelines, methods from model code,
    and the data seed of each function reached from both."""
    in_model, in_data = facts.reached_functions(key)
    seeds = {
        name: encode_nodes([facts.data_seed((key, name))], facts.position)[0]
        for name in sorted(in_model & in_data)
    }
    return [sorted(in_model), sorted(in_data), sorted(facts.methods_reached(key)), seeds]


def _encode(value: Any) -> bytes:
    """Compact JSON: it never holds a raw newline, which ends a line of the stored file."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")
