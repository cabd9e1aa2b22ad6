"""Where every node of a LibCST tree is, in one pass that also finds the edit targets.

LibCST's ``PositionProvider`` computes the same ranges with a second generic visit of
the tree and a metadata wrapper; the editor needs them for every module it edits, so
this is that pass written for speed (:class:`LocatingState`, a ``CodegenState`` that
tracks lines and columns as the code is generated). It is the only code that relies
on a LibCST internal (``libcst._nodes.internal.CodegenState``): tests compare its
ranges with ``PositionProvider``'s.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

import libcst as cst
from libcst._nodes.internal import CodegenState

LINE_BREAK = re.compile(r"\r\n?|\n")  # how LibCST's position pass counts lines

Range = tuple[int, int, int, int]  # line, column, end line, end column: a Span's key


class LocatingState(CodegenState):
    """LibCST's position pass (``PositionProvider``: the same ranges, the same rules),
    written for speed: plain tuples, no regular expression for tokens without a line
    break, no generator per expression. On the way it notes the targets it meets and
    every node that holds one."""

    __slots__ = (
        "line",
        "column",
        "starts",
        "nodes",
        "ranges",
        "spans",
        "class_lines",
        "targets",
        "on_path",
    )

    def start(self, spans: Container[Range], class_lines: Container[int]) -> None:
        """``spans``: the targets' ranges; ``class_lines``: the lines of the class
        names a ``ClassEdit`` points at."""
        self.line, self.column = 1, 0
        self.starts: list[tuple[int, int]] = []
        self.nodes: list[cst.CSTNode] = []
        self.ranges: dict[int, Range] = {}  # by id(node): ints hash in C, nodes in Python
        self.spans = spans
        self.class_lines = class_lines
        self.targets: set[int] = set()
        self.on_path: set[int] = set()

    def _advance(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = LINE_BREAK.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append((self.line, self.column))
        self.nodes.append(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self.starts.pop()
        self.nodes.pop()
        ranges = self.ranges
        key = id(node)
        where = ranges.get(key)
        if where is None:  # else a syntactic position was recorded: it wins
            where = ranges[key] = (line, column, self.line, self.column)
        if where in self.spans or (
            node.__class__ is cst.ClassDef
            and ranges.get(id(node.name), (0,))[0] in self.class_lines
        ):
            self.targets.add(key)
            for ancestor in reversed(self.nodes):
                if id(ancestor) in self.on_path:
                    break
                self.on_path.add(id(ancestor))

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """``PositionProvidingCodegenState.record_syntactic_position`` as a plain context
    manager: a node's range without its parentheses and whitespace, or hoisted from
    the child nodes LibCST names."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: LocatingState, node, start_node, end_node) -> None:  # noqa: ANN001
        self.state, self.node = state, node
        self.start_node, self.end_node = start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc_info: object) -> bool:
        state = self.state
        ranges = state.ranges
        start = ranges[id(self.start_node)][:2] if self.start_node is not None else self.start
        end = (
            ranges[id(self.end_node)][2:]
            if self.end_node is not None
            else (state.line, state.column)
        )
        ranges[id(self.node)] = (*start, *end)
        return False


@dataclass
class Located:
    """Where a round's edits are in one LibCST tree: every node's range (positions as
    ``PositionProvider`` gives them, without its extra pass over the tree), the nodes
    a plan points at, and the nodes that hold one of them (the only ones visited)."""

    ranges: dict[int, Range]  # all three by id(node), the tree keeping the nodes alive
    targets: set[int]
    on_path: set[int]
