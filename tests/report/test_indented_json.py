"""The JSON report's encoder must write exactly what ``json.dumps(indent=2)`` writes."""

from __future__ import annotations

import enum
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmigrate.report.indented_json import Raw, dumps, dumps_items, join_items, shift


class Colour(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


def reference(value: object, indent: int = 2) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False)


FINDING = {
    "rule": "KM101",
    "severity": "warning",
    "message": 'use `keras` — "quoted" \\ back\nslash},\n      {"x": 1}',
    "line": 12,
    "fixable": True,
    "symbol": None,
    "score": 97.5,
}

CASES = [
    {},
    [],
    (),
    "",
    0,
    None,
    {"a": {}, "b": [], "c": [{}], "d": [[]], "e": [{}, {"x": 1}]},
    {"version": 1, "summary": {"by_rule": {}, "rules": [], "nested": {"deep": [1, [2, [3]]]}}},
    {"findings": [FINDING, dict(FINDING, rule="KM102", extra=1), FINDING]},
    {"findings": [FINDING, {}, FINDING]},  # an empty dict among records
    {"findings": [FINDING, {"nested": [1]}]},  # a record that is not flat
    {"findings": [FINDING, [1, 2]]},
    [[1, 2], [3, 4], []],
    {"unicode": "héllo ✓ 𝔘 \u2028 \u2029 \x00 \x1f \ud7ff", "ключ": "значение"},
    {"floats": [0.1 + 0.2, -0.0, 1e300, 5e-324, 1.0, math.inf, -math.inf, math.nan]},
    {"ints": [0, -1, 2**70, True, False]},
    {1: "int key", 2.5: "float key", False: "bool", None: "none", math.nan: "nan"},
    {Colour.RED: Colour.RED, Level.HIGH: Level.HIGH, "list": [Colour.RED, Level.HIGH]},
    {"tuple": (1, ("a", {"b": ()})), "records": ({"a": 1}, {"a": 2})},
    [{"k": "},\n    {"}, {"k": "v"}],
]


@pytest.mark.parametrize("value", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("indent", [2, 0, 4])
def test_same_text_as_json_dumps(value: object, indent: int) -> None:
    assert dumps(value, indent=indent) == reference(value, indent=indent)


def test_unsupported_values_and_keys_raise_like_json() -> None:
    for value in ({"a": object()}, [{1, 2}], {(1, 2): "tuple key"}, {"r": [{"a": object()}]}):
        with pytest.raises(TypeError):
            reference(value)
        with pytest.raises(TypeError):
            dumps(value)


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
keys = st.text() | st.integers() | st.booleans() | st.none()
records = st.lists(st.dictionaries(st.text(max_size=3), scalars, min_size=1), max_size=4)
values = st.recursive(
    scalars | records,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(values)
def test_random_values(value: object) -> None:
    assert dumps(value) == reference(value)


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(
    st.lists(values, max_size=6),
    st.integers(min_value=0, max_value=6),
    st.integers(min_value=0, max_value=3),
    st.sampled_from([0, 2, 4]),
)
def test_items_written_apart_join_into_the_list(items, cut, depth, indent) -> None:
    """A warm re-scan joins each file's findings, written when they were cached."""
    parts = [dumps_items(items[:cut], depth, indent), dumps_items(items[cut:], depth, indent)]
    joined = join_items(parts, depth, indent).text
    assert joined == shift(reference(items, indent), depth, indent)
    parts = [dumps_items(items[:cut], 1, indent), dumps_items(items[cut:], 1, indent)]
    whole = {"version": 1, "items": join_items(parts, 1, indent), "last": [Raw(["2"])]}
    expected = reference({"version": 1, "items": items, "last": [2]}, indent)
    assert dumps(whole, indent, end="\n") == expected + "\n"
