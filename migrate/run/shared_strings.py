"""One copy of each string in the project data the parent gathers from its workers.

A worker's report crosses to the parent pickled, and unpickling makes a new object of
every string in it: the index entry and local facts of 8,161 files of a 10k-file tree
held ~490 strings each in the parent, one distinct string in six (names such as
``tf``, ``keras.layers.Dense``, ``self.build`` recur in every file), ~130 MB held
through the project's resolution, the run's peak. Sharing them changes no value (the
strings are equal, and nothing compares them by identity), only how many copies exist.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def share_strings(value: Any, table: dict[str, str]) -> Any:
    """A copy of ``value`` with every string in it replaced by ``table``'s copy of it
    (added when new): through dicts, lists, tuples (named ones too), frozensets and
    dataclasses (frozen ones included); numbers, None and other objects as they are."""
    kind = type(value)
    if kind is str:
        return table.setdefault(value, value)
    if kind is dict:
        return {share_strings(k, table): share_strings(v, table) for k, v in value.items()}
    if kind is list:
        return [share_strings(item, table) for item in value]
    if kind is tuple:
        return tuple([share_strings(item, table) for item in value])
    if kind is frozenset:
        return frozenset([share_strings(item, table) for item in value])
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return kind(*[share_strings(item, table) for item in value])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _shared_dataclass(value, table)
    return value


def _shared_dataclass(value: Any, table: dict[str, str]) -> Any:
    """A copy of the dataclass instance ``value`` with its fields' strings shared (set
    as ``dataclasses.replace`` would not: fields with ``init=False`` are kept too)."""
    copy = object.__new__(type(value))
    state = getattr(value, "__dict__", None)
    if state is None:  # slots
        for field in dataclasses.fields(value):
            object.__setattr__(copy, field.name, share_strings(getattr(value, field.name), table))
        return copy
    for name, item in state.items():
        object.__setattr__(copy, name, share_strings(item, table))
    return copy
