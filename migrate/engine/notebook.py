"""Jupyter notebooks: their code cells as one module, rewrites written back into the JSON.

The code cells of a notebook run in one namespace (an import in cell 1 serves cell
5), so they are analysed as one *virtual module*: the cells in order, each
after a separator statement. IPython syntax that is not Python (``%magic``,
``%%cell magic``, ``!shell``, ``x = !cmd``, ``name?`` help) is masked by a
placeholder import on the same line, so line numbers stay the cell's own and
the rules never see it; rewrites restore it verbatim. Non-Python cell magics
(``%%bash``, ``%%writefile``...) and cells that still do not parse are left out
(the latter reported as KM901 for that cell).

Writing back is surgical: only the JSON value of the ``source`` of each changed
cell is replaced, in the style of the original (list of lines or one string,
indentation, ASCII escapes), so outputs, metadata, key order, indentation and
the trailing newline stay byte-identical. The stdlib ``json`` is enough.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import warnings
from dataclasses import dataclass, field
from json.decoder import scanstring

from kmigrate.engine.model import Finding, Span

# The module a masked IPython line imports: it holds the line's place, sorts nowhere.
MASKED_PREFIX = "kmigrate_masked_"

# Cell magics whose body is Python (the first line is masked, the body analysed).
PYTHON_BODY_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_LINE_MAGIC = re.compile(r"^\s*(?:[%!?]|\w[\w.]*\?\??\s*$)")
_ASSIGNED_MAGIC = re.compile(r"^\s*[\w.\[\], ]+=\s*[%!]")
_WS = re.compile(r"[ \t\n\r]*")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_DECODER = json.JSONDecoder()


class NotebookError(Exception):
    """The file is not a notebook kmigrate can read; the message says why."""


@dataclass
class CodeCell:
    """One code cell: where it is, its source, and the Python the rules see."""

    index: int  # position in the notebook's "cells" (0-based)
    source: str  # the original source, joined
    as_list: bool  # stored as a list of lines (nbformat's usual form) or one string
    python: str = ""  # source with IPython lines masked; ends with a newline when non-empty
    masked: dict[int, str] = field(default_factory=dict)  # cell line (1-based) -> original
    cell_id: str | None = None
    problem: str | None = None  # why the cell is left out of the analysis

    @property
    def number(self) -> int:
        """1-based, counting every cell (markdown too), as a notebook reads top to bottom."""
        return self.index + 1


@dataclass
class Notebook:
    """A parsed notebook, its code cells and the virtual module built from them."""

    raw: str
    cells: list[CodeCell]
    source_spans: dict[int, tuple[int, int]]  # cell index -> span of its "source" JSON value
    token: str
    module_text: str = ""
    origin: list[tuple[int, int] | None] = field(default_factory=list)  # per virtual line
    _new_origin: list[tuple[int, int] | None] = field(default_factory=list)

    # -- building --------------------------------------------------------------
    def separator(self, number: int) -> str:
        return f"...  # kmigrate-cell-{self.token}-{number}"

    def placeholder(self, index: int, line: int) -> str:
        # An import statement, so that masked lines at the top of a cell (``%matplotlib
        # inline``) count as part of the import block the editor adds imports after.
        return f"import {MASKED_PREFIX}{self.token}_{index}_{line}"

    @property
    def analysed(self) -> list[CodeCell]:
        return [c for c in self.cells if c.problem is None]

    def build(self) -> None:
        lines: list[str] = []
        origin: list[tuple[int, int] | None] = []
        for position, cell in enumerate(self.analysed):
            if position:
                lines.append(self.separator(cell.index) + "\n")
                origin.append(None)
            for number, line in enumerate(_lines(cell.python), start=1):
                lines.append(line)
                origin.append((cell.index, number))
        keep = self._names_to_keep("".join(lines))
        if keep:
            lines.append(f"{self.keeper} = ({', '.join(keep)},)\n")
            origin.append(None)
        self.module_text = "".join(lines)
        self.origin = origin

    @property
    def keeper(self) -> str:
        return f"_kmigrate_keep_{self.token}"

    def _names_to_keep(self, text: str) -> list[str]:
        """Imported names that masked IPython lines or unparseable cells mention.

        The editor drops an import once no code uses it; ``%timeit tf.reduce_sum(x)``
        or ``tf.reduce_mean?`` use it too, unseen, so a last line (removed again when
        writing back) keeps those names in use.
        """
        hidden = [line for c in self.cells for line in c.masked.values()]
        hidden += [c.source for c in self.cells if c.problem and not c.problem.startswith("%%")]
        words = set(re.findall(r"[A-Za-z_]\w*", "\n".join(hidden)))
        if not words:
            return []
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            return []
        bound = {
            (alias.asname or alias.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
            if alias.name != "*"
        }
        return sorted(n for n in words & bound if not n.startswith(MASKED_PREFIX))

    # -- findings --------------------------------------------------------------
    def cell_findings(self, path: str) -> list[Finding]:
        """KM901 for each code cell left out because it does not parse."""
        from kmigrate.engine.analyze import UNPARSEABLE
        from kmigrate.engine.model import Context, Severity

        return [
            Finding(
                rule=UNPARSEABLE,
                severity=Severity.ERROR,
                message=f"cannot parse cell {cell.number}: {cell.problem}; the cell is left "
                "untouched",
                path=path,
                span=Span(1, 0, 1, 0),
                context=Context.OTHER,
                extra=self._extra(cell.index, 1),
            )
            for cell in self.cells
            if cell.problem is not None and not cell.problem.startswith("%%")
        ]

    def map_findings(self, findings: list[Finding]) -> list[Finding]:
        """Findings on the virtual module -> findings on cells (line within the cell)."""
        mapped = []
        for finding in findings:
            start = self._locate(finding.span.line)
            if start is None:
                continue  # on the line kmigrate added (see _names_to_keep)
            end = self._locate(finding.span.end_line)
            index, line = start
            end_line, end_column = (
                (end[1], finding.span.end_column)
                if end is not None and end[0] == index
                else (line, finding.span.column)
            )
            finding.span = Span(line, finding.span.column, end_line, end_column)
            finding.extra = {**finding.extra, **self._extra(index, line)}
            mapped.append(finding)
        return mapped

    def _locate(self, line: int) -> tuple[int, int] | None:
        """Cell index and cell line of virtual line ``line`` (1-based)."""
        if not self.origin:
            return None
        if line > len(self.origin) or (line == len(self.origin) and self.origin[-1] is None):
            return None  # the keeper line, or past the end
        for probe in range(max(line, 1) - 1, len(self.origin)):  # a separator: the next cell
            if self.origin[probe] is not None:
                return self.origin[probe]
        return None

    def _extra(self, index: int, line: int) -> dict:
        cell = next(c for c in self.cells if c.index == index)
        extra = {"cell": cell.number, "cell_line": line}
        if cell.cell_id is not None:
            extra["cell_id"] = cell.cell_id
        stored = self._stored_line(cell, line)
        if stored is not None:
            extra["file_line"] = stored
        return extra

    def _stored_line(self, cell: CodeCell, line: int) -> int | None:
        """The line of the ``.ipynb`` file as stored that holds line ``line`` of the cell:
        where annotations (SARIF, GitHub, GitLab) must point. A source stored as a list
        with one element per line (nbformat's usual layout) has line k on the k-th line
        after ``"source": [``; a source on one line of the file (a string, or compact
        JSON) is that line."""
        span = self.source_spans.get(cell.index)
        if span is None:
            return None
        start, end = span
        first = self.raw.count("\n", 0, start) + 1
        value = self.raw[start:end]
        if "\n" not in value:
            return first
        if not cell.as_list:
            return None
        rows = value.split("\n")
        elements = cell.source.splitlines()
        # `[`, one element per row, then the closing row: anything else is not that layout
        if len(rows) != len(elements) + 2 or rows[0].strip() != "[":
            return None
        return first + line if 0 < line <= len(elements) else None

    # -- writing back ------------------------------------------------------------
    def rebuild(self, new_module: str) -> str:
        """The notebook JSON with the rewritten virtual module put back into its cells.

        Raises NotebookError when the rewrite cannot be mapped back exactly (a
        separator or masked line moved or vanished); the notebook is then left alone.
        """
        if not self.analysed or new_module == self.module_text:
            return self.raw
        sources = self._split(new_module)
        replacements = []
        for cell in self.analysed:
            new_source = self._restore(cell, sources[cell.index])
            if new_source != cell.source:
                start, end = self.source_spans[cell.index]
                replacements.append((start, end, self._render(cell, new_source, start, end)))
        text = self.raw
        for start, end, value in sorted(replacements, reverse=True):
            text = text[:start] + value + text[end:]
        self._verify(text, sources)
        self.origin = self._new_origin  # findings on the new module map to the new cells
        return text

    def _split(self, new_module: str) -> dict[int, str]:
        cells = self.analysed
        pieces: dict[int, list[str]] = {cells[0].index: []} if cells else {}
        current = cells[0].index if cells else -1
        expected = [c.index for c in cells[1:]]
        separators = {self.separator(i): i for i in expected}
        seen: list[int] = []
        keepers = 0
        self._new_origin = []
        for line in _lines(new_module):
            if line.startswith(self.keeper + " ="):
                keepers += 1
                self._new_origin.append(None)
                continue
            number = separators.get(line.rstrip("\r\n"))
            if number is not None:
                seen.append(number)
                current = number
                pieces[current] = []
                self._new_origin.append(None)
                continue
            pieces[current].append(line)
            self._new_origin.append((current, len(pieces[current])))
        if seen != expected or keepers != (self.keeper in self.module_text):
            raise NotebookError("the rewrite moved a cell boundary")
        return {index: "".join(lines) for index, lines in pieces.items()}

    def _restore(self, cell: CodeCell, text: str) -> str:
        lines = _lines(text)
        wanted = {self.placeholder(cell.index, n): n for n in cell.masked}
        found = 0
        for position, line in enumerate(lines):
            body = line.rstrip("\r\n")
            number = wanted.get(body.strip())
            if number is not None:
                lines[position] = cell.masked[number] + line[len(body) :]
                found += 1
        if found != len(cell.masked) or self.token in "".join(lines):
            raise NotebookError(f"the rewrite moved an IPython line of cell {cell.number}")
        new = "".join(lines)
        if not cell.source.endswith("\n") and new.endswith("\n"):
            new = new[:-1]
        return new

    def _render(self, cell: CodeCell, source: str, start: int, end: int) -> str:
        """``source`` as a JSON value in the style of the original value at raw[start:end]."""
        ascii_only = _prefers_ascii(self.raw)
        if not cell.as_list:
            return json.dumps(source, ensure_ascii=ascii_only)
        original = self.raw[start:end]
        known = {}  # unchanged lines keep their exact original spelling
        for _, item_start, item_end in _entries(self.raw, start):
            value = json.loads(self.raw[item_start:item_end])
            known.setdefault(value, self.raw[item_start:item_end])
        items = [
            known.get(line) or json.dumps(line, ensure_ascii=ascii_only)
            for line in source.splitlines(keepends=True)
        ]
        if not items:
            return "[]"
        multiline = "\n" in original or (original == "[]" and "\n" in self.raw.rstrip())
        if not multiline:
            separator = ", " if ", " in original or original.startswith("[ ") else ","
            return "[" + separator.join(items) + "]"
        item_indent, close_indent = self._list_indents(original, start)
        newline = "\r\n" if "\r\n" in original or "\r\n" in self.raw[:200] else "\n"
        joint = "," + newline + item_indent
        return "[" + newline + item_indent + joint.join(items) + newline + close_indent + "]"

    def _list_indents(self, original: str, start: int) -> tuple[str, str]:
        if "\n" in original:
            first = original.split("\n", 1)[1]
            item_indent = first[: len(first) - len(first.lstrip(" \t"))]
            last = original.rsplit("\n", 1)[1]
            return item_indent, last[: len(last) - len(last.lstrip(" \t"))]
        line_start = self.raw.rfind("\n", 0, start) + 1
        key_line = self.raw[line_start:start]
        close_indent = key_line[: len(key_line) - len(key_line.lstrip(" \t"))]
        return close_indent + _indent_unit(self.raw), close_indent

    def _verify(self, text: str, sources: dict[int, str]) -> None:
        """The new JSON must equal the old one except for the rewritten sources."""
        try:
            new = json.loads(text)
        except ValueError as error:  # pragma: no cover - a bug in _render
            raise NotebookError(f"the rewritten notebook is not valid JSON: {error}") from None
        old = json.loads(self.raw)
        if len(new.get("cells", ())) != len(old.get("cells", ())):
            raise NotebookError("the rewrite changed the number of cells")
        if {k: v for k, v in old.items() if k != "cells"} != {
            k: v for k, v in new.items() if k != "cells"
        }:
            raise NotebookError("the rewrite changed the notebook's metadata")
        for index, (before, after) in enumerate(zip(old["cells"], new["cells"])):
            before = dict(before)
            after = dict(after)
            if index in sources:
                joined = after.get("source")
                joined = "".join(joined) if isinstance(joined, list) else joined
                cell = next(c for c in self.cells if c.index == index)
                if joined != self._restore(cell, sources[index]):
                    raise NotebookError(f"cell {index + 1} was not written as rewritten")
                before.pop("source", None)
                after.pop("source", None)
            if before != after:
                raise NotebookError(f"the rewrite changed more than the code of cell {index + 1}")


# ---------------------------------------------------------------------------
# Reading.
# ---------------------------------------------------------------------------


def load_notebook(raw: str) -> Notebook | None:
    """Parse a notebook; None when it is not a Python notebook (R, Julia...).

    Raises NotebookError for invalid JSON or a notebook format kmigrate cannot read.
    """
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise NotebookError(f"not valid notebook JSON: {error}") from None
    except RecursionError:  # nested deeper than any notebook: a hostile or broken file
        raise NotebookError("not valid notebook JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise NotebookError("not a notebook: the JSON is not an object")
    version = data.get("nbformat", 4)
    if "worksheets" in data or not isinstance(version, int) or version < 4:
        raise NotebookError(
            "nbformat 3 notebooks are not supported "
            "(convert with `jupyter nbconvert --to notebook --inplace`)"
        )
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not a notebook: no list of cells")
    if not _is_python(data.get("metadata")):
        return None
    try:
        spans = _source_spans(raw)
    except (ValueError, IndexError) as error:  # pragma: no cover - json.loads accepted it
        raise NotebookError(f"cannot locate the cells in the JSON: {error}") from None
    token = hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    notebook = Notebook(raw=raw, cells=[], source_spans=spans, token=token)
    for index, cell in enumerate(cells):
        # a malformed cell makes the whole notebook KM901: writing back around it could
        # not be verified, and nbformat itself would refuse the file
        if not isinstance(cell, dict):
            raise NotebookError(f"not a notebook: cell {index + 1} is not a JSON object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        as_list = isinstance(source, list)
        if as_list and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(
                f"not a notebook: the source of cell {index + 1} is not text or a list of lines"
            )
        if index not in spans:
            continue
        code = CodeCell(index, source, as_list, cell_id=_cell_id(cell))
        _prepare(code, notebook)
        notebook.cells.append(code)
    notebook.build()
    return notebook


def _cell_id(cell: dict) -> str | None:
    value = cell.get("id")
    return value if isinstance(value, str) else None


def _is_python(metadata: object) -> bool:
    if not isinstance(metadata, dict):
        return True
    for key, name_key in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(name_key), str):
            return section[name_key].lower() in ("python", "python3", "ipython", "ipython3")
    return True


def _parse_error(text: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as error:
        return f"{error.msg} (line {error.lineno})"
    except (ValueError, RecursionError) as error:
        return str(error) or type(error).__name__
    return None


def _prepare(cell: CodeCell, notebook: Notebook) -> None:
    """Fill ``cell.python`` (IPython masked) or ``cell.problem``."""
    lines = _lines(cell.source)
    if lines and lines[0].startswith("%%"):
        magic = lines[0][2:].split(None, 1)[0] if lines[0][2:].strip() else ""
        if magic not in PYTHON_BODY_MAGICS:
            cell.problem = f"%%{magic} cell"  # not Python: not analysed, never touched
            return
    text = _with_newline(cell.source)
    if not lines or (_parse_error(text) is None and not lines[0].startswith("%%")):
        cell.python = text
        return
    candidates = [
        n
        for n, line in enumerate(lines, start=1)
        if (n == 1 and line.startswith("%%"))
        or _LINE_MAGIC.match(line)
        or _ASSIGNED_MAGIC.match(line)
    ]
    masked = list(lines)
    for number in candidates:
        masked[number - 1] = _mask(lines[number - 1], notebook.placeholder(cell.index, number))
    masked_text = _with_newline("".join(masked))
    problem = _parse_error(masked_text)
    if problem is not None:
        cell.problem = problem
        return
    # A candidate inside a multi-line string is not IPython syntax: unmask it.
    statements = {n.lineno for n in ast.walk(ast.parse(masked_text)) if isinstance(n, ast.Import)}
    for number in candidates:
        if number in statements:
            cell.masked[number] = lines[number - 1].rstrip("\r\n")
        else:
            masked[number - 1] = lines[number - 1]
    cell.python = _with_newline("".join(masked))
    if _parse_error(cell.python) is not None:  # pragma: no cover - defensive
        cell.problem = "IPython syntax kmigrate cannot mask"
        cell.masked.clear()


def _mask(line: str, placeholder: str) -> str:
    body = line.rstrip("\r\n")
    indent = body[: len(body) - len(body.lstrip(" \t"))]
    return indent + placeholder + line[len(body) :]


def _lines(text: str) -> list[str]:
    """Lines with their endings, split only where Python splits them (not at form feeds
    or U+2028 as ``str.splitlines`` does), so numbers match ``ast`` line numbers."""
    return _LINE.findall(text)


def _with_newline(text: str) -> str:
    return text if not text or text.endswith(("\n", "\r")) else text + "\n"


# ---------------------------------------------------------------------------
# JSON positions (the stdlib parser gives values, not where they are).
# ---------------------------------------------------------------------------


def _skip(raw: str, index: int) -> int:
    return _WS.match(raw, index).end()  # type: ignore[union-attr]


def _entries(raw: str, index: int) -> list[tuple[str | None, int, int]]:
    """(key, value start, value end) of each member of the JSON object or array at
    ``raw[index]``; the key is None for array items."""
    opening = raw[index]
    if opening not in "{[":
        raise NotebookError("unexpected JSON structure")
    closing = "}" if opening == "{" else "]"
    entries: list[tuple[str | None, int, int]] = []
    index = _skip(raw, index + 1)
    if raw[index] == closing:
        return entries
    while True:
        key = None
        if opening == "{":
            key, index = scanstring(raw, index + 1)
            index = _skip(raw, _skip(raw, index) + 1)  # past ':'
        _, end = _DECODER.raw_decode(raw, index)
        entries.append((key, index, end))
        index = _skip(raw, end)
        if raw[index] == closing:
            return entries
        index = _skip(raw, index + 1)  # past ','


def _source_spans(raw: str) -> dict[int, tuple[int, int]]:
    """Cell index -> (start, end) of its "source" value in the raw JSON text."""
    top = {key: (start, end) for key, start, end in _entries(raw, _skip(raw, 0))}
    if "cells" not in top:
        return {}
    spans = {}
    for position, (_, start, _end) in enumerate(_entries(raw, top["cells"][0])):
        if raw[start] != "{":
            continue
        members = {key: (s, e) for key, s, e in _entries(raw, start)}
        if "source" in members:
            spans[position] = members["source"]
    return spans


def _prefers_ascii(raw: str) -> bool:
    """Whether the file escapes non-ASCII text (``ensure_ascii``); nbformat does not."""
    if not raw.isascii():
        return False
    return re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", raw) is not None


def _indent_unit(raw: str) -> str:
    """The indentation step of the file (nbformat writes one space)."""
    match = re.search(r"\n([ \t]+)\S", raw)
    return match.group(1) if match else " "
