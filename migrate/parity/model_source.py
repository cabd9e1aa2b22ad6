"""Where a worker's model comes from: the user's module (a factory) or a saved ``.keras``
file, imported from this side's own tree only.

Each process holds one side (the reference or one target) and refuses to go on when a
module of the other side's tree was imported: the before and after trees often have modules
of the same name, and one process would silently run the original twice.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

from kmigrate.parity import keras2_alias
from kmigrate.parity.tracebacks import StageError, is_library_file, under


def import_file(path: str, name_hint: str):
    """Import a module from a file, with its folder on sys.path for sibling imports."""
    folder = str(Path(path).parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = f"kmigrate_parity_{name_hint}_{Path(path).stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise StageError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_USER_FILES: dict[str, str | None] = {}  # a module's file -> its real path, None: a library


def _user_file(file: str) -> str | None:
    """The real path of a module's file, None for installed code (`is_library_file`);
    remembered: a batched worker checks every loaded module for every model, and thousands
    of TensorFlow's own would otherwise be resolved again each time (a file's real path
    does not change during a run)."""
    if file in _USER_FILES:
        return _USER_FILES[file]
    path = os.path.realpath(file)
    found = None if is_library_file(path) else path
    if os.path.isabs(file):  # a relative one depends on the current folder
        _USER_FILES[file] = found
    return found


class ModelSource:
    """Loads the user's code and builds the model for one task."""

    def __init__(self, task: dict, result: dict):
        self.task = task
        self.result = result
        self.module = None
        self.custom_objects: dict = {}

    def load_user_code(self) -> None:
        spec = self.task["model"]
        if self.task["keras"] == 2:  # standalone Keras 2 code (`import keras`) runs on tf_keras
            self.result["keras_alias"] = keras2_alias.install()
        for folder in reversed(spec.get("sys_path") or []):
            if folder not in sys.path:
                sys.path.insert(0, folder)
        if self.task.get("custom_objects"):
            module = import_file(self.task["custom_objects"], "custom_objects")
            self.custom_objects = {
                name: value
                for name, value in vars(module).items()
                if callable(value) and getattr(value, "__module__", None) == module.__name__
            }
        if spec["kind"] == "factory":
            if spec.get("path"):
                self.module = import_file(spec["path"], self.task["role"])
            else:
                self.module = importlib.import_module(spec["module"])
            if not hasattr(self.module, spec["factory"]):
                raise StageError(f"{spec['label']}: the module has no '{spec['factory']}'")

    def check_isolation(self) -> None:
        """No module of the other side's tree may be loaded in this process."""
        own = [os.path.realpath(p) for p in (self.task["model"].get("sys_path") or [])]
        for root in self.task.get("forbidden_roots") or []:
            root = os.path.realpath(root)
            for name, module in list(sys.modules.items()):
                file = getattr(module, "__file__", None)
                if not file:
                    continue
                path = _user_file(file)
                if path is None:  # a virtualenv inside the project is not its tree
                    continue
                if under(path, root) and not any(under(path, o) and o != root for o in own):
                    raise StageError(
                        f"module '{name}' was imported from {path}, which belongs to the other "
                        f"side of the comparison ({root}); the two trees must not share a "
                        f"process or an import root"
                    )

    def build(self, runtime):
        """The model: loaded from the .keras file, or returned by the factory. Every side
        seeds before the factory runs, so random layers start from the same state on every
        run (the targets then get the reference's weights)."""
        spec = self.task["model"]
        if spec["kind"] == "keras_file":
            kwargs = {"custom_objects": self.custom_objects or None, "compile": False}
            if not runtime.legacy:
                kwargs["safe_mode"] = self.task.get("safe_mode", True)
            model = runtime.keras.saving.load_model(spec["path"], **kwargs)
        else:
            factory = getattr(self.module, spec["factory"])
            runtime.seed(int(self.task["inputs"]["seed"]))
            model = factory(**(self.task.get("factory_kwargs") or {}))
        if not (callable(model) and hasattr(model, "weights")):
            raise StageError(
                f"{spec['label']} returned {type(model).__name__}, not a Keras model; "
                f"point kmigrate parity at the function that returns the model"
            )
        return model
