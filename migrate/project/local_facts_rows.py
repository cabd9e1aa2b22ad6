"""A module's local facts as a stored row holds them (plain JSON data, call graph nodes
as "slot:name" strings) and back: the part of the stored resolution each file has."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from kmigrate.engine.fact_provider import Provided
from kmigrate.engine.module_facts import LocalFacts


def encode_local(local: LocalFacts, position: Mapping[str, int]) -> list:
    def nodes(items) -> list[str]:
        return [f"{position[key]}:{name}" for key, name in items]

    return [
        list(local.model_classes),
        [list(p) for p in local.bindings],
        [list(p) for p in local.notes],
        list(local.functions),
        {name: nodes(out) for name, out in local.edges},
        nodes(local.model_seeds),
        nodes(local.data_seeds),
        [list(p) for p in local.undecided_calls],
        list(local.namespace_imports),
        list(local.star_exports),
        local.uses_keras,
    ]


def decode_local(value: list, slots: list[str | None], provided: Provided) -> LocalFacts:
    """A row's local facts as objects, with the fact providers' local values its file's
    header holds (``provided``, decoded). The row was checked whole when the resolution
    was loaded (``stored_resolution._check_row``: texts, pairs, nodes naming a file that
    is still there), so nothing is checked again here: a warm re-scan decodes every
    file's row."""
    row = LocalRow(*value)

    def nodes(items: list[str]) -> tuple[tuple[str, str], ...]:
        found = []
        for node in items:
            slot, _, name = node.partition(":")
            found.append((slots[int(slot)], name))
        return tuple(found)

    return LocalFacts(
        model_classes=tuple(row.classes),
        bindings=_pairs(row.bindings),
        notes=_pairs(row.notes),
        functions=tuple(row.functions),
        edges=tuple((name, nodes(out)) for name, out in row.edges.items()),
        model_seeds=nodes(row.model_seeds),
        data_seeds=nodes(row.data_seeds),
        undecided_calls=_pairs(row.undecided),
        namespace_imports=tuple(row.namespace_imports),
        star_exports=tuple(row.star_exports),
        uses_keras=row.keras,
        provided=provided,
    )


def _pairs(items: list[list[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((first, second) for first, second in items)


class LocalRow(NamedTuple):
    """A row's local facts as stored (:func:`encode_local`), field by field."""

    classes: list
    bindings: list
    notes: list
    functions: list
    edges: dict
    model_seeds: list
    data_seeds: list
    undecided: list
    namespace_imports: list
    star_exports: list
    keras: bool  # LocalFacts.uses_keras
