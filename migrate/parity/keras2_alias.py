"""Standalone Keras 2 code (``import keras``, ``from keras import backend as K``) run on
``tf_keras``, the Keras 2 that TensorFlow still ships.

A reference run of legacy code needs Keras 2, but ``import keras`` now gives Keras 3,
whose ``keras.backend`` has no ``int_shape`` or ``mean``: the original of a keras-contrib
or bert4keras layer could not run at all. In a Keras 2 reference worker, ``keras`` and
every ``keras.X`` therefore name tf_keras's modules: ``keras.layers`` is the very module
object ``tf_keras.layers`` (not a copy, so classes and registries are shared with
``tensorflow.keras`` under ``TF_USE_LEGACY_KERAS=1``), and a Keras 2.x path that tf_keras
keeps under another name is served from there (`keras2_paths`: ``keras.utils.
generic_utils``, ``keras.engine.topology``). A ``keras.X`` tf_keras has nothing for
raises `Keras2ModuleNotFoundError`, which says so in one sentence (a ``ModuleNotFoundError``,
so ``try: ... except ImportError`` fallbacks in legacy code still work). ``keras`` itself
is a thin module named ``keras`` that reads everything from ``tf_keras``: code that checks
``keras.__name__ == "keras"`` to tell standalone Keras from ``tf.keras`` (keras-contrib
does) sees what it saw in 2019.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType

from kmigrate.parity.keras2_paths import MOVED_MODULES, MovedModule, removed_reason

_PREFIX = "keras"
_TARGET = "tf_keras"
_INTERNALS = "tf_keras.src"  # where Keras 2.6-2.12's keras.X internals live in tf_keras


class Keras2ModuleNotFoundError(ModuleNotFoundError):
    """A ``keras.X`` that tf_keras does not provide under any name."""


def missing_message(fullname: str) -> str:
    reason = removed_reason(fullname)
    if reason:
        return (
            f"{fullname} is a Keras 2.x module that tf_keras does not provide ({reason}); "
            f"the original cannot run on Keras 2 as it is written"
        )
    suffix = fullname[len(_PREFIX) :]
    return (
        f"No module named '{fullname}': tf_keras has neither {_TARGET}{suffix} nor "
        f"{_INTERNALS}{suffix}, and it is not a Keras 2.x path kmigrate maps "
        f"(parity/keras2_paths.py)"
    )


def _import_if_present(name: str) -> ModuleType | None:
    """`name` imported, None when it (or a parent package) does not exist; an import error
    raised inside an existing module is a real error and propagates."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and (name == error.name or name.startswith(error.name + ".")):
            return None
        raise


def _attribute(where: str):
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute)


def served_module(fullname: str) -> ModuleType:
    """What ``import fullname`` (a ``keras`` path) gives in a Keras 2 reference process."""
    entry: MovedModule | None = MOVED_MODULES.get(fullname)
    if entry is not None:
        target = importlib.import_module(entry.module)
        if not entry.moved:
            return target
        moved = {name: _attribute(where) for name, where in entry.moved.items()}
        return _Keras2Module(fullname, target, moved)
    suffix = fullname[len(_PREFIX) :]
    candidates = [_TARGET + suffix] + ([_INTERNALS + suffix] if suffix else [])
    for candidate in candidates:
        module = _import_if_present(candidate)
        if module is not None:
            return _Keras2Module(fullname, module, {}) if fullname == _PREFIX else module
    raise Keras2ModuleNotFoundError(missing_message(fullname), name=fullname)


class _Keras2Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self._found: dict[str, ModuleType] = {}
        self._specs: dict[str, object] = {}  # the tf_keras modules' own specs

    def find_spec(self, fullname: str, path=None, target=None):  # noqa: ANN001 - importlib API
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        module = served_module(fullname)
        self._found[fullname] = module
        self._specs[fullname] = module.__spec__
        return importlib.util.spec_from_loader(
            fullname, self, is_package=hasattr(module, "__path__")
        )

    def create_module(self, spec) -> ModuleType:  # noqa: ANN001 - importlib API
        return self._found[spec.name]

    def exec_module(self, module: ModuleType) -> None:
        if not isinstance(module, _Keras2Module):
            # The import system gave the module the alias' spec: it keeps its own.
            module.__spec__ = self._specs[module.__spec__.name]  # type: ignore[union-attr]


class _Keras2Module(ModuleType):
    """A module named as legacy code imports it (``keras``, ``keras.engine``): the names
    tf_keras moved elsewhere are its own, everything else is read from `target`."""

    def __init__(self, name: str, target: ModuleType, moved: dict[str, object]) -> None:
        super().__init__(name, target.__doc__)
        if hasattr(target, "__path__"):  # a package: its submodules import through it
            self.__path__ = list(target.__path__)
        self._target = target
        public = getattr(target, "__all__", None)
        if public is None:
            public = [n for n in dir(target) if not n.startswith("_")]
        self.__all__ = sorted({*public, *moved})  # `from keras.engine import *`
        vars(self).update(moved)

    def __getattr__(self, name: str):  # noqa: ANN204 - any attribute of the target
        return getattr(self._target, name)


def install() -> bool:
    """Make ``keras`` mean ``tf_keras`` in this process; False when Keras 3 is already
    imported (then nothing changes) or ``tf_keras`` is missing."""
    if _PREFIX in sys.modules or importlib.util.find_spec(_TARGET) is None:
        return False
    sys.meta_path.insert(0, _Keras2Alias())
    return True
