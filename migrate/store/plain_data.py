"""Shape checks for plain data read back from the signed stores (JSON lists, strings,
string pairs): anything else raises ``ValueError``, which a store's reader turns into a
miss. A signed value can still be old or hand-edited; it is never trusted as it is."""

from __future__ import annotations

from typing import Any


def checked_list(value: Any) -> list:
    if type(value) is not list:
        raise ValueError("not a list")
    return value


def checked_text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("not a string")
    return value


def checked_line(value: Any) -> int:
    """A line number, or 0 for none."""
    if type(value) is not int or value < 0:
        raise ValueError("not a line")
    return value


def checked_pair(value: Any) -> tuple[str, str]:
    first, second = checked_list(value)
    return checked_text(first), checked_text(second)
