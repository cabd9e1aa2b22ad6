"""Matching a ``.gitignore`` glob in time linear in the path, whatever the pattern.

The scanned tree writes its own ``.gitignore``. Translated to a backtracking regular
expression, a line with many wildcards (``a/**/**/**/**/**/**/**/**/**/**/**/**/b``, or
``*a*a*a*a*a*a*a*a*b``) takes time exponential in their number on a deep path: 10
``**/`` took 9 s per path. So a glob with more than two wildcards is matched here
instead, by running all its positions at once over the path (a Thompson simulation:
each character of the path advances a set of at most two states per token), which
costs at most the pattern's length per character.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# token kinds
LITERAL = "literal"  # one character, ``text``
ONE = "one"  # ``?`` or a bracket expression: one character but "/", ``accepts`` it
STAR = "star"  # ``*``: any run of characters but "/"
ANY = "any"  # ``**`` not followed by "/": any run of characters
FOLDERS = "folders"  # ``**/`` (and the unanchored start): "" or any text ending with "/"

WILDCARDS = frozenset({STAR, ANY, FOLDERS})


@dataclass(frozen=True)
class Token:
    kind: str
    text: str = ""
    accepts: Callable[[str], object] | None = None


class LinearGlob:
    """A compiled glob: :meth:`matches` tells whether it matches a whole path."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.end = len(tokens)

    def _closure(self, states: set[int]) -> set[int]:
        """``states`` (token positions, even; odd = inside a FOLDERS token) with every
        position a wildcard may skip to without consuming a character."""
        done = set(states)
        pending = list(states)
        while pending:
            state = pending.pop()
            position = state // 2
            if state % 2 == 0 and position < self.end and self.tokens[position].kind in WILDCARDS:
                following = 2 * (position + 1)
                if following not in done:
                    done.add(following)
                    pending.append(following)
        return done

    def matches(self, path: str) -> bool:
        states = self._closure({0})
        for char in path:
            following: set[int] = set()
            for state in states:
                position = state // 2
                if state % 2:  # inside ``**/``: anything, and a "/" may end it
                    following.add(state)
                    if char == "/":
                        following.add(2 * (position + 1))
                    continue
                if position == self.end:
                    continue
                token = self.tokens[position]
                kind = token.kind
                if kind == LITERAL:
                    if char == token.text:
                        following.add(2 * (position + 1))
                elif kind == ONE:
                    if char != "/" and token.accepts is not None and token.accepts(char):
                        following.add(2 * (position + 1))
                elif kind == STAR:
                    if char != "/":
                        following.add(state)
                elif kind == ANY:
                    following.add(state)
                else:  # FOLDERS: its text begins here
                    following.add(state + 1)
                    if char == "/":
                        following.add(2 * (position + 1))
            if not following:
                return False
            states = self._closure(following)
        return 2 * self.end in states


def tokenize(pattern: str, bracket: Callable[[str], str], unanchored: bool) -> list[Token]:
    """The tokens of a glob; ``bracket`` turns a bracket expression's members into a
    regex character class (as the regex translation does)."""
    tokens = [Token(FOLDERS)] if unanchored else []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            if not tokens or tokens[-1].kind != FOLDERS:  # ``**/**/`` is ``**/``
                tokens.append(Token(FOLDERS))
            i += 3
            continue
        if pattern.startswith("**", i):
            tokens.append(Token(ANY))
            i += 2
            continue
        if char == "*":
            tokens.append(Token(STAR))
        elif char == "?":
            tokens.append(Token(ONE, accepts=lambda c: True))
        elif char == "[" and pattern.find("]", i + 2) != -1:
            end = pattern.find("]", i + 2)
            tokens.append(Token(ONE, accepts=re.compile(bracket(pattern[i + 1 : end])).fullmatch))
            i = end
        else:
            tokens.append(Token(LITERAL, char))
        i += 1
    return tokens


def wildcard_count(tokens: list[Token]) -> int:
    return sum(token.kind in WILDCARDS for token in tokens)
