"""Editing that pays for what it edits: LibCST sees only the statements that change.

``kmigrate.engine.editor`` parses the whole module with LibCST, computes positions for every
node and visits all of them, for a handful of edits: about a second of CPU for a
few-hundred-line file. Here the stdlib ``ast`` (many times cheaper) finds, for each
edit, the smallest statement that holds it and stands alone on its lines; only those
*pieces* are parsed with LibCST, run through the same ``PlanTransformer`` and spliced
back between the untouched lines. Imports are their own edit: only the top of the
module, up to the last import that changes, is parsed again.

The output is the whole-module editor's, byte for byte (``tests/engine/test_splice_editor.py``
compares the two); where that cannot be assured cheaply (mixed line endings, an edit
outside any stand-alone statement, a piece LibCST will not parse alone) the
whole-module editor does the work.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from kmigrate.engine import editor
from kmigrate.engine.cst_nodes import is_bare_name
from kmigrate.engine.editor import EditError, EditResult, PlanTransformer, Speller
from kmigrate.engine.import_edits import (
    ImportFixer,
    fix_imports,
    import_changes,
    import_insertion_scan,
    rewritten_imports,
)
from kmigrate.engine.import_layout import ImportLayout
from kmigrate.engine.import_placement import import_key
from kmigrate.engine.model import (
    UNPLACED_EDITS,
    ClassEdit,
    EditPlan,
    EnsureImport,
    ReplaceNode,
    Span,
    requested_import,
)
from kmigrate.engine.spec import ImportStyle

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORT_SECTION = (ast.Import, ast.ImportFrom, ast.Try, ast.If)  # see import_insertion_scan


class _UnsafeError(Exception):
    """The fast path cannot promise the whole-module editor's bytes: use that editor."""


@dataclass
class _Source:
    """One module's text cut into physical lines the way Python's tokenizer cuts them."""

    text: str
    lines: list[str]
    tree: ast.Module
    newline: str
    indent: str  # LibCST's default indent: the first indented block's indentation

    @classmethod
    def of(cls, text: str, tree: ast.Module | None = None) -> _Source:
        """``tree``: ``ast.parse(text)`` when the caller has it already."""
        lines = _LINE.findall(text)
        newline = _newline_of(text)
        if tree is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        return cls(text, lines, tree, newline, _first_indent(tree, lines))

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def stands_alone(self, stmt: ast.stmt) -> bool:
        """True when ``stmt`` owns whole lines: nothing but indentation before it, no
        backslash joining it to the line above, nothing but a comment after it."""
        first = _first_line(stmt)
        line = self.line(first)
        if len(_indent(line)) != stmt.col_offset:
            return False
        if stmt.lineno != first and not line.lstrip(" \t").startswith("@"):
            return False
        if self.line(first - 1).rstrip("\r\n").endswith("\\"):
            return False
        end = self.line(stmt.end_lineno or stmt.lineno).encode("utf-8")
        rest = end[stmt.end_col_offset or 0 :].strip()
        return not rest or rest.startswith(b"#")


def _newline_of(text: str) -> str:
    """The file's one line ending; mixed endings would make LibCST's choice of default
    depend on where a piece starts, so they go to the whole-module editor."""
    if "\r" not in text:
        return "\n"
    if text.count("\r\n") == text.count("\r") == text.count("\n"):
        return "\r\n"
    raise _UnsafeError("mixed line endings")


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno, *(d.lineno for d in decorators)]) if decorators else stmt.lineno


def _blocks(stmt: ast.AST) -> list[list[ast.stmt]]:
    blocks = []
    for name in _BLOCK_FIELDS:
        value = getattr(stmt, name, None)
        if not value:
            continue
        if name in ("handlers", "cases"):
            blocks.extend(item.body for item in value)
        else:
            blocks.append(value)
    return blocks


def _first_indent(tree: ast.Module, lines: list[str]) -> str:
    """LibCST's ``default_indent``: the indentation of the first block whose body starts
    on a line of its own (the tokenizer's first INDENT), else four spaces."""
    best: int | None = None
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        stmt = stack.pop()
        for block in _blocks(stmt):
            start = _first_line(block[0])
            # `else: x` puts its body on the header's line: no INDENT there.
            starts_line = len(_indent(lines[start - 1])) == block[0].col_offset
            if starts_line and (best is None or start < best):
                best = start
            stack.extend(block)
    return "    " if best is None else _indent(lines[best - 1])


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


# ---------------------------------------------------------------------------
# Pieces: the smallest stand-alone statements that hold the edits.
# ---------------------------------------------------------------------------


_KEPT_METHODS = ("__init__", "get_config")  # what a ClassEdit reads and changes


@dataclass
class _Piece:
    """A stand-alone statement holding edits, parsed and edited as one."""

    stmt: ast.stmt
    nested: bool  # indented: parsed inside an ``if 1:`` block
    edits: list[tuple[int, object]]
    # For a class with a ClassEdit: method bodies parsed as one placeholder line each
    # (first, last line), and the pieces inside them, edited on their own.
    bodies: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    inner: list[_Piece] = dataclasses.field(default_factory=list)

    @property
    def first(self) -> int:
        return _first_line(self.stmt)

    @property
    def last(self) -> int:
        return self.stmt.end_lineno or self.stmt.lineno

    def body_holding(self, other: _Piece) -> bool:
        return any(a <= other.first and other.last <= b for a, b in self.bodies)

    def keep_bodies_touching(self, other: _Piece) -> None:
        self.bodies = [(a, b) for a, b in self.bodies if b < other.first or other.last < a]


def _target_lines(edit: object) -> tuple[int, int]:
    span: Span = edit.span  # type: ignore[attr-defined]
    if isinstance(edit, ClassEdit):
        return span.line, span.line
    return span.line, span.end_line


def _holder(source: _Source, first: int, last: int) -> tuple[ast.stmt, bool]:
    """The innermost stand-alone statement whose lines hold ``first..last``."""
    found: tuple[ast.stmt, bool] | None = None
    block: list[ast.stmt] = source.tree.body
    nested = False
    while True:
        inner = None
        for stmt in block:
            start, end = _first_line(stmt), stmt.end_lineno or stmt.lineno
            if start <= first and last <= end:
                inner = stmt
                break
            if start > last:
                break
        if inner is None:
            break
        if source.stands_alone(inner):
            found = (inner, nested)
        nested = True
        block = [s for b in _blocks(inner) for s in b]
    if found is None:
        raise _UnsafeError("an edit outside any statement of its own")
    return found


def _method_bodies(source: _Source, piece: _Piece) -> list[tuple[int, int]]:
    """The bodies a piece is parsed without, as one placeholder line each.

    An edit in a class's or function's decorators or header (a base class, a
    ``@tf.function``) makes the whole definition a piece, but reads nothing of its
    body: the body is left out. A ``ClassEdit`` reads only the class body's list of
    statements, ``__init__`` and ``get_config``: the other methods' bodies are left
    out."""
    stmt = piece.stmt
    if not isinstance(stmt, (*_SCOPES,)):
        return []
    class_lines = {e.span.line for _, e in piece.edits if isinstance(e, ClassEdit)}
    if not class_lines:
        body = _left_out_body(source, stmt)
        ends = [_target_lines(e)[1] for _, e in piece.edits]
        return [body] if body is not None and max(ends) < body[0] else []
    if not isinstance(stmt, ast.ClassDef) or stmt.lineno not in class_lines:
        return []
    bodies = []
    for method in stmt.body:
        if (
            isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
            and method.name not in _KEPT_METHODS
            and source.stands_alone(method)
        ):
            left_out = _left_out_body(source, method)
            if left_out is not None:
                bodies.append(left_out)
    return bodies


def _left_out_body(source: _Source, stmt: ast.stmt) -> tuple[int, int] | None:
    """The lines of ``stmt``'s body when they can become one placeholder line: the
    body starts on a line after the header and stands alone."""
    body: list[ast.stmt] = stmt.body  # type: ignore[attr-defined]
    if _first_line(body[0]) > stmt.lineno and source.stands_alone(body[0]):
        return _first_line(body[0]), stmt.end_lineno or stmt.lineno
    return None


def _pieces(source: _Source, edits: Sequence[tuple[int, object]]) -> list[_Piece]:
    """The outermost pieces, in file order; a piece inside another is merged into it,
    except inside a method body its class piece leaves out (then it is ``inner``)."""
    by_stmt: dict[int, _Piece] = {}
    for plan_index, edit in edits:
        if isinstance(edit, UNPLACED_EDITS):
            continue
        stmt, nested = _holder(source, *_target_lines(edit))
        if isinstance(edit, ReplaceNode) and edit.kind == "compound":
            _check_no_footer(source, stmt)
        piece = by_stmt.setdefault(id(stmt), _Piece(stmt, nested, []))
        piece.edits.append((plan_index, edit))
    outermost: list[_Piece] = []
    open_pieces: list[_Piece] = []
    for piece in sorted(by_stmt.values(), key=lambda p: (p.first, -p.last)):
        piece.bodies = _method_bodies(source, piece)
        while open_pieces and piece.last > open_pieces[-1].last:
            open_pieces.pop()  # statements nest or are disjoint
        if not open_pieces:
            outermost.append(piece)
        elif open_pieces[-1].body_holding(piece):
            open_pieces[-1].inner.append(piece)
        else:
            holder = open_pieces[-1]
            holder.edits.extend(piece.edits)
            holder.keep_bodies_touching(piece)
            continue
        open_pieces.append(piece)
    return outermost


def _check_no_footer(source: _Source, stmt: ast.stmt) -> None:
    """A compound statement replaced whole (``compound_edit``) takes the comments that
    close its body (LibCST's block footer) with it; they lie past its ``ast`` lines, outside
    the piece: the whole-module editor does it."""
    number = (stmt.end_lineno or stmt.lineno) + 1
    while number <= len(source.lines) and not source.line(number).strip():
        number += 1
    line = source.line(number)
    if line.lstrip(" \t").startswith("#") and len(_indent(line)) > stmt.col_offset:
        raise _UnsafeError("comments close the body of a statement replaced whole")


def _in_edit_order(pieces: list[_Piece]) -> list[_Piece]:
    """Inner pieces before the class piece, as a post-order visit meets their edits."""
    ordered = []
    for piece in pieces:
        ordered.extend(_in_edit_order(piece.inner))
        ordered.append(piece)
    return ordered


# ---------------------------------------------------------------------------
# One LibCST parse for all pieces of a round.
# ---------------------------------------------------------------------------

_SEPARATOR = "__kmigrate_piece_end__"
_MARKER = "__kmigrate_"


def _placeholder(source: _Source, first: int, number: int) -> str:
    return f"{_indent(source.line(first))}{_MARKER}body_{number}__{source.newline}"


def _units(source: _Source, pieces: list[_Piece]) -> list[tuple[str | None, list[_Piece]]]:
    """The pieces in batch order, cut into units: a piece at the module's top level
    alone (indentation None), or consecutive indented pieces of one indentation,
    which share one ``if 1:`` block."""
    units: list[tuple[str | None, list[_Piece]]] = []
    for piece in pieces:
        indent = _indent(source.line(piece.first)) if piece.nested else None
        if indent is not None and units and units[-1][0] == indent:
            units[-1][1].append(piece)
        else:
            units.append((indent, [piece]))
    return units


def _batch(
    source: _Source, units: list[tuple[str | None, list[_Piece]]]
) -> tuple[str, list[list[tuple[int, object]]]]:
    """All pieces in one module: a prelude that gives LibCST the whole module's
    default indent and newline (it detects both from the text), then each unit
    followed by a separator statement: a top-level piece as it is, a run of indented
    pieces inside one ``if 1:`` block, each followed by a separator of its own at
    the block's indentation. Returns the text and each piece's edits with their spans
    moved to the batch's lines."""
    nl = source.newline
    parts = [f"if 1:{nl}{source.indent}pass{nl}"]
    line = 3  # the batch's next line
    moved_edits = []
    for indent, pieces in units:
        if indent is not None:
            parts.append(f"if 1:{nl}")
            line += 1
        for piece in pieces:
            moved_edits.append([(i, _moved(e, piece, line)) for i, e in piece.edits])
            number = piece.first
            for first, last in piece.bodies:
                parts.extend(source.lines[number - 1 : first - 1])
                parts.append(_placeholder(source, first, first))
                number = last + 1
            parts.extend(source.lines[number - 1 : piece.last])
            if not parts[-1].endswith(("\n", "\r")):
                parts.append(nl)  # the file's last line: see _piece_text
            line += piece.last - piece.first + 1 - sum(b - a for a, b in piece.bodies)
            if indent is not None:
                parts.append(f"{indent}{_SEPARATOR}{nl}")
                line += 1
        parts.append(f"{_SEPARATOR}{nl}")
        line += 1
    return "".join(parts), moved_edits


def _moved(edit: object, piece: _Piece, to: int) -> object:
    span: Span = edit.span  # type: ignore[attr-defined]
    by = to - piece.first - sum(b - a for a, b in piece.bodies if b < span.line)
    moved = Span(span.line + by, span.column, span.end_line + by, span.end_column)
    return dataclasses.replace(edit, span=moved)  # type: ignore[type-var]


def _edit_pieces(
    source: _Source, pieces: list[_Piece], speller: Speller, applied: Counter[int]
) -> dict[int, str]:
    """The new text of every piece (by ``id``), placeholders still in."""
    if _MARKER in source.text:
        raise _UnsafeError("the module uses kmigrate's marker names")
    units = _units(source, _in_edit_order(pieces))
    code, moved_edits = _batch(source, units)
    try:
        module = cst.parse_module(code)
    except Exception as error:  # noqa: BLE001 - the whole-module editor decides
        raise _UnsafeError(f"pieces do not parse alone: {error}") from error
    transformer = PlanTransformer([e for edits in moved_edits for e in edits], speller)
    new_module = transformer.run(module, transformer.locate(module))
    applied.update(transformer.applied)
    groups: list[list[cst.BaseStatement]] = [[]]
    for stmt in new_module.body[1:]:
        if is_bare_name(stmt, _SEPARATOR):
            groups.append([])
        else:
            groups[-1].append(stmt)
    if len(groups) != len(units) + 1 or groups[-1]:
        raise _UnsafeError("a separator was lost")
    texts = {}
    header = f"if 1:{source.newline}"
    for (indent, unit), group in zip(units, groups, strict=False):
        text = "".join(new_module.code_for_node(stmt) for stmt in group)
        if indent is None:
            texts[id(unit[0])] = text
            continue
        if len(group) != 1 or not text.startswith(header):
            raise _UnsafeError("a wrapper block changed")
        # Each piece's text ends with a line of its own, so the separator lines
        # (the marker is nowhere in the module) cut the block into the pieces.
        chunks = text[len(header) :].split(f"{indent}{_SEPARATOR}{source.newline}")
        if len(chunks) != len(unit) + 1 or chunks[-1]:
            raise _UnsafeError("a separator in a block was lost")
        for piece, chunk in zip(unit, chunks, strict=False):
            texts[id(piece)] = chunk
    return texts


def _splice(
    source: _Source, first: int, last: int, pieces: list[_Piece], texts: dict[int, str]
) -> str:
    """Lines ``first..last`` of the module with the pieces among them replaced."""
    parts: list[str] = []
    done = first - 1
    for piece in pieces:
        if not first <= piece.first <= piece.last <= last:
            continue
        parts.extend(source.lines[done : piece.first - 1])
        parts.append(_piece_text(source, piece, texts))
        done = piece.last
    parts.extend(source.lines[done:last])
    return "".join(parts)


def _piece_text(source: _Source, piece: _Piece, texts: dict[int, str]) -> str:
    text = texts[id(piece)]
    for first, last in piece.bodies:
        placeholder = _placeholder(source, first, first)
        if text.count(placeholder) != 1:
            raise _UnsafeError("a left-out method body was touched")
        text = text.replace(placeholder, _splice(source, first, last, piece.inner, texts))
    if not source.line(piece.last).endswith(("\n", "\r")):
        if not text.endswith(source.newline):
            raise _UnsafeError("the added newline went missing")
        text = text[: -len(source.newline)]
    return text


# ---------------------------------------------------------------------------
# Imports: only the top of the module, up to the last import that changes.
# ---------------------------------------------------------------------------


def _module_imports(block: list[ast.stmt]):
    """Imports the import fixer may touch: any not inside a function or class."""
    for stmt in block:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            yield stmt
        elif not isinstance(stmt, _SCOPES):
            for inner in _blocks(stmt):
                yield from _module_imports(inner)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Constant, ast.JoinedStr))


def _local_name(alias: ast.alias, is_from: bool) -> str:
    if alias.asname:
        return alias.asname
    return alias.name if is_from else alias.name.split(".")[0]


def _fix_imports(
    source: _Source,
    new_text: str,
    needed: list[EnsureImport],
    keep: frozenset[str],
    layout: ImportLayout | None,
) -> tuple[str, ast.Module | None]:
    """The text with its imports fixed, and its ``ast`` tree when no import changed
    (the next analysis need not parse it again)."""
    new = _Source.of(new_text)
    unused, add = import_changes(source.tree, new.tree, needed, keep)
    moved = rewritten_imports(source.tree, new.tree)
    if not unused and not add and not moved:
        return new_text, new.tree
    touched = 0  # last line of a top-level statement whose imports change
    for top in new.tree.body:
        if isinstance(top, (ast.Import, ast.ImportFrom)) and import_key(top) in moved:
            touched = top.end_lineno or top.lineno
        for stmt in _module_imports([top]):
            is_from = isinstance(stmt, ast.ImportFrom)
            if any(_local_name(a, is_from) in unused for a in stmt.names):
                touched = top.end_lineno or top.lineno
    body = new.tree.body
    cut = next((i for i, s in enumerate(body) if _first_line(s) > touched), len(body))
    section = 1 if body and _is_docstring(body[0]) else 0
    while section < len(body) and isinstance(body[section], _IMPORT_SECTION):
        section += 1
    cut = max(cut, section)
    while True:
        while cut < len(body) and not new.stands_alone(body[cut]):
            cut += 1
        if cut >= len(body):
            return fix_imports(source.text, new_text, needed, keep, layout), None
        # The statement after every change is parsed too (as a one-line stand-in), so
        # the lines between it and the changed ones are owned as in the whole module.
        first = _first_line(body[cut])
        stand_in = f"{_MARKER}next__{new.newline}"
        module = cst.parse_module("".join(new.lines[: first - 1]) + stand_in)
        stop, last = import_insertion_scan(module.body)[1], len(module.body) - 1
        # The search for the insertion point stops at the stand-in only: it would
        # also stop at the statement it stands for unless that is an import, a
        # `try` or an `if` (or the docstring, when it is the first statement).
        stops_there = last > 0 and not isinstance(body[cut], _IMPORT_SECTION)
        if stop < last or (stop == last and stops_there):
            fixed = module.visit(ImportFixer(unused, add, layout, moved)).code
            if not fixed.endswith(stand_in):
                raise _UnsafeError("the stand-in statement changed")
            return fixed[: -len(stand_in)] + "".join(new.lines[first - 1 :]), None
        cut = max(cut + 1, 2 * cut)


# ---------------------------------------------------------------------------
# Entry point.
# ---------------------------------------------------------------------------


def apply_plans(
    text: str,
    plans: Sequence[EditPlan],
    style: ImportStyle,
    tree: ast.Module | None = None,
    keep: frozenset[str] = frozenset(),
    layout: ImportLayout | None = None,
) -> EditResult:
    """``kmigrate.engine.editor.apply_plans``, with LibCST parsing only what changes.
    ``tree``: ``ast.parse(text)`` when the caller has it (the analysis does), never
    changed here."""
    try:
        return _apply_in_pieces(text, plans, style, tree, keep, layout)
    except _UnsafeError:
        return editor.apply_plans(text, plans, style, keep, layout)


def _apply_in_pieces(
    text: str,
    plans: Sequence[EditPlan],
    style: ImportStyle,
    tree: ast.Module | None,
    keep: frozenset[str],
    layout: ImportLayout | None,
) -> EditResult:
    source = _Source.of(text, tree)
    failed: dict[int, str] = {}
    while True:
        active = [i for i in range(len(plans)) if i not in failed]
        edits = [(i, e) for i in active for e in plans[i].edits]
        speller = Speller.for_tree(source.tree, style, [plans[i] for i in active])
        for _, edit in edits:  # explicit imports requested by rules
            wanted = requested_import(edit)
            if wanted is not None and wanted not in speller.needed:
                speller.needed.append(wanted)
        applied: Counter[int] = Counter()
        pieces = _pieces(source, edits)
        try:
            texts = _edit_pieces(source, pieces, speller, applied) if pieces else {}
        except EditError as error:
            failed[error.plan_index] = error.reason
            continue
        expected = Counter(i for i, e in edits if not isinstance(e, UNPLACED_EDITS))
        missing = [i for i in active if applied[i] < expected[i]]
        if missing:
            for i in missing:
                failed[i] = "the code this plan points at was not found (changed by another edit?)"
            continue
        new_text = _splice(source, 1, len(source.lines), pieces, texts)
        new_tree = None
        if new_text != text or speller.needed:
            new_text, new_tree = _fix_imports(source, new_text, speller.needed, keep, layout)
        return EditResult(new_text, active, failed, new_tree)
