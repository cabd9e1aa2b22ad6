"""A module's local facts as a stored row holds them (plain JSON data, call graph nodes
as "slot:name" strings) and back: the part of the stored resolution each file has.

The row keeps them in two parts: the module's own facts, which every module's facts are
made from (decoded by a warm re-scan for every file), and its part of the call graph,
decoded only when the graph is closed again (a call into the project changed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from kmigrate.engine.fact_provider import Provided
from kmigrate.engine.module_facts import LocalFacts, Node


def encode_own(local: LocalFacts) -> list:
    """The module's own facts, field by field as :class:`OwnRow`."""
    return [
        list(local.model_classes),
        [list(p) for p in local.bindings],
        [list(p) for p in local.notes],
        list(local.functions),
        [list(p) for p in local.undecided_calls],
        list(local.namespace_imports),
        list(local.star_exports),
        local.uses_keras,
    ]


def encode_graph(local: LocalFacts, position: Mapping[str, int]) -> list:
    """The module's part of the call graph (:class:`GraphRow`), nodes as "slot:name"."""
    return [
        {name: encode_nodes(out, position) for name, out in local.edges},
        encode_nodes(local.model_seeds, position),
        encode_nodes(local.data_seeds, position),
    ]


def encode_nodes(nodes, position: Mapping[str, int]) -> list[str]:
    return [f"{position[key]}:{name}" for key, name in nodes]


def decode_node(node: str, slots: list[str | None]) -> Node:
    slot, _, name = node.partition(":")
    return slots[int(slot)], name  # type: ignore[return-value]


def decode_local(value: list, provided: Provided) -> LocalFacts:
    """A row's own facts as objects, with the fact providers' local values its file's
    header holds (``provided``, decoded). The row was checked when first read
    (``stored_resolution._check_own``), so nothing is checked again here: a warm re-scan
    decodes every file's own facts. The call graph stays in the row
    (:data:`GRAPH_IN_ROW`): the stored facts read what the closure reached from the row."""
    row = OwnRow(*value)
    return LocalFacts(
        model_classes=tuple(row.classes),
        bindings=_pairs(row.bindings),
        notes=_pairs(row.notes),
        functions=tuple(row.functions),
        edges=GRAPH_IN_ROW,
        model_seeds=GRAPH_IN_ROW,
        data_seeds=GRAPH_IN_ROW,
        undecided_calls=_pairs(row.undecided),
        namespace_imports=tuple(row.namespace_imports),
        star_exports=tuple(row.star_exports),
        uses_keras=row.keras,
        provided=provided,
    )


def _pairs(items: list[list[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((first, second) for first, second in items)


class _GraphInRow(tuple):
    """The call graph of local facts decoded from a stored row: left in the row (read
    undecoded: ``StoredResolution.graph``). Reading it from the facts is a bug, and fails
    loudly rather than closing the graph over nothing."""

    def __iter__(self):
        raise RuntimeError("a stored row's call graph is read from the row, not its facts")

    def __repr__(self) -> str:
        return "<call graph in the stored row>"


GRAPH_IN_ROW = _GraphInRow()


class OwnRow(NamedTuple):
    """A row's own facts as stored (:func:`encode_own`), field by field."""

    classes: list
    bindings: list
    notes: list
    functions: list
    undecided: list
    namespace_imports: list
    star_exports: list
    keras: bool  # LocalFacts.uses_keras


class GraphRow(NamedTuple):
    """A row's part of the call graph as stored (:func:`encode_graph`)."""

    edges: dict
    model_seeds: list
    data_seeds: list
