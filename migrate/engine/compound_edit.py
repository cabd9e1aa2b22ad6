"""Replacing a whole compound statement (a ``for`` loop with its body...) by new statements.

A rule that turns a loop into a function and a call (``for i in ...: body`` into ``def
step(...): body; return ...`` and ``... = keras.ops.scan(step, ...)``) hands over the new
statements as text, with one line ``{body}`` standing for the old statement's body. The
body is not copied as text: its statements are the edited nodes themselves, so the
edits other plans made inside it (a ``tf.tanh`` become ``keras.ops.tanh``) and its
comments survive; LibCST indents them as the block they land in. The comments around the
old statement stay too: the lines above it go above the first new statement, a comment
on its header goes on the header of the block that receives the body, the comments that
close its body close that block.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from kmigrate.engine.cst_nodes import is_bare_name

BODY = "{body}"  # the line of a compound edit's text that stands for the old body
_MARKER = "__kmigrate_compound_body__"


def compound_replacement(old: cst.BaseCompoundStatement, text: str) -> list[cst.BaseStatement]:
    """The statements of ``text`` in place of ``old`` (already edited inside), its body
    where ``text`` has the line ``{body}``. Raises ``ValueError`` where that cannot be
    done exactly (a body on the header's line, ``{body}`` not alone in its line or used
    twice). A ``text`` that starts with an empty line asks for a blank line before the
    new statements (a nested ``def`` among statements, as ruff and black format it)."""
    blank_before = text.startswith("\n")
    lines = text.lstrip("\n").split("\n")
    marked = [line for line in lines if line.strip() == BODY]
    if text.count(BODY) != len(marked) or len(marked) > 1:
        raise ValueError("`{body}` must stand alone on one line, at most once")
    if marked and not isinstance(old.body, cst.IndentedBlock):
        raise ValueError("the statement's body is on its header's line")
    source = "\n".join(line.replace(BODY, _MARKER) for line in lines)
    new = list(cst.parse_module(source + "\n").body)
    if marked:
        receiver = _BodyReceiver(old.body)  # type: ignore[arg-type]
        new = [stmt.visit(receiver) for stmt in new]  # type: ignore[misc]
        if receiver.placed != 1:
            raise ValueError("`{body}` is not a statement of an indented block")
    # Blank lines of the text carry no indentation (no trailing whitespace where they land).
    new = [stmt.with_changes(leading_lines=_unindented(stmt.leading_lines)) for stmt in new]
    if new:
        leading = list(old.leading_lines)
        if blank_before and not (leading and _is_blank(leading[0])):
            leading.insert(0, cst.EmptyLine(indent=False))
        new[0] = new[0].with_changes(leading_lines=leading)
    return new


def _is_blank(line: cst.EmptyLine) -> bool:
    return line.comment is None


def _unindented(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    return [line.with_changes(indent=False) if _is_blank(line) else line for line in lines]


class _BodyReceiver(cst.CSTTransformer):
    """Puts the old body's statements where the marker statement is, the old header's
    comment on the receiving block's header and the old footer after its statements."""

    def __init__(self, body: cst.IndentedBlock) -> None:
        super().__init__()
        self.body = body
        self.placed = 0

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        statements: list[cst.BaseStatement] = []
        found = False
        for stmt in updated_node.body:
            if is_bare_name(stmt, _MARKER):
                statements.extend(self.body.body)
                found = True
            else:
                statements.append(stmt)
        if not found:
            return updated_node
        self.placed += 1
        header = updated_node.header
        if self.body.header.comment is not None and header.comment is None:
            header = self.body.header
        return updated_node.with_changes(
            body=statements, header=header, footer=[*updated_node.footer, *self.body.footer]
        )
