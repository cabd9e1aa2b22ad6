"""Source text of a node with some of its sub-nodes already rewritten.

A rule that replaces a whole expression from its source text (``K.set_value(x, v)`` ->
``x.assign(v)``) would copy an inner call another rewrite also changes, and leave that
rewrite for a second `apply` round. Splicing the inner rewrites into the text makes it
one round, with the same result.
"""

from __future__ import annotations

from kmigrate.engine import ModuleInfo, Span


def offset_in(lines: list[str], origin: Span, line: int, column: int) -> int:
    """Character offset of (line, column) inside the text that starts at ``origin``."""
    if line == origin.line:
        return column - origin.column
    total = len(lines[origin.line - 1]) - origin.column
    total += sum(len(lines[i - 1]) for i in range(origin.line + 1, line))
    return total + column


def _inside(inner: Span, outer: Span) -> bool:
    return (inner.line, inner.column) >= (outer.line, outer.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (outer.end_line, outer.end_column)


def text_with(module: ModuleInfo, span: Span, replacements: list[tuple[Span, str]]) -> str:
    """The source at ``span`` with each ``(inner span, text)`` that lies inside it put in
    place (the others are ignored). The inner spans must not overlap."""
    text = module.segment(span)
    inside = sorted((r for r in replacements if _inside(r[0], span)), key=lambda r: r[0])
    for inner, new in reversed(inside):  # from the end: earlier offsets stay valid
        start = offset_in(module.lines, span, inner.line, inner.column)
        stop = offset_in(module.lines, span, inner.end_line, inner.end_column)
        text = text[:start] + new + text[stop:]
    return text
