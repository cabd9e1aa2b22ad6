"""Does the converted model still need TensorFlow? Watch who imports it.

On the jax and torch targets nothing should import ``tensorflow``: Keras 3 on those
backends does not, so an import comes from the user's code (a leftover
``import tensorflow as tf``, a ``tf.data`` helper) or from a library it uses. A finder at the
front of ``sys.meta_path`` hands out TensorFlow's own spec with a loader that notes, when the
module is really executed, the frame that asked for it (the innermost frame outside the
standard library and site-packages, else the innermost outside importlib). Mere look-ups
(``importlib.util.find_spec("tensorflow")``, which Keras does to see what is installed) are
not imports and are not counted.

Why record rather than block the import: a run with the import blocked stops at the first
import, which is the one recorded here, so both give the same answer ("needs TensorFlow:
models.py:3 ``import tensorflow as tf``"), and a target that never imported TensorFlow ran
exactly as it would have without it installed. Recording keeps the same run's numbers
(a file may keep ``import tensorflow`` for its ``tf.data`` input pipeline, a portable input,
while the model itself is fine) and costs no second process per backend.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import linecache
import os
import sys
import sysconfig
import traceback

WATCHED = "tensorflow"
_LIBRARY_DIRS = tuple(
    {os.path.realpath(sysconfig.get_paths()[key]) for key in ("stdlib", "purelib", "platlib")}
)
_OWN_DIR = os.path.realpath(os.path.dirname(__file__))


def _is_import_machinery(filename: str) -> bool:
    return filename.startswith("<frozen importlib") or "importlib" in filename


def _is_library(filename: str) -> bool:
    path = os.path.realpath(filename)
    return path.startswith(_LIBRARY_DIRS) or path.startswith(_OWN_DIR)


class TensorFlowWatch:
    """A meta-path finder that records the first real import of TensorFlow."""

    def __init__(self):
        self.first: dict | None = None

    def find_spec(self, fullname, path=None, target=None):
        if fullname != WATCHED:
            return None  # submodules only load after the package itself
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _RecordingLoader(spec.loader, self)
        return spec

    def note_import(self) -> None:
        if self.first is None:
            self.first = self._importer()

    def _importer(self) -> dict:
        frames = [f for f in traceback.extract_stack()[:-2] if not _is_import_machinery(f.filename)]
        user = [f for f in frames if not _is_library(f.filename)]
        frame = (user or frames or [None])[-1]
        if frame is None:
            return {"file": "?", "line": 0, "code": "", "user_code": False}
        code = (frame.line or linecache.getline(frame.filename, frame.lineno)).strip()
        return {
            "file": frame.filename,
            "line": frame.lineno,
            "code": code,
            "function": frame.name,
            "user_code": bool(user),
        }

    def install(self) -> TensorFlowWatch:
        if WATCHED in sys.modules:  # already imported (should not happen on jax/torch)
            self.first = {"file": "?", "line": 0, "code": "", "user_code": False, "early": True}
        sys.meta_path.insert(0, self)
        return self

    def verdict(self) -> dict:
        """``{"needs_tensorflow": bool, "importer": {...} | None}`` for the result file."""
        needed = self.first is not None and WATCHED in sys.modules
        return {"needs_tensorflow": needed, "importer": self.first if needed else None}


class _RecordingLoader(importlib.abc.Loader):
    """TensorFlow's loader, telling the watch when the package really executes."""

    def __init__(self, loader, watch: TensorFlowWatch):
        self.loader = loader
        self.watch = watch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.watch.note_import()
        module.__loader__ = self.loader
        return self.loader.exec_module(module)

    def __getattr__(self, name):  # get_resource_reader, is_package, ... of the real loader
        return getattr(self.loader, name)
