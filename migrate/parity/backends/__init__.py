"""The registry of parity backends: one profile module per backend, listed here once.

Everything else (the planner, the worker, the training check, the help text, the extras
test) reads this registry, so a new backend is one new module holding a `BackendProfile`
named ``PROFILE`` plus one line in `BUILTIN` (or a `register` call for a profile that
lives elsewhere, as the tests do). Importing this package imports no framework.

The worker finds a profile again in its own process by name and by the module that
defines it (`load`), so a profile registered outside kmigrate works in workers too, as
long as its module is importable there.
"""

from __future__ import annotations

import importlib
import importlib.util

from kmigrate.parity.backends.profile import ALL_CHECKS, BackendProfile

__all__ = [
    "ALL_CHECKS",
    "BUILTIN",
    "BackendProfile",
    "by_name",
    "home",
    "installed",
    "load",
    "module_available",
    "names",
    "profiles",
    "register",
    "resolve",
    "unregister",
]

# The built-in profiles, in default order (the order of --backends' default and of reports).
BUILTIN = ("tensorflow", "jax", "torch", "openvino")
_REGISTRY: dict[str, BackendProfile] = {}
_HOMES: dict[str, str] = {}  # profile name -> the module that registers it (for workers)


def _builtins() -> dict[str, BackendProfile]:
    if not _REGISTRY:
        for name in BUILTIN:
            module = importlib.import_module(f"{__name__}.{name}")
            _REGISTRY[module.PROFILE.name] = module.PROFILE
            _HOMES[module.PROFILE.name] = module.__name__
    return _REGISTRY


def register(profile: BackendProfile, module: str) -> BackendProfile:
    """Add (or replace) a backend; its name and aliases become valid in --backends.

    `module` is the importable module that makes this call when imported: a worker imports
    it to find the profile in its own process (`load`)."""
    registry = _builtins()
    taken = {a: p.name for p in registry.values() for a in p.aliases if p.name != profile.name}
    for alias in (profile.name, *profile.aliases):
        if alias in taken or (alias != profile.name and alias in registry):
            raise ValueError(f"backend name '{alias}' is already taken by '{taken.get(alias)}'")
    registry[profile.name] = profile
    _HOMES[profile.name] = module
    return profile


def unregister(name: str) -> None:
    """Remove a registered backend (the tests' own profiles)."""
    _builtins().pop(name, None)
    _HOMES.pop(name, None)


def home(name: str) -> str:
    """The module a worker imports to find the profile `name` (see `register`)."""
    _builtins()
    return _HOMES[name]


def profiles() -> list[BackendProfile]:
    return list(_builtins().values())


def names() -> list[str]:
    return [p.name for p in profiles()]


def by_name(name: str) -> BackendProfile | None:
    """The profile called `name` or one of its aliases (case and spaces ignored)."""
    key = name.strip().lower()
    for profile in profiles():
        if key == profile.name or key in profile.aliases:
            return profile
    return None


def resolve(name: str) -> BackendProfile:
    """The profile a parent process names; KeyError when there is none."""
    profile = by_name(name)
    if profile is None:
        raise KeyError(name)
    return profile


def load(name: str, module: str) -> BackendProfile:
    """In a worker: the profile `name`, importing `module` (where it was defined) first."""
    profile = by_name(name)
    if profile is None:
        importlib.import_module(module)  # a module that registers itself when imported
        profile = resolve(name)
    return profile


def module_available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def installed() -> list[BackendProfile]:
    """Profiles whose packages (and Keras 3) are importable here, in registry order."""
    if not module_available("keras"):
        return []
    return [p for p in profiles() if all(module_available(m) for m in p.modules)]
