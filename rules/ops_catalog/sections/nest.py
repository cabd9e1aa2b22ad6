"""Ops catalog section "Nested structures (keras.tree)": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import op

NEST = [
    op("tf.nest.flatten", "structure, expand_composites=False", "keras.tree.flatten", "structure"),
    op(
        "tf.nest.map_structure",
        "func, *structure, check_types=True, expand_composites=False",
        "keras.tree.map_structure",
        "func, *structure",
        accept={"check_types": [True]},
    ),
    op(
        "tf.nest.pack_sequence_as",
        "structure, flat_sequence, expand_composites=False",
        "keras.tree.pack_sequence_as",
        "structure, flat_sequence",
    ),
    op("tf.nest.is_nested", "seq", "keras.tree.is_nested"),
    op(
        "tf.nest.assert_same_structure",
        "nest1, nest2, check_types=True, expand_composites=False",
        "keras.tree.assert_same_structure",
        "nest1, nest2",
        accept={"check_types": [True]},
    ),
]
