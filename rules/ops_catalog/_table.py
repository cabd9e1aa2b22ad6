"""The catalog assembled from its sections, and the index by symbol that ``scan`` reads."""

from __future__ import annotations

import functools

from kmigrate.rules.ops_catalog._model import OpEntry
from kmigrate.rules.ops_catalog.sections.arrays import ARRAYS
from kmigrate.rules.ops_catalog.sections.binary import BINARY
from kmigrate.rules.ops_catalog.sections.control_flow import CONTROL_FLOW
from kmigrate.rules.ops_catalog.sections.conv_pool import CONV_POOL
from kmigrate.rules.ops_catalog.sections.creation import CREATION
from kmigrate.rules.ops_catalog.sections.dtypes_and_shapes import DTYPES_AND_SHAPES
from kmigrate.rules.ops_catalog.sections.elementwise import ELEMENTWISE
from kmigrate.rules.ops_catalog.sections.graph_and_state import GRAPH_AND_STATE
from kmigrate.rules.ops_catalog.sections.image import IMAGE
from kmigrate.rules.ops_catalog.sections.linalg import LINALG
from kmigrate.rules.ops_catalog.sections.nest import NEST
from kmigrate.rules.ops_catalog.sections.nn import NN
from kmigrate.rules.ops_catalog.sections.reductions import REDUCTIONS
from kmigrate.rules.ops_catalog.sections.signal import SIGNAL

SECTIONS: dict[str, list[OpEntry]] = {
    "Element-wise math": ELEMENTWISE,
    "Binary and comparison ops": BINARY,
    "Reductions, indices, segments": REDUCTIONS,
    "Shapes and indexing": ARRAYS,
    "Creating tensors": CREATION,
    "Dtypes, shapes, config": DTYPES_AND_SHAPES,
    "Neural-network ops": NN,
    "Convolution and pooling": CONV_POOL,
    "Linear algebra": LINALG,
    "Images (keras.ops.image)": IMAGE,
    "Signal processing": SIGNAL,
    "Control flow": CONTROL_FLOW,
    "Nested structures (keras.tree)": NEST,
    "Graph, state and TensorFlow-only types": GRAPH_AND_STATE,
}


def _with_sections() -> tuple[OpEntry, ...]:
    entries = []
    for title, section in SECTIONS.items():
        for entry in section:
            object.__setattr__(entry, "section", title)
            entries.append(entry)
    return tuple(entries)


CATALOG: tuple[OpEntry, ...] = _with_sections()


@functools.lru_cache(maxsize=1)
def by_symbol() -> dict[str, OpEntry]:
    """Every spelling (canonical symbol) -> its entry. Duplicates are a bug."""
    index: dict[str, OpEntry] = {}
    for entry in CATALOG:
        for symbol in entry.symbols:
            if symbol in index:
                raise ValueError(f"{symbol} is in the ops catalog twice")
            index[symbol] = entry
    return index


def lookup(symbol: str) -> OpEntry | None:
    """The entry for a canonical symbol (``tf.reduce_mean``, ``K.mean``), if any."""
    return by_symbol().get(symbol)


def call_symbols() -> frozenset[str]:
    return frozenset(by_symbol())
