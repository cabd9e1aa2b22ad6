"""Cross-file facts a rule declares it needs (``Rule.facts``), as LibCST providers are
declared in ``METADATA_DEPENDENCIES``: a :class:`FactProvider` says what to keep of each
file, what that becomes once the file's names are resolved against the project, and
what the project then tells each module. The engine carries the values through every
step a file's facts take (the entry store, the resolution store, worker processes,
notebooks' stored facts, the re-analysis check) without knowing what they hold: a new
fact is one provider module and the rule's declaration.

Every value a provider gives is plain data: JSON (lists, strings, numbers, booleans,
``None``) when stored, and hashable in memory (its ``decode`` turns the JSON back,
checking it: anything malformed is a miss of the store, never trusted)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

# resolves a callee as written in a file (and the dotted path a function's own import
# gives its root, "" if none) to a canonical TF/Keras symbol, or None (project code,
# unknown)
Resolve = Callable[[str, str], "str | None"]
Provided = tuple[tuple[str, Any], ...]  # (provider name, value), by name


class EntrySource(NamedTuple):
    """What a provider may keep of a file (``project_entry.build_entry``): its
    module-level imports (``[local, module, name, level]``) and aliases (``[local,
    source]``), every call (callee as written, line, the dotted path when a function's
    own import binds its root else "", whether it reads a literal folder), and the
    whole tree for anything else (read it, never keep a node: entries are JSON)."""

    imports: list[list]
    assigns: list[list[str]]
    calls: list[tuple[str, int, str, bool]]
    tree: ast.Module


class FactProvider:
    """One cross-file fact. Subclasses set ``name`` (unique: it keys the stored values)
    and ``default`` (the module's value when nothing is known: a file analysed alone),
    and give the hooks. Classes, never instances: hooks are classmethods."""

    name: ClassVar[str] = ""
    default: ClassVar[Any] = None
    # raised when what :meth:`entry` keeps changes: it names the entry store's folder
    version: ClassVar[int] = 1

    @classmethod
    def entry(cls, source: EntrySource) -> Any:
        """What to keep of one file, as JSON: stored with the file's entry, by its bytes."""
        raise NotImplementedError

    @classmethod
    def valid_entry(cls, value: Any) -> bool:
        """Whether a stored ``entry`` value has the shape :meth:`entry` gives."""
        raise NotImplementedError

    @classmethod
    def local(cls, value: Any, resolve: Resolve) -> Any:
        """The file's kept ``value`` resolved against the project: its local value, as
        JSON (stored in the file's row of the resolution; other modules read it)."""
        raise NotImplementedError

    @classmethod
    def decode_local(cls, value: Any) -> Any:
        """A local value (as :meth:`local` gives it, or read from the store) as a
        hashable object; raises ValueError when it is not one."""
        raise NotImplementedError

    @classmethod
    def project(cls, own: Any, others: Callable[[], Sequence[tuple[str, Any]]]) -> Any:
        """What the project tells one module, hashable, from the module's decoded local
        value ``own`` and the others' (``others()``: (path as shown, decoded local value)
        of every other module and notebook, by path; asked only when needed)."""
        raise NotImplementedError

    @classmethod
    def decode(cls, value: Any) -> Any:
        """A :meth:`project` value read back from JSON (notebooks' stored facts), checked;
        raises ValueError when it is not one."""
        raise NotImplementedError


def providers_of(rule_classes: Iterable[type]) -> tuple[type[FactProvider], ...]:
    """The providers ``rule_classes`` declare (``facts``), each once, by name; two
    providers with one name are a bug."""
    found: dict[str, type[FactProvider]] = {}
    for rule in rule_classes:
        for provider in getattr(rule, "facts", ()):
            if found.setdefault(provider.name, provider) is not provider or not provider.name:
                raise RuntimeError(f"fact provider name {provider.name!r} taken twice or empty")
    return tuple(found[name] for name in sorted(found))


def frozen(value: Any) -> Any:
    """A JSON value made hashable (lists become tuples), for decoders to build on."""
    if isinstance(value, list):
        return tuple(frozen(v) for v in value)
    return value


def to_json(value: Any) -> Any:
    """A hashable provider value as JSON (tuples become lists)."""
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    return value


def entry_values(providers: Sequence[type[FactProvider]], source: EntrySource) -> dict[str, Any]:
    """Each provider's part of a file's entry, by name."""
    return {p.name: p.entry(source) for p in providers}


def valid_entry_values(providers: Sequence[type[FactProvider]], value: Any) -> bool:
    """Whether a stored entry's ``provided`` holds each provider's part, well formed."""
    return (
        isinstance(value, dict)
        and sorted(value) == [p.name for p in providers]
        and all(p.valid_entry(value[p.name]) for p in providers)
    )


def local_values(
    providers: Sequence[type[FactProvider]], kept: Mapping[str, Any], resolve: Resolve
) -> Provided:
    """A module's local values (decoded) from its entry's ``provided``."""
    return tuple((p.name, p.decode_local(p.local(kept[p.name], resolve))) for p in providers)


def decode_locals(providers: Sequence[type[FactProvider]], value: Any) -> Provided:
    """Stored local values ({name: JSON}) decoded and checked; ValueError if malformed."""
    if not isinstance(value, dict) or sorted(value) != [p.name for p in providers]:
        raise ValueError("not the local values of these fact providers")
    return tuple((p.name, p.decode_local(value[p.name])) for p in providers)


def decode_values(providers: Sequence[type[FactProvider]], value: Any) -> Provided:
    """Stored project values ({name: JSON}) decoded and checked; ValueError if malformed."""
    if not isinstance(value, dict) or sorted(value) != [p.name for p in providers]:
        raise ValueError("not the values of these fact providers")
    return tuple((p.name, p.decode(value[p.name])) for p in providers)


def as_json(provided: Provided) -> dict[str, Any]:
    """Provided values ({name: value}) as stored."""
    return {name: to_json(value) for name, value in provided}
