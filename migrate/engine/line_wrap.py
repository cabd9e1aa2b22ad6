"""Wrapping a rewritten line that outgrew the project's line length, as black would.

A rewrite makes names longer (``tf.exp`` -> ``keras.ops.exp``) or adds an argument
(``seed=self.seed_generator``); a line that fitted before must fit after. Only lines
the rewrite changed are touched, and only with black's moves: the contents of the
line's last bracket on a line of their own, else one item per line with a trailing
comma; a long ``return``/assignment in parentheses; a line of arguments inside a call
opened above, one per line. Each wrap must leave the module's ``ast`` as it was, or that
line stays as it is (and ``apply`` names it).
"""

from __future__ import annotations

import ast
import io
import tokenize

# How many times a line the wrap made may be wrapped again (nested calls).
_PASSES = 4


def wrap_long_lines(original: str, text: str, limit: int) -> tuple[str, list[int]]:
    """``text`` with its new over-long lines wrapped; and the (1-based, in the returned
    text) lines still over ``limit`` that the rewrite made so."""
    old_lines = set(original.splitlines())
    lines = text.splitlines(keepends=True)
    try:
        expected = ast.dump(ast.parse(text))
    except SyntaxError:
        return text, []
    for _ in range(_PASSES):  # a wrapped call's inner line may be long in its turn
        candidates = [
            index
            for index, line in enumerate(lines)
            if _too_long(line, limit) and line.rstrip("\r\n") not in old_lines
        ]
        changed = False
        for index in reversed(candidates):  # bottom up: the indices above stay valid
            for wrapped in (_wrapped(lines[index], limit), _items(lines[index], limit)):
                if wrapped is None:
                    continue
                trial = [*lines[:index], *wrapped, *lines[index + 1 :]]
                if _same_tree("".join(trial), expected):  # never a change of meaning
                    lines, changed = trial, True
                    break
        if not changed:
            break
    new_text = "".join(lines)
    still = [
        number
        for number, line in enumerate(new_text.splitlines(), start=1)
        if len(line) > limit and line not in old_lines
    ]
    return new_text, still


def _same_tree(text: str, expected: str) -> bool:
    try:
        return ast.dump(ast.parse(text)) == expected
    except SyntaxError:
        return False


def _items(line: str, limit: int) -> list[str] | None:
    """A line of several items inside brackets opened above (``a, b=1, c,``): one item
    per line, each with its comma, at the line's indentation (black's last resort)."""
    body = line.rstrip("\r\n")
    newline = line[len(body) :] or "\n"
    indent = body[: len(body) - len(body.lstrip(" \t"))]
    code = _code_tokens(body)
    if code is None or not code or code[-1].type == tokenize.COMMENT:
        return None
    depth, cuts = 0, []
    for token in code:
        if token.type != tokenize.OP:
            continue
        if token.string in "([{":
            depth += 1
        elif token.string in ")]}":
            depth -= 1
            if depth < 0:
                return None  # closes a bracket opened above: not a list of items
        elif token.string == "," and depth == 0:
            cuts.append(token.start[1])
    if depth != 0 or not cuts:
        return None
    items, start = [], len(indent)
    for cut in cuts:
        items.append(body[start:cut].strip())
        start = cut + 1
    items.append(body[start:].strip())
    items = [item for item in items if item]
    if len(items) < 2 or any(len(indent + item) + 1 > limit for item in items):
        return None
    return [indent + item + "," + newline for item in items]


def _code_tokens(body: str) -> list | None:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(body.lstrip() + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    shift = len(body) - len(body.lstrip())
    skipped = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
    return [
        t._replace(start=(t.start[0], t.start[1] + shift), end=(t.end[0], t.end[1] + shift))
        for t in tokens
        if t.type not in skipped
    ]


def _too_long(line: str, limit: int) -> bool:
    return len(line.rstrip("\r\n")) > limit


def _wrapped(line: str, limit: int) -> list[str] | None:
    """The line split at the bracket pair holding most of it, black's way (a trailing
    comment stays on the closing line); None when it cannot be."""
    body = line.rstrip("\r\n")
    newline = line[len(body) :] or "\n"
    indent = body[: len(body) - len(body.lstrip(" \t"))]
    code = _code_tokens(body)
    if not code:
        return None
    comment = ""
    if code[-1].type == tokenize.COMMENT:
        comment = "  " + code[-1].string
        body = body[: code[-1].start[1]].rstrip()
        code = code[:-1]
        if not code:
            return None
    pair = _widest_pair(code)
    if pair is None or code[-1].string not in ")]}":
        # `return a * f(x) + b`: black puts the expression in parentheses of its own
        wrapped = _in_parentheses(body, code, newline, indent, limit)
        if wrapped and comment:
            wrapped[-1] = wrapped[-1].rstrip("\r\n") + comment + newline
        if wrapped or pair is None:
            return wrapped
    opening, close, commas = pair
    head = body[: opening.end[1]]
    inner = body[opening.end[1] : close.start[1]].strip()
    tail = body[close.start[1] :] + comment
    if not inner or len(head) > limit or len(indent + tail) > limit:
        return None
    inside = indent + "    "
    if len(inside + inner) <= limit:
        return [head + newline, inside + inner + newline, indent + tail + newline]
    raw = body[opening.end[1] : close.start[1]]
    items, start = [], 0
    for cut in sorted(c - opening.end[1] for c in commas):
        items.append(raw[start:cut].strip())
        start = cut + 1
    items.append(raw[start:].strip())
    items = [item for item in items if item]
    lines = [head + newline, *(inside + item + "," + newline for item in items)]
    return [*lines, indent + tail + newline]


def _widest_pair(code: list):
    """(opening token, closing token, top-level comma columns inside) of the bracket pair
    at the line's own top level with the longest contents; None when there is none."""
    best, depth, stack = None, 0, []
    for token in code:
        if token.type != tokenize.OP:
            continue
        if token.string in "([{":
            stack.append((token, []))
            depth += 1
        elif token.string in ")]}":
            if not stack:
                return None  # closes a bracket opened on a line above
            opening, commas = stack.pop()
            depth -= 1
            width = token.start[1] - opening.end[1]
            if depth == 0 and (best is None or width > best[3]):
                best = (opening, token, commas, width)
        elif token.string == "," and stack:
            if len(stack) == 1:
                stack[-1][1].append(token.start[1])
    if stack or best is None:
        return None
    return best[0], best[1], best[2]


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
