"""Finds every rule: each ``Rule`` subclass with an ``id`` in a ``rules/km*`` module.

A family is either one module (``rules/kmN_<family>.py``) or a package with one rule per
file (``rules/km5_keras2/add_weight_arguments.py``); in a package every public module is
searched (``_``-prefixed modules hold the family's shared helpers, not rules). Discovery
instead of a hand-kept list, so adding a rule is adding a class.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

import kmigrate.rules

if TYPE_CHECKING:
    from types import ModuleType

    from kmigrate.rules.base import Rule


def _family_modules() -> Iterator[ModuleType]:
    """Each ``km*`` module, and each public module of a ``km*`` package, in name order."""
    import pkgutil  # (here, as Rule below: selecting from stored rule facts needs neither)

    for info in sorted(pkgutil.iter_modules(kmigrate.rules.__path__), key=lambda i: i.name):
        if not info.name.startswith("km"):
            continue
        module = importlib.import_module(f"kmigrate.rules.{info.name}")
        yield module
        if not info.ispkg:
            continue
        members = sorted(pkgutil.iter_modules(module.__path__), key=lambda i: i.name)
        for member in members:
            if not member.name.startswith("_"):
                yield importlib.import_module(f"{module.__name__}.{member.name}")


@functools.lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """All registered rule classes, sorted by id; duplicate ids are a bug."""
    from kmigrate.rules.base import Rule

    found: dict[str, type[Rule]] = {}
    for module in _family_modules():
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value.id
                and value.__module__ == module.__name__
            ):
                if value.id in found and found[value.id] is not value:
                    raise RuntimeError(
                        f"duplicate rule id {value.id}: {value} and {found[value.id]}"
                    )
                found[value.id] = value
    return tuple(found[k] for k in sorted(found))


@functools.lru_cache(maxsize=1)
def fact_providers() -> tuple:
    """The cross-file fact providers the rules declare (``Rule.facts``), by name: the
    engine keeps every one's values, whichever rules a run selects. Found without
    importing the rules (a warm re-scan imports none): each lives in a module of
    ``rules/facts/``, and tests/engine/test_fact_provider.py holds the providers found
    there equal to those the rules declare."""
    import pkgutil

    import kmigrate.rules.facts
    from kmigrate.engine import FactProvider

    found = {}
    for info in pkgutil.iter_modules(kmigrate.rules.facts.__path__):
        module = importlib.import_module(f"kmigrate.rules.facts.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, FactProvider)
                and value.__module__ == module.__name__
            ):
                found[value.name] = value
    return tuple(found[name] for name in sorted(found))


def rule_by_id(rule_id: str) -> type[Rule] | None:
    wanted = rule_id.upper()
    for rule in all_rules():
        if rule.id == wanted or rule.name == rule_id:
            return rule
    return None


def _matches(rule: _Named, codes: Iterable[str]) -> bool:
    return any(rule.id.startswith(code.upper()) or rule.name == code for code in codes)


class _Named(Protocol):
    """What selection reads of a rule: a rule class, or a stored summary of one."""

    id: str
    name: str


R = TypeVar("R", bound=_Named)


def select_rules(
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    rules: Sequence[R] | None = None,
) -> list[R]:
    """Rules whose id starts with a ``select`` code (all when empty), minus ``ignore``.

    Codes are ids or prefixes (``KM2``, ``KM20``) or rule names. ``rules``: where to
    choose from (every registered rule class when None; the commands pass a stored
    summary of them, which spares importing every rule module).
    """
    pool = all_rules() if rules is None else rules
    chosen = [r for r in pool if not select or _matches(r, select)]
    if ignore:
        chosen = [r for r in chosen if not _matches(r, ignore)]
    return chosen  # type: ignore[return-value]


def unknown_codes(codes: Iterable[str], rules: Sequence[_Named] | None = None) -> list[str]:
    """Codes that match no rule: a typo in --select should be an error, not silence."""
    pool = all_rules() if rules is None else rules
    return [c for c in codes if not any(_matches(r, [c]) for r in pool)]
