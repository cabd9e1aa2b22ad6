"""The parent keeps one copy of each string of the project data its workers send
(run/shared_strings.py): values stay equal, only copies are shared."""

from __future__ import annotations

import pickle
from collections import namedtuple

from kmigrate.engine.module_facts import LocalFacts, LocalFactsFrom
from kmigrate.engine.run_data import FileReport
from kmigrate.run.runner import _Collected
from kmigrate.run.shared_strings import share_strings

Pair = namedtuple("Pair", "module name")


def _crossed(value):
    """``value`` as another process's pickle gives it: new string objects."""
    return pickle.loads(pickle.dumps(value))


def _entry(name: str) -> dict:
    return {
        "imports": [["tf", "tensorflow", None, 0]],
        "classes": {name: {"bases": ["keras.layers.Layer"], "methods": {"call": ["tf.nn.relu"]}}},
        "names": frozenset({"tf", name}),
        "pairs": (("a", 1), ("b", None)),
    }


def test_equal_values_share_one_copy_of_each_string() -> None:
    table: dict[str, str] = {}
    first = share_strings(_crossed(_entry("Block")), table)
    second = share_strings(_crossed(_entry("Block")), table)
    assert first == second == _entry("Block")
    base_a = first["classes"]["Block"]["bases"][0]
    base_b = second["classes"]["Block"]["bases"][0]
    assert base_a == "keras.layers.Layer" and base_a is base_b
    assert first["imports"][0][1] is second["imports"][0][1]
    assert next(iter(first["classes"])) is next(iter(second["classes"]))  # keys too
    assert type(first["names"]) is frozenset and type(first["pairs"]) is tuple


def test_frozen_dataclasses_and_named_tuples_keep_their_types_and_values() -> None:
    local = LocalFactsFrom(
        LocalFacts(model_classes=("Block",), edges=(("Block.call", (("m", "f"),)),)),
        modules=(("pkg.layers", ("pkg/layers.py",)),),
        outside=frozenset({"numpy"}),
        patches_read=(),
    )
    table: dict[str, str] = {}
    shared = share_strings(_crossed(local), table)
    again = share_strings(_crossed(local), table)
    assert shared == local and type(shared.local) is LocalFacts
    assert shared.local.model_classes[0] is again.local.model_classes[0]
    pair = share_strings(_crossed(Pair("m", "f")), table)
    assert pair == Pair("m", "f") and type(pair) is Pair and pair.module is table["m"]


def test_other_objects_pass_through_untouched() -> None:
    marker = object()
    assert share_strings(marker, {}) is marker
    assert share_strings(None, {}) is None and share_strings(3, {}) == 3


def test_the_parent_shares_the_strings_of_the_reports_it_gathers() -> None:
    collected = _Collected(None)
    try:
        for path in ("pkg/a.py", "pkg/b.py"):
            report = FileReport(path, [], uses_tensorflow=True, index_entry=_entry("Block"))
            collected.add(_crossed(report))
    finally:
        collected.close()
    a, b = collected.reports
    assert a.index_entry == b.index_entry == _entry("Block")
    assert a.index_entry["imports"][0][0] is b.index_entry["imports"][0][0]
