"""One worker process, many models: what each model may not leave to the next.

A batched worker (`worker.main`) imports its framework once and runs model after model.
On Linux it is a fork server (`fork_server`): each model runs in a child forked from the
worker's freshly imported state and gone with it, so nothing below is needed there. This
module keeps models apart where the worker does not fork (no ``os.fork``, or a thread
running in the worker, when forking is unsafe) and the models run in the worker itself.

A model must then find the process as it would find a fresh one, where it matters for the
numbers: its own modules (a converted ``mylayers.py`` and an original ``mylayers.py``
share a module name, and ``sys.modules`` would hand the second model the first one's),
its own import root (``sys.path``), the environment, and Keras's global settings
(``floatx``, ``epsilon``, the image data format, the dtype policy, the registry of custom
objects: legacy code sets them at import time, and ``get_custom_objects()["gelu"] = ...``
changes what a built-in name means). `ModelIsolation` puts all of that back after each
model; Keras's own session (layer names, graph state) is cleared too.

What cannot be put back is a framework another model imported: once one model on a jax or
torch worker imported TensorFlow, the next model's "runs without TensorFlow" would be
unprovable, so a worker that does not fork asks for a fresh process instead
(`needs_fresh_process`; the parent starts one for the rest of the models). A fork server
never needs one: TensorFlow, imported by a child, dies with it.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from types import ModuleType

from kmigrate.parity.tf_watch import WATCHED
from kmigrate.parity.tracebacks import is_library_file

# The exit status of a worker that stopped early, its results so far written, because the
# next model needs a fresh process; the parent starts one for the remaining models.
FRESH_PROCESS_EXIT = 75

# Keras packages -> (getter, setter) pairs of the global settings a model may change.
SETTINGS = (
    ("backend.floatx", "backend.set_floatx"),
    ("backend.epsilon", "backend.set_epsilon"),
    ("backend.image_data_format", "backend.set_image_data_format"),
    ("mixed_precision.global_policy", "mixed_precision.set_global_policy"),
)
# where each Keras keeps its registry of custom objects (module, dict attributes)
REGISTRIES = {
    "keras": (
        "keras.src.saving.object_registration",
        ("GLOBAL_CUSTOM_OBJECTS", "GLOBAL_CUSTOM_NAMES"),
    ),
    "tf_keras": (
        "tf_keras.src.saving.object_registration",
        ("_GLOBAL_CUSTOM_OBJECTS", "_GLOBAL_CUSTOM_NAMES"),
    ),
}

_defaults: dict[str, list] = {}  # Keras package -> its settings as first imported


def _attribute(root: ModuleType, dotted: str):
    value = root
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def remember_keras_defaults(keras: ModuleType) -> None:
    """Note Keras's settings right after its import (once per package and process): the
    values every later model starts from."""
    package = keras.__name__.split(".")[0]
    if package in _defaults:
        return
    values = []
    for getter, setter in SETTINGS:
        try:
            values.append((setter, _attribute(keras, getter)()))
        except Exception:  # noqa: BLE001, S112 - a Keras without the setting: nothing to reset
            continue
    _defaults[package] = values


def prepare_process(tasks: list[dict]) -> None:
    """Before the first of several models: import Keras and note its settings, so that they
    are the ones every model starts from, not those the first model's import-time code set
    (``K.set_floatx("float64")`` at the top of a module). One model alone needs nothing.

    Then the objects alive after the framework's import (its modules, the bulk of the
    heap) are moved out of the garbage collector's sight (`gc.freeze`): Keras's
    ``clear_session`` after each model runs a full collection, which otherwise walks all of
    TensorFlow, jax or torch again (0.1-0.2 s a model and backend); only what the models
    made since is walked. In a fork server's children the collector also never writes to
    the frozen objects, so their memory pages stay shared with the server, not copied.
    Nothing is freed that would have been: the framework's modules stay imported for the
    life of the process, and no number depends on when memory is freed."""
    if len(tasks) < 2:
        return
    package = "tf_keras" if tasks[0].get("keras") == 2 else "keras"
    try:
        keras = importlib.import_module(package)
    except Exception:  # noqa: BLE001 - the first model's import stage reports it
        return
    remember_keras_defaults(keras)
    gc.collect()  # garbage of the import is freed, not frozen
    gc.freeze()


def _registries() -> list[tuple[dict, dict]]:
    """(registry dict, a copy of its contents) for every imported Keras."""
    pairs = []
    for module_name, attributes in REGISTRIES.values():
        module = sys.modules.get(module_name)
        for attribute in attributes:
            table = getattr(module, attribute, None) if module else None
            if isinstance(table, dict):
                pairs.append((table, dict(table)))
    return pairs


def own_module(module: object, first_party: tuple[str, ...]) -> bool:
    """A module of the user's tree (not installed code, not kmigrate): loaded from a file
    or a namespace folder outside the libraries."""
    file = getattr(module, "__file__", None)
    paths = [file] if file else list(getattr(module, "__path__", None) or [])
    if not paths:
        return False
    for path in paths:
        real = os.path.realpath(str(path))
        if is_library_file(real) and not real.startswith(first_party):
            return False
    return True


class ModelIsolation:
    """Around one model in a batched worker: on exit, the process is as the model found it
    (see the module docstring)."""

    def __init__(self, task: dict):
        roots = [*(task.get("model", {}).get("sys_path") or [])]
        # a model folder inside site-packages (a test fixture tree) is still the model's own
        self.first_party = tuple(os.path.realpath(r) + os.sep for r in roots)
        self.modules: set[str] = set()
        self.path: list[str] = []
        self.environ: dict[str, str] = {}
        self.registries: list[tuple[dict, dict]] = []

    def __enter__(self) -> ModelIsolation:
        self.modules = set(sys.modules)
        self.path = list(sys.path)
        self.environ = dict(os.environ)
        self.registries = _registries()
        return self

    def __exit__(self, *exc_info) -> None:
        purged = set(self.purge_modules())
        sys.path[:] = self.path
        if dict(os.environ) != self.environ:
            os.environ.clear()
            os.environ.update(self.environ)
        self.reset_registries(purged)
        self.reset_keras()

    def purge_modules(self) -> list[str]:
        """Forget the modules this model brought in from its own tree; the names purged."""
        purged = [
            name
            for name, module in list(sys.modules.items())
            if name not in self.modules and own_module(module, self.first_party)
        ]
        for name in purged:
            del sys.modules[name]
        return purged

    def reset_registries(self, purged: set[str]) -> None:
        """Custom objects: what the model's code registered goes (a user ``gelu`` under the
        built-in name included), what it overwrote comes back; what a library registered
        when it was imported stays, as the library stays imported."""
        before = {id(table): contents for table, contents in self.registries}
        for table, _ in _registries():
            for key, value in list(table.items()):
                if _defined_in(value, purged):
                    del table[key]
            for key, value in before.get(id(table), {}).items():
                table.setdefault(key, value)

    def reset_keras(self) -> None:
        for package, values in _defaults.items():
            keras = sys.modules.get(package)
            for setter, value in values if keras else ():
                try:
                    _attribute(keras, setter)(value)
                except Exception:  # noqa: BLE001, S112 - best effort, as remembered
                    continue
            clear = getattr(getattr(keras, "backend", None), "clear_session", None)
            if clear is not None:
                try:
                    clear()
                except Exception:  # noqa: BLE001 - a failed reset only changes auto names
                    pass


def _defined_in(value: object, modules: set[str]) -> bool:
    owner = getattr(value, "__module__", None) or getattr(type(value), "__module__", None)
    return owner in modules


def needs_fresh_process(remaining: list[dict]) -> bool:
    """True when a model still to run asks whether it imports TensorFlow and an earlier
    model already did: only a fresh process can tell."""
    return WATCHED in sys.modules and any(t.get("watch_tensorflow") for t in remaining)
