"""Putting new import lines into a module's import block where isort would.

A new ``import keras`` joins the third-party block in order (before ``import numpy``
in ``import keras`` / ``import numpy`` / ``import tensorflow as tf``); a section the
module lacks (no third-party import yet) becomes a block of its own, one blank line
from its neighbours. Existing lines are never reordered: a block that was unsorted
stays as it was, the new line only goes before the first line that sorts after it.
Comments above an existing import stay with that import.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from kmigrate.engine.cst_nodes import statement
from kmigrate.engine.import_layout import ImportLayout
from kmigrate.engine.model import EnsureImport
from kmigrate.engine.notebook import MASKED_PREFIX


@dataclass(frozen=True)
class _Entry:
    """One import line of the top block: where it is, its section and sort key."""

    position: int
    section: int
    key: tuple


def _dotted(node: cst.BaseExpression | None) -> str:
    return "" if node is None else cst.Module(body=[]).code_for_node(node)


def _entry(position: int, stmt: cst.BaseStatement, layout: ImportLayout) -> _Entry | None:
    if not isinstance(stmt, cst.SimpleStatementLine) or not stmt.body:
        return None
    first = stmt.body[0]
    if isinstance(first, cst.Import):
        module = _dotted(first.names[0].name)
        if module.startswith(MASKED_PREFIX):
            return None  # a notebook's masked `%magic` line: not an import to sort by
        return _Entry(position, layout.section(module), layout.sort_key(module, False))
    if isinstance(first, cst.ImportFrom):
        module = _dotted(first.module)
        level = len(first.relative)
        name = "" if isinstance(first.names, cst.ImportStar) else _dotted(first.names[0].name)
        return _Entry(position, layout.section(module, level), layout.sort_key(module, True, name))
    return None


def _text(wanted: EnsureImport) -> str:
    if wanted.name is not None:
        return f"from {wanted.module} import {wanted.name}"
    if wanted.asname is not None:
        return f"import {wanted.module} as {wanted.asname}"
    return f"import {wanted.module}"


_BLANK = cst.EmptyLine()


def _split_blank_prefix(
    lines: Sequence[cst.EmptyLine],
) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """The blank lines before a statement's first comment, and the rest."""
    lines = list(lines)
    cut = 0
    while cut < len(lines) and lines[cut].comment is None:
        cut += 1
    return lines[:cut], lines[cut:]


def place_imports(
    body: list[cst.BaseStatement],
    end: int,
    add: Sequence[EnsureImport],
    layout: ImportLayout,
    new_block: bool = True,
) -> int:
    """Insert ``add`` into ``body`` (in place) within its import block ``body[:end]``;
    returns the first position an import went to. ``new_block``: the module had no
    import before, so the lines added make its import block, a blank line from the code
    (where imports were, the author's spacing stays)."""
    first_position = len(body)
    ordered = sorted(add, key=lambda e: layout.sort_key(e.module, e.name is not None, e.name or ""))
    for wanted in ordered:
        if wanted.name is not None and _joined(body, end, wanted, layout):
            continue
        entries = [e for i in range(end) if (e := _entry(i, body[i], layout)) is not None]
        # a relative import (a helper module beside the file) is isort's local section
        level = len(wanted.module) - len(wanted.module.lstrip("."))
        section = layout.section(wanted.module.lstrip("."), level)
        key = layout.sort_key(wanted.module, wanted.name is not None, wanted.name or "")
        new = statement(_text(wanted) + "\n")
        assert isinstance(new, cst.SimpleStatementLine)
        position = _position(body, entries, section, key, new, end, new_block)
        body.insert(position[0], position[1])
        end += 1
        first_position = min(first_position, position[0])
    return first_position


def _joined(
    body: list[cst.BaseStatement], end: int, wanted: EnsureImport, layout: ImportLayout
) -> bool:
    """isort merges ``from m import a`` lines: a new name of ``m`` joins the module's
    one-line ``from m import ...`` (no parentheses, no comment) in name order, when the
    line stays within the project's length. Whether it did. A relative module
    (``from ._keras2_compat import a``, the helpers' import inside a package) merges
    the same way, with its dots."""
    for index in range(end):
        stmt = body[index]
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        node = stmt.body[0]
        if (
            not isinstance(node, cst.ImportFrom)
            or isinstance(node.names, cst.ImportStar)
            or node.lpar is not None
            or _from_module(node) != wanted.module
            or stmt.trailing_whitespace.comment is not None
            or any(a.asname is not None for a in node.names)  # isort keeps `as` apart
        ):
            continue
        names = [*node.names, cst.ImportAlias(name=cst.Name(wanted.name))]
        names.sort(key=lambda a: layout.name_key(_dotted(a.name)))
        spaced = [
            a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for a in names[:-1]
        ]
        merged = stmt.with_changes(
            body=[
                node.with_changes(
                    names=[*spaced, names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
                )
            ]
        )
        code = cst.Module(body=[]).code_for_node(merged.with_changes(leading_lines=[]))
        if len(code.rstrip("\r\n")) > layout.line_length:
            return False
        body[index] = merged
        return True
    return False


def _from_module(node: cst.ImportFrom) -> str:
    """The module of ``from <module> import ...`` as written, relative dots included."""
    return "." * len(node.relative) + _dotted(node.module)


def _position(
    body: list[cst.BaseStatement],
    entries: list[_Entry],
    section: int,
    key: tuple,
    new: cst.SimpleStatementLine,
    end: int,
    new_block: bool = False,
) -> tuple[int, cst.SimpleStatementLine]:
    """Where ``new`` goes and the line as inserted (its blank lines); may change the
    blank lines of the statement it goes before."""
    same = [e for e in entries if e.section == section]
    if same:
        later = [e for e in same if e.key > key]
        if later:
            return _before(body, later[0].position, new, blank_after=False)
        return same[-1].position + 1, new
    lower = [e for e in entries if e.section < section]
    if lower:
        at = lower[-1].position + 1
        if at < len(body) and _entry(at, body[at], ImportLayout()) is not None:  # an import
            _ensure_blank_before(body, at)
        return at, new.with_changes(leading_lines=[_BLANK])
    higher = [e for e in entries if e.section > section]
    if higher:
        return _before(body, higher[0].position, new, blank_after=True)
    if new_block and end < len(body) and not body[end].leading_lines:
        _ensure_blank_before(body, end)  # a blank line between the imports and the code
    return end, new


def _before(
    body: list[cst.BaseStatement], at: int, new: cst.SimpleStatementLine, blank_after: bool
) -> tuple[int, cst.SimpleStatementLine]:
    """``new`` goes before ``body[at]``, taking the blank lines that separated it from
    what came before; its comments stay with it."""
    blank, rest = _split_blank_prefix(body[at].leading_lines)
    body[at] = body[at].with_changes(leading_lines=([_BLANK] if blank_after else []) + rest)
    return at, new.with_changes(leading_lines=blank)


def _ensure_blank_before(body: list[cst.BaseStatement], at: int) -> None:
    blank, rest = _split_blank_prefix(body[at].leading_lines)
    if not blank:
        body[at] = body[at].with_changes(leading_lines=[_BLANK, *rest])


def import_key(node: ast.stmt) -> str:
    """What identifies an import line whatever its spacing: its ``ast`` dump."""
    return ast.dump(node)


def _cst_import_key(stmt: cst.BaseStatement) -> str | None:
    """:func:`import_key` of a one-import line without comments, else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    if not isinstance(stmt.body[0], (cst.Import, cst.ImportFrom)):
        return None
    if stmt.trailing_whitespace.comment is not None or any(
        line.comment is not None for line in stmt.leading_lines
    ):
        return None  # a commented line stays where its author put it
    code = cst.Module(body=[]).code_for_node(stmt.body[0])
    return import_key(ast.parse(code).body[0])


def replace_imports(
    body: list[cst.BaseStatement], end: int, moved: frozenset[str], layout: ImportLayout
) -> int:
    """Sort the rewritten import lines (``moved``, by :func:`import_key`) of the block
    ``body[:end]`` again where isort puts their new module; returns the first position
    a line went to (``len(body)`` when none moved)."""
    first_position = len(body)
    if not moved:
        return first_position
    for wanted in sorted(moved):
        found = [i for i in range(end) if _cst_import_key(body[i]) == wanted]
        others = [i for i in range(end) if i not in found[:1] and _entry(i, body[i], layout)]
        if not found or not others:
            continue  # the only import line: it stays where it is
        stmt = body.pop(found[0])
        _hand_blank_lines_on(body, found[0], stmt)
        line = stmt.body[0]  # type: ignore[attr-defined]
        if isinstance(line, cst.Import):
            module, level, is_from = _dotted(line.names[0].name), 0, False
        else:
            module, level, is_from = _dotted(line.module), len(line.relative), True
            if _one_plain_name(line) and _joined(
                body, end - 1, EnsureImport(module, _dotted(line.names[0].name)), layout
            ):
                end -= 1  # merged into the module's line, as isort does
                continue
        entries = [e for i in range(end - 1) if (e := _entry(i, body[i], layout)) is not None]
        first = (
            ""
            if is_from is False or isinstance(line.names, cst.ImportStar)
            else _dotted(line.names[0].name)
        )
        section, key = layout.section(module, level), layout.sort_key(module, is_from, first)
        bare = stmt.with_changes(leading_lines=[])
        position, placed = _position(body, entries, section, key, bare, end - 1)
        body.insert(position, placed)
        first_position = min(first_position, position)
    return first_position


def _one_plain_name(node: cst.ImportFrom) -> bool:
    return (
        not node.relative
        and not isinstance(node.names, cst.ImportStar)
        and len(node.names) == 1
        and node.names[0].asname is None
        and node.lpar is None
    )


def _hand_blank_lines_on(body: list[cst.BaseStatement], at: int, removed) -> None:
    """The blank lines before a removed line go to the statement that took its place."""
    blank, _ = _split_blank_prefix(removed.leading_lines)
    if blank and at < len(body) and not _split_blank_prefix(body[at].leading_lines)[0]:
        body[at] = body[at].with_changes(leading_lines=[*blank, *body[at].leading_lines])
