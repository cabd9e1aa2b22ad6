"""Small LibCST helpers the editor modules share: memoised parsing of the snippets
rules write, whitespace, and what a docstring statement looks like."""

from __future__ import annotations

import functools

import libcst as cst

# LibCST's parse functions, once per text: rules write the same few callees, values,
# ``__init__`` statements and imports over and over (each parse call costs about a
# millisecond of set-up), and LibCST nodes are immutable, so one node serves all.
expression = functools.lru_cache(maxsize=4096)(cst.parse_expression)
statement = functools.lru_cache(maxsize=4096)(cst.parse_statement)


def ws(text: str) -> cst.SimpleWhitespace:
    return cst.SimpleWhitespace(text)


def is_bare_name(stmt: cst.BaseStatement, name: str) -> bool:
    """Whether ``stmt`` is a line holding only the name ``name`` (a marker statement the
    editors put into a module they parse and find again)."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.Name)
        and stmt.body[0].value.value == name
    )


def is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
