"""Matching a call's arguments to a signature: one binder for every family.

The families word their refusals differently (a KM2xx finding says "unknown argument
`x=` for tf.reduce_sum", a KM3xx one "`tf.random.normal` has no argument `x`"), so the
binder only says what went wrong (:class:`BindError`) and each family phrases it.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kmigrate.engine import CallSite


@dataclass(frozen=True)
class BoundArg:
    """One bound argument: where it was written and its expression."""

    source: int | str  # positional index or the keyword as written (ArgOut.source)
    node: ast.expr

    @property
    def positional(self) -> bool:
        return isinstance(self.source, int)


class BindError(Exception):
    """Why a call's arguments do not match the signature; ``kind`` is one of the constants."""

    STAR_ARGS = "star-args"  # *args / **kwargs: nothing can be matched statically
    TOO_MANY = "too-many-positional"
    UNKNOWN = "unknown-keyword"  # ``name``: the keyword as written
    TWICE = "given-twice"  # ``name``: the parameter (after renames)

    def __init__(self, kind: str, name: str = "") -> None:
        super().__init__(kind, name)
        self.kind = kind
        self.name = name


def bind_call(
    site: CallSite,
    positional: Sequence[str],
    accepted: Collection[str],
    *,
    varargs: bool = False,
    renames: Mapping[str, str] | None = None,
    repeat_ok: bool = False,
) -> tuple[dict[str, BoundArg], list[int]]:
    """The call's arguments by parameter name, and the indices that went to ``*args``.

    ``positional`` names the parameters that take positional arguments, in order;
    ``accepted`` every name a keyword may bind to; ``varargs`` says whether extra
    positional arguments go to a ``*args`` parameter; ``renames`` maps legacy keyword
    spellings to parameter names. With ``repeat_ok`` a keyword that names an
    already-bound parameter replaces it instead of being refused.
    """
    if site.has_star_args:
        raise BindError(BindError.STAR_ARGS)
    bound: dict[str, BoundArg] = {}
    star: list[int] = []
    for index, node in enumerate(site.args):
        if index < len(positional):
            bound[positional[index]] = BoundArg(index, node)
        elif varargs:
            star.append(index)
        else:
            raise BindError(BindError.TOO_MANY)
    for keyword, node in site.keywords.items():
        name = renames.get(keyword, keyword) if renames else keyword
        if name not in accepted:
            raise BindError(BindError.UNKNOWN, keyword)
        if name in bound and not repeat_ok:
            raise BindError(BindError.TWICE, name)
        bound[name] = BoundArg(keyword, node)
    return bound, star
