"""The fact KM404 reads across files: the other modules of the project that reload
SavedModels, told to a module that writes one (a save rewritten to ``model.export``
breaks a reload elsewhere: what it wrote was called as ``loaded(x)``, an export is
called as ``loaded.serve(x)``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kmigrate.engine import EntrySource, FactProvider, Resolve
from kmigrate.rules.context_spec import CONTEXT_SPEC

_SPEC = CONTEXT_SPEC
# the last parts of the functions that write or reload a SavedModel: a call is kept when
# its callee ends so, or its root is bound to one (``from ... import load as sm_load``)
_NAMES = frozenset(
    s.rpartition(".")[2]
    for s in (*_SPEC.saved_model_saves, *_SPEC.saved_model_loads, *_SPEC.saved_model_folder_loads)
)


class SavedModelReloads(FactProvider):
    """Value: (module as shown, line of its first reload, the reader it calls) of the
    other modules (and notebooks) that reload SavedModels (the spec's
    ``saved_model_loads``, and ``saved_model_folder_loads`` on a literal folder), by
    path, at most three; () for a module that writes none."""

    name = "saved_model_reloads"
    default: tuple[tuple[str, int, str], ...] = ()

    @classmethod
    def entry(cls, source: EntrySource) -> list[list]:
        """The calls that may write or reload a SavedModel, for resolution to decide:
        [callee, first line, its path when a function's own import binds its root,
        whether it reads a literal folder], sorted."""
        aliases = {
            local
            for local, module, name, _ in source.imports
            if (name or module).rpartition(".")[2] in _NAMES
        }
        aliases.update(
            local for local, target in source.assigns if target.rpartition(".")[2] in _NAMES
        )
        found: dict[tuple[str, str, bool], int] = {}
        for callee, line, path, folder in source.calls:
            if (
                callee.rpartition(".")[2] in _NAMES
                or callee.partition(".")[0] in aliases
                or path.rpartition(".")[2] in _NAMES
            ):
                key = (callee, path, folder)
                found[key] = min(line, found.get(key, line))
        return sorted(
            [callee, line, path, folder] for (callee, path, folder), line in found.items()
        )

    @classmethod
    def valid_entry(cls, value: Any) -> bool:
        return isinstance(value, list) and all(
            isinstance(c, list)
            and len(c) == 4
            and isinstance(c[0], str)
            and type(c[1]) is int
            and isinstance(c[2], str)
            and type(c[3]) is bool
            for c in value
        )

    @classmethod
    def local(cls, value: list[list], resolve: Resolve) -> list:
        """[whether the module writes a SavedModel, the line of its first reload or 0,
        the reader that reload calls or ""]."""
        saves, line_of, reader = False, 0, ""
        for callee, line, path, folder in value:
            symbol = resolve(callee, path)
            if symbol is None:
                continue
            if symbol in _SPEC.saved_model_saves:
                saves = True
            elif _SPEC.reloads_saved_model(symbol, folder) and not 0 < line_of <= line:
                line_of, reader = line, symbol
        return [saves, line_of, reader]

    @classmethod
    def decode_local(cls, value: Any) -> tuple[bool, int, str]:
        if not (
            type(value) is list
            and len(value) == 3
            and type(value[0]) is bool
            and type(value[1]) is int
            and value[1] >= 0
            and type(value[2]) is str
        ):
            raise ValueError("not a module's SavedModel saves and reload")
        return value[0], value[1], value[2]

    @classmethod
    def project(
        cls,
        own: tuple[bool, int, str],
        others: Callable[[], Sequence[tuple[str, tuple[bool, int, str]]]],
    ) -> tuple[tuple[str, int, str], ...]:
        if not own[0]:  # only a module that writes a SavedModel is told
            return ()
        reloads = [(shown, line, reader) for shown, (_, line, reader) in others() if line]
        return tuple(reloads[:3])

    @classmethod
    def decode(cls, value: Any) -> tuple[tuple[str, int, str], ...]:
        if type(value) is not list:
            raise ValueError("not SavedModel reloads")
        found = []
        for item in value:
            if not (
                type(item) is list
                and len(item) == 3
                and type(item[0]) is str
                and type(item[1]) is int
                and type(item[2]) is str
            ):
                raise ValueError("not a SavedModel reload")
            found.append((item[0], item[1], item[2]))
        return tuple(found)
