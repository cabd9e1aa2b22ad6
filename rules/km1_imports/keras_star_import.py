"""KM109: a module reads names that only a Keras 2 star import gave it.

``from keras.models import *`` gave a Keras 2 module more than the public API: Keras 2's
modules had no ``__all__``, so a star import also brought what they imported themselves
(``keras.models`` and ``keras.callbacks`` did ``from . import backend as K``). Legacy code
leans on that (``K.mean(...)`` with no import of ``K``). Keras 3's public modules export
their API only, so such a name is undefined (NameError) once the code runs on Keras 3,
and no other rule sees its calls: the name resolves to nothing.
"""

from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Iterable

from kmigrate.engine import ImportSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras_api import is_module, keras3_api
from kmigrate.rules.common.keras_star_imports import star_imports

# What to write instead, for the names Keras 2 code took from star imports most often.
_IMPORT_ADVICE = {
    "K": "`from keras import backend as K`, and kmigrate converts the `K.*` calls",
    "np": "`import numpy as np`",
}
_MODULE_DUNDERS = frozenset(
    {"__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__", "__path__"}
)
# A module that edits its own namespace at run time binds names no reading can see.
_DYNAMIC_NAMESPACE = frozenset({"globals", "locals", "vars", "exec", "eval", "__import__"})


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the module binds anywhere (any scope): a name bound in one scope and
    read in another is not taken for a missing one, so the rule errs toward silence."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).partition(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound


def _free_names(tree: ast.Module) -> dict[str, ast.Name] | None:
    """Names the module reads but never binds (first read of each), or None when the
    module's namespace is not knowable from its text."""
    reads: dict[str, ast.Name] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in _DYNAMIC_NAMESPACE:
                return None
            previous = reads.get(node.id)
            if previous is None or (node.lineno, node.col_offset) < (
                previous.lineno,
                previous.col_offset,
            ):
                reads[node.id] = node
    known = _bound_names(tree) | set(dir(builtins)) | _MODULE_DUNDERS
    return {name: node for name, node in reads.items() if name not in known}


@functools.lru_cache(maxsize=64)
def _keras3_exports(path: str) -> frozenset[str]:
    """The names ``from keras.<path> import *`` binds in Keras 3 (its public API)."""
    prefix = f"keras.{path}." if path else "keras."
    return frozenset(
        name[len(prefix) :].partition(".")[0] for name in keras3_api() if name.startswith(prefix)
    )


class KerasStarImport(Rule):
    id = "KM109"
    name = "keras-star-import"
    summary = "A module reads names that only a Keras 2 star import gave it (`K`...)."
    rationale = (
        "Keras 2's modules had no `__all__`, so `from keras.models import *` also brought "
        "what `keras.models` imported itself, `K` (the backend) among them, and legacy code "
        "calls `K.mean(...)` without importing `K`. Keras 3's modules export their public "
        "API only: the name is undefined under Keras 3 (NameError when the line runs), and "
        "its calls are invisible to every other rule because the name resolves to nothing."
    )
    fix_safety = (
        "Reported, never rewritten: the finding names each missing name and what to import "
        "instead. Reported only when every star import of the module is from a Keras 3 "
        "module (another star import may bind the name) and the module does not edit its "
        "own namespace (`globals()`, `exec`)."
    )
    severity = Severity.ERROR
    wants_imports = True
    examples = [
        Flagged(
            """
            from keras.layers import *
            from keras.models import *

            def mean_loss(y_true, y_pred):
                return K.mean(K.square(y_pred - y_true))

            model = Sequential([Dense(1)])
            """
        ),
        Clean(
            """
            from keras.layers import *
            from keras.models import *
            import keras.backend as K

            def mean_loss(y_true, y_pred):
                return K.mean(K.square(y_pred - y_true))

            model = Sequential([Dense(1)])
            """
        ),
        Clean(  # another star import may bind `K`: not knowable from this module
            """
            from keras.layers import *
            from .backend import *

            def mean_loss(y_true, y_pred):
                return K.mean(y_pred - y_true)
            """
        ),
    ]

    def check_import(self, site: ImportSite) -> Iterable[Report]:
        if not (site.is_from and site.modules[-1].endswith(".*")):
            return
        stars = star_imports(site.module)
        if site.node is not stars[0].node:
            return  # one finding per module, on its first star import
        paths = [star.keras_path for star in stars]
        if any(path is None or not is_module(path) for path in paths):
            return  # a non-Keras star import, or a module Keras 3 lacks (KM103 says so)
        free = _free_names(site.module.tree)
        if not free:
            return
        exported = set().union(*(_keras3_exports(p) for p in paths))  # type: ignore[arg-type]
        missing = sorted(name for name in free if name not in exported)
        if not missing:
            return
        modules = ", ".join(f"`{star.module}`" for star in stars)
        them = "it" if len(missing) == 1 else "them"
        said = ", ".join(f"`{name}` (line {free[name].lineno})" for name in missing)
        advice = "; ".join(
            f"for `{name}` write {_IMPORT_ADVICE[name]}"
            for name in missing
            if name in _IMPORT_ADVICE
        )
        yield Report(
            site,
            f"{said} {'is' if len(missing) == 1 else 'are'} bound nowhere in this module: "
            f"only the star imports of {modules} can bring {them}. "
            "Keras 2's modules exported their own imports too (`K` among them); Keras 3's "
            "export their public API "
            f"only, so under Keras 3 {'it raises' if len(missing) == 1 else 'they raise'} "
            "NameError: import each name by name" + (f"; {advice}" if advice else ""),
        )
