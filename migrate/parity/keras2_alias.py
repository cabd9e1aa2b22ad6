"""Standalone Keras 2 code (``import keras``, ``from keras import backend as K``) run on
``tf_keras``, the Keras 2 that TensorFlow still ships.

A reference run of legacy code needs Keras 2, but ``import keras`` now gives Keras 3,
whose ``keras.backend`` has no ``int_shape`` or ``mean``: the original of a keras-contrib
or bert4keras layer could not run at all. In a Keras 2 reference worker, ``keras`` and
every ``keras.X`` therefore name the very module objects of ``tf_keras`` and
``tf_keras.X`` (one module each, not a copy, so classes and registries are shared with
``tensorflow.keras`` under ``TF_USE_LEGACY_KERAS=1``). A ``keras.X`` that ``tf_keras``
lacks (``keras.engine.topology``) fails to import with Python's own error. ``keras``
itself is a thin module named ``keras`` that reads everything from ``tf_keras``: code
that checks ``keras.__name__ == "keras"`` to tell standalone Keras from ``tf.keras``
(keras-contrib does) sees what it saw in 2019.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType

_PREFIX = "keras"
_TARGET = "tf_keras"


class _Keras2Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self._found: dict[str, ModuleType] = {}
        self._specs: dict[str, object] = {}  # the tf_keras modules' own specs

    def find_spec(self, fullname: str, path=None, target=None):  # noqa: ANN001 - importlib API
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        try:
            module = importlib.import_module(_TARGET + fullname[len(_PREFIX) :])
        except ImportError:
            return None  # then Python reports `No module named 'keras.X'`
        self._found[fullname] = module
        self._specs[fullname] = module.__spec__
        return importlib.util.spec_from_loader(
            fullname, self, is_package=hasattr(module, "__path__")
        )

    def create_module(self, spec) -> ModuleType:  # noqa: ANN001 - importlib API
        found = self._found[spec.name]
        return _TopLevel(found) if spec.name == _PREFIX else found

    def exec_module(self, module: ModuleType) -> None:
        if not isinstance(module, _TopLevel):
            # The import system gave the module the alias' spec: it keeps its own.
            module.__spec__ = self._specs[module.__spec__.name]  # type: ignore[union-attr]


class _TopLevel(ModuleType):
    """``keras``: named so, everything else read from ``tf_keras``."""

    def __init__(self, target: ModuleType) -> None:
        super().__init__(_PREFIX, target.__doc__)
        self.__path__ = list(getattr(target, "__path__", []))
        self._target = target

    def __getattr__(self, name: str):  # noqa: ANN204 - any attribute of tf_keras
        return getattr(self._target, name)


def install() -> bool:
    """Make ``keras`` mean ``tf_keras`` in this process; False when Keras 3 is already
    imported (then nothing changes) or ``tf_keras`` is missing."""
    if _PREFIX in sys.modules or importlib.util.find_spec(_TARGET) is None:
        return False
    sys.meta_path.insert(0, _Keras2Alias())
    return True
