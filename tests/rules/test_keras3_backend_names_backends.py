"""The `keras.backend` names kmigrate leaves alone in Keras 3 code are the very
functions its ops catalog rewrites the Keras 2 spellings to (`K.floatx` ->
`keras.config.floatx`): checked in Keras 3 itself, since scan never imports Keras."""

from __future__ import annotations

import importlib

import pytest

from kmigrate.rules.common.catalog.catalog_rule import KERAS3_BACKEND_NAMES
from kmigrate.rules.ops_catalog import lookup

pytestmark = pytest.mark.backends


def _resolve(dotted: str) -> object:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("name", sorted(KERAS3_BACKEND_NAMES))
def test_keras_backend_name_is_the_catalog_target(name: str) -> None:
    target = KERAS3_BACKEND_NAMES[name]
    entry = lookup("K." + name.rpartition(".")[2])
    assert entry is not None and entry.target == target
    assert _resolve(name) is _resolve(target)
