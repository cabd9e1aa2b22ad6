"""``json.dumps(value, indent=n, ensure_ascii=False)``, byte for byte, a few times faster.

With ``indent`` set, the standard library leaves its C encoder for a pure-Python one,
which spent most of the time of a large JSON report (30,000 findings) hopping between
generators. Here only the nesting is walked in Python: a container whose items are all
plain scalars (a file's counts) goes whole to the C encoder, with an item separator that
carries the newline and the indentation of its depth; a list of such dicts (the
findings) goes whole too, and only the seams between the dicts are laid out afterwards.

This works because the C encoder never writes a raw newline inside a string (JSON
escapes it): every raw newline in its output is one of our separators. For the same
reason text laid out at one depth moves to another by replacing its newlines
(:func:`shift`), which lets a caller hand in a part written earlier (:class:`Raw`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any

# Exactly these types (checked with ``type``, which is quick): a subclass, such as an
# enum member, takes the general path, which writes the same text.
_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})


class Raw:
    """A value already written, as :func:`dumps` would write it at the depth where it
    sits (its nested lines indented for that depth), in ``pieces``: written out as it
    is, each piece copied once, into the result (a report's 15 MB of findings)."""

    __slots__ = ("pieces",)

    def __init__(self, pieces: Iterable[str]) -> None:
        self.pieces = pieces  # a list, or an iterator written out once (:func:`dump`)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def shift(text: str, levels: int, indent: int = 2) -> str:
    """``text`` (written by :func:`dumps`) laid out ``levels`` deeper."""
    return text.replace("\n", "\n" + " " * (indent * levels))


def _is_flat(items: Iterable[Any]) -> bool:
    return set(map(type, items)) <= _PLAIN_SCALARS


def _is_records(items: list | tuple) -> bool:
    """Non-empty dicts of plain scalars, all of them (checked in C-level passes)."""
    return (
        set(map(type, items)) == {dict}
        and all(items)
        and _is_flat(chain.from_iterable(map(dict.values, items)))
    )


class _Writer:
    """Writes one value; keeps one C encoder per depth."""

    def __init__(self, indent: int) -> None:
        self.indent = indent
        self.scalar: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False).encode
        self._encoders: dict[int, Callable[[Any], str]] = {}

    def newline(self, depth: int) -> str:
        return "\n" + " " * (self.indent * depth)

    def encoder(self, depth: int) -> Callable[[Any], str]:
        """The C encoder for a flat container at ``depth``: ``{`` + its items laid out
        one a line + ``}``; only the brackets lack their new lines."""
        encode = self._encoders.get(depth)
        if encode is None:
            separators = ("," + self.newline(depth + 1), ": ")
            encode = json.JSONEncoder(ensure_ascii=False, separators=separators).encode
            self._encoders[depth] = encode
        return encode

    def write(self, value: Any, depth: int, out: list[str]) -> None:
        if type(value) is Raw:
            out.extend(value.pieces)
            return
        if isinstance(value, dict):
            items: Any = value.values()
        elif isinstance(value, (list, tuple)):
            items = value
        else:
            out.append(self.scalar(value))
            return
        if not value:
            out.append("{}" if isinstance(value, dict) else "[]")
        elif _is_flat(items):
            text = self.encoder(depth)(value)
            out.append(text[0] + self.newline(depth + 1) + text[1:-1])
            out.append(self.newline(depth) + text[-1])
        elif not isinstance(value, dict) and _is_records(value):
            self.records(value, depth, out)
        else:
            self.nested(value, depth, out)

    def records(self, value: list | tuple, depth: int, out: list[str]) -> None:
        """A list of non-empty flat dicts, in one call of the C encoder.

        Its output lays out each dict's items already; between two dicts it writes
        ``}`` + separator + ``{``, which cannot occur inside a dict (a separator there
        is followed by a key's quote), so one replace puts the brackets on their lines.
        """
        outer, inner, item = self.newline(depth), self.newline(depth + 1), self.newline(depth + 2)
        text = self.encoder(depth + 1)(value)  # "[{" ... "}]"
        text = text[2:-2].replace("}," + item + "{", inner + "}," + inner + "{" + item)
        out.append("[" + inner + "{" + item)
        out.append(text)
        out.append(inner + "}" + outer + "]")

    def nested(self, value: Any, depth: int, out: list[str]) -> None:
        is_dict = isinstance(value, dict)
        separator = "," + self.newline(depth + 1)
        out.append("{" if is_dict else "[")
        if is_dict:
            self.items(list(value.items()), depth, separator, out)
        else:
            for index, item in enumerate(value):
                out.append(separator if index else separator[1:])
                self.write(item, depth + 1, out)
        out.append(self.newline(depth) + ("}" if is_dict else "]"))

    def items(self, pairs: list[tuple[Any, Any]], depth: int, separator: str, out: list) -> None:
        """A dict's items, each run of plain ones (string key, scalar value: a file's
        counts beside its list of names) in one call of the C encoder, which lays them
        out with the same separator."""
        index = 0
        while index < len(pairs):
            out.append(separator if index else separator[1:])
            end = index
            while end < len(pairs) and type(pairs[end][0]) is str:
                if type(pairs[end][1]) not in _PLAIN_SCALARS:
                    break
                end += 1
            if end - index > 1:
                out.append(self.encoder(depth)(dict(pairs[index:end]))[1:-1])
                index = end
                continue
            key, item = pairs[index]
            out.append(self.scalar(self.key_text(key)) + ": ")
            self.write(item, depth + 1, out)
            index += 1

    def key_text(self, key: Any) -> str:
        """A dict key as JSON writes it: strings as they are, ``1`` as ``"1"``,
        ``True`` as ``"true"``, ``None`` as ``"null"``, ``1.5`` as ``"1.5"``."""
        if isinstance(key, str):
            return key
        if key is None or isinstance(key, (int, float)):
            return self.scalar(key)
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def dumps(value: Any, indent: int = 2, end: str = "") -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False) + end``, byte for byte."""
    out: list[str] = []
    dump(value, out.append, indent, end)
    return "".join(out)


class _Sink:
    """Where :class:`_Writer` puts its pieces, handed on to ``write`` as they come: the
    writer only appends and extends, so a report is never held whole (a ``Raw`` whose
    pieces are a generator is written as the generator makes them)."""

    __slots__ = ("append",)

    def __init__(self, write: Callable[[str], object]) -> None:
        self.append = write

    def extend(self, pieces: Iterable[str]) -> None:
        for piece in pieces:
            self.append(piece)


def dump(value: Any, write: Callable[[str], object], indent: int = 2, end: str = "") -> None:
    """:func:`dumps` handed to ``write`` piece by piece (the same text, in order)."""
    sink: Any = _Sink(write)
    _Writer(indent).write(value, 0, sink)
    sink.append(end)


def dumps_items(values: list | tuple, depth: int, indent: int = 2) -> str:
    """The items of the list ``values`` as :func:`dumps` lays them out in a list at
    ``depth``, with the separators between them but without the brackets and the line
    breaks next to them ("" for no items): parts that :func:`join_items` joins into a
    list, so each part can be written once and kept."""
    if not values:
        return ""
    text = dumps(values, indent)  # "[" newline item "," newline ... item newline "]"
    return shift(text[2 + indent : -2], depth, indent)


def join_items(parts: Iterable[str], depth: int, indent: int = 2) -> Raw:
    """A list at ``depth`` from parts made by :func:`dumps_items` (at that depth): what
    :func:`dumps` writes for the list of all their items, as pieces to write out."""
    return Raw(list(_joined(parts, depth, indent)))


def join_items_lazily(parts: Iterable[str], depth: int, indent: int = 2) -> Raw:
    """:func:`join_items` with each part asked for as the list is written (:func:`dump`
    of a report holds one part at a time); the result is written once."""
    return Raw(_joined(parts, depth, indent))


def _joined(parts: Iterable[str], depth: int, indent: int) -> Iterator[str]:
    inner = "\n" + " " * (indent * (depth + 1))
    opened = False
    for part in parts:
        if not part:
            continue
        yield "," + inner if opened else "[" + inner
        opened = True
        yield part
    yield "\n" + " " * (indent * depth) + "]" if opened else "[]"
