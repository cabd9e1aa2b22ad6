"""A multi-input layer called on one list of tensors gets a list of shapes in `build` and
`compute_output_shape`: TensorShapes in Keras 2, tuples in Keras 3, so
`input_shape[0].as_list()` (and `.rank`, `.ndims`, `.dims`, `.is_fully_defined()` of any
shape parameter) raised AttributeError on every backend with no finding. KM204 rewrites
them to `list(input_shape[0])`, `len(...)`, `all(d is not None for d in ...)` (exact: the
same dimensions, None where unknown);
tests/rules/test_multi_input_layers_backends.py runs such layers on the three backends."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text

LAYER = (
    "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
    "class Pair(keras.layers.Layer):\n"
    "    def {method}(self, input_shape):\n"
    "        dims = {expr}\n"
    "        return dims\n"
)


@pytest.mark.parametrize("method", ["build", "compute_output_shape"])
@pytest.mark.parametrize(
    ("expr", "after"),
    [
        ("input_shape[0].as_list()", "list(input_shape[0])"),
        ("input_shape[-1].as_list()[1:]", "list(input_shape[-1])[1:]"),
        ("input_shape.as_list()", "list(input_shape)"),
        ("input_shape[1].rank", "len(input_shape[1])"),
        ("input_shape.ndims - 1", "len(input_shape) - 1"),
        ("input_shape[0].dims", "list(input_shape[0])"),
        ("input_shape[0].is_fully_defined()", "all(d is not None for d in input_shape[0])"),
    ],
)
def test_a_shape_of_the_list_as_list_becomes_a_list(method: str, expr: str, after: str) -> None:
    source = LAYER.format(method=method, expr=expr)
    (found,) = [f for f in scan_text(source) if f.rule == "KM204"]
    assert found.fix is not None, found.message
    assert f"dims = {after}\n" in apply_to_text(source)


@pytest.mark.parametrize(
    ("method", "expr"),
    [
        ("call", "input_shape[0].as_list()"),  # not a shape parameter
        ("build", "input_shape[i].as_list()"),  # not a literal index
        ("build", "other[0].as_list()"),
        ("call", "input_shape.rank"),
        ("build", "other.ndims"),
        ("call", "input_shape.is_fully_defined()"),
    ],
)
def test_other_as_list_receivers_are_not_guessed(method: str, expr: str) -> None:
    source = LAYER.format(method=method, expr=expr)
    assert [f for f in scan_text(source) if f.rule == "KM204" and f.fix] == []
