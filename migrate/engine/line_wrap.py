"""Wrapping a rewritten line that outgrew the project's line length, as black would.

A rewrite makes names longer (``tf.exp`` -> ``keras.ops.exp``) or adds an argument
(``seed=self.seed_generator``); a line that fitted before must fit after. Only lines
the rewrite changed are touched, only a one-line statement ending in a bracket, and
only black's first two moves: the bracket's contents on a line of their own, else one
item per line with a trailing comma. The wrapped module must have the same ``ast`` as
before, or the line stays as it was (and ``apply`` says so).
"""

from __future__ import annotations

import ast
import io
import tokenize

_CLOSE = {")": "(", "]": "[", "}": "{"}


def wrap_long_lines(original: str, text: str, limit: int) -> tuple[str, list[int]]:
    """``text`` with its new over-long lines wrapped; and the (1-based, in the returned
    text) lines still over ``limit`` that the rewrite made so."""
    old_lines = set(original.splitlines())
    lines = text.splitlines(keepends=True)
    if not any(_too_long(line, limit) and line.rstrip("\r\n") not in old_lines for line in lines):
        return text, []
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text, []
    one_line = {
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
        and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.lineno == node.end_lineno
        and not hasattr(node, "body")
    }
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        stripped = line.rstrip("\r\n")
        if _too_long(line, limit) and stripped not in old_lines and number in one_line:
            out.extend(_wrapped(line, limit) or [line])
        else:
            out.append(line)
    new_text = "".join(out)
    try:
        if ast.dump(ast.parse(new_text)) != ast.dump(tree):
            new_text = text
    except SyntaxError:
        new_text = text
    still = [
        number
        for number, line in enumerate(new_text.splitlines(), start=1)
        if len(line) > limit and line not in old_lines
    ]
    return new_text, still


def _too_long(line: str, limit: int) -> bool:
    return len(line.rstrip("\r\n")) > limit


def _wrapped(line: str, limit: int) -> list[str] | None:
    """The line split at its last bracket pair, black's way; None when it cannot be."""
    body = line.rstrip("\r\n")
    newline = line[len(body) :] or "\n"
    indent = body[: len(body) - len(body.lstrip(" \t"))]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(body + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    skipped = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
    code = [t for t in tokens if t.type not in skipped]
    if not code or code[-1].type == tokenize.COMMENT:
        return None
    if code[-1].string not in _CLOSE:
        return _in_parentheses(body, code, newline, indent, limit)
    close = code[-1]
    depth, opening, commas = 0, None, []
    for token in reversed(code[:-1]):
        if token.type != tokenize.OP:
            continue
        if token.string in _CLOSE:
            depth += 1
        elif token.string in _CLOSE.values():
            if depth == 0:
                opening = token
                break
            depth -= 1
        elif token.string == "," and depth == 0:
            commas.append(token.start[1])
    if opening is None:
        return None
    head = body[: opening.end[1]]
    inner = body[opening.end[1] : close.start[1]].strip()
    tail = body[close.start[1] :]
    if not inner or len(head) > limit:
        return None
    inside = indent + "    "
    one = [head + newline, inside + inner + newline, indent + tail + newline]
    if len(inside + inner) <= limit:
        return one
    cuts = sorted(c - opening.end[1] for c in commas)
    raw = body[opening.end[1] : close.start[1]]
    items, start = [], 0
    for cut in cuts:
        items.append(raw[start:cut].strip())
        start = cut + 1
    items.append(raw[start:].strip())
    items = [item for item in items if item]
    lines = [head + newline, *(inside + item + "," + newline for item in items)]
    return [*lines, indent + tail + newline]


def _in_parentheses(body: str, code: list, newline: str, indent: str, limit: int):
    """Black's invisible parentheses: ``return a + b`` or ``x = a + b`` too long becomes
    ``return (`` / the expression on its own line / ``)``."""
    if code[0].string == "return" and len(code) > 1:
        start = code[1].start[1]
    else:
        depth, start = 0, None
        for token in code:
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
            elif token.type == tokenize.OP and token.string == "=" and depth == 0:
                start = token.end[1] + 1
                break
        if start is None:
            return None
    head, rest = body[:start].rstrip(), body[start:].strip()
    inside = indent + "    "
    if not rest or len(inside + rest) > limit:
        return None
    return [head + " (" + newline, inside + rest + newline, indent + ")" + newline]
