"""Models on one backend, in their own process: ``python -m kmigrate.parity.worker JOB.json``.

The parent sets ``KERAS_BACKEND`` (and ``TF_USE_LEGACY_KERAS=1`` for a Keras 2 reference)
before starting this process, because Keras picks its backend at import time. The job file
lists tasks, run in order in this one process so the framework is imported once (on
TensorFlow: the original as reference, then the converted model); each task says what to
build, where the input batch and the weights are, and where to write results.

Steps of a task: load the user's module (which imports its framework), import Keras, build
or load the model; a target then waits until the reference has written the weights and the batch (so
the slow imports of all backends overlap); then inputs, weights, and the checks the job
asks for, each run as users run the model: ``call`` (``model(x, training=False)`` while
recording every layer's outputs), ``predict`` (``model.predict``, compiled the way the
backend compiles it by default: jit on jax) and ``train`` (one SGD step, `train_step`);
optionally a SavedModel export served back through ``tf.saved_model.load``. A check that
raises is recorded with the layer whose code raised, and the next check still runs.

Each process holds one side only (the reference or one target) and refuses to go on when a
module of the other side's tree was imported: the before and after trees often have modules
of the same name, and one process would silently run the original twice.

Results go to a JSON file and an ``.npz``; an exception is recorded with the stage it
happened in and the tail of its traceback, so the parent can say what broke where.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import json
import os
import random
import re
import sys
import sysconfig
import time
import traceback
from pathlib import Path

import numpy as np

from kmigrate.parity import keras2_alias
from kmigrate.parity.batch import InputBatch
from kmigrate.parity.keras2_alias import Keras2ModuleNotFoundError
from kmigrate.parity.plan import ParityUsageError
from kmigrate.parity.tf_watch import TensorFlowWatch
from kmigrate.parity.train_step import TrainingCheck
from kmigrate.parity.weights import WeightGroup, WeightMismatchError, match_groups, weight_order

TRACEBACK_LINES = 40
EXCEPTION_LINES = 6
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
WAIT_POLL_SECONDS = 0.05


class StageError(Exception):
    """A failure with a message meant for the user (no traceback needed)."""


_LIBRARY_DIRS = tuple(
    {os.path.realpath(sysconfig.get_paths()[key]) for key in ("stdlib", "purelib", "platlib")}
)


def _is_user_frame(filename: str) -> bool:
    path = os.path.realpath(filename)
    return not path.startswith(_LIBRARY_DIRS) and path != os.path.realpath(__file__)


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """The root cause first, the exception that surfaced last."""
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return chain[::-1]


def _frames_summary(exc: BaseException) -> list[str]:
    frames = traceback.extract_tb(exc.__traceback__)
    keep = {i for i, frame in enumerate(frames) if _is_user_frame(frame.filename)}
    keep.update(range(max(0, len(frames) - 2), len(frames)))
    lines = []
    previous = -1
    for i in sorted(keep):
        if i != previous + 1:
            lines.append("  ...")
        lines.extend(traceback.format_list([frames[i]])[0].rstrip("\n").splitlines())
        previous = i
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    lines.extend(message[:EXCEPTION_LINES])
    return lines


def _traceback_tail(exc: BaseException) -> str:
    """The frames of the user's code, the last library frames and the exception, for each
    exception in the chain (Keras re-raises errors from inside a layer's call()).

    Framework tracebacks are long; what helps is the line of model code that failed and
    the library call it made. Skipped frames are marked with "...".
    """
    lines = ["Traceback (most recent call last, library frames elided):"]
    for n, link in enumerate(_exception_chain(exc)):
        if n:
            lines.append("During handling of the above exception, another exception occurred:")
        lines.extend(_frames_summary(link))
    if len(lines) > TRACEBACK_LINES:
        lines = lines[: TRACEBACK_LINES // 2] + ["  ..."] + lines[-(TRACEBACK_LINES // 2) :]
    return "\n".join(lines)


def _plain(text: str) -> str:
    """Keras colours parts of its messages; reports want plain text."""
    return ANSI_ESCAPE.sub("", text)


def _import_site(exc: BaseException) -> str:
    """``file:line: statement`` of the user's code that ran the failed import."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<") and not _is_library_file(os.path.realpath(f.filename))
    ]
    if not frames:
        return ""
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno}: {(frame.line or '').strip()}"


def _error_info(stage: str, exc: BaseException) -> dict:
    if isinstance(exc, Keras2ModuleNotFoundError):  # one sentence says it all
        site = _import_site(exc)
        return {
            "stage": stage,
            "type": type(exc).__name__,
            "message": f"{exc}; imported at {site}" if site else str(exc),
            "traceback": "",
        }
    message = str(exc).strip() or type(exc).__name__
    info = {
        "stage": stage,
        "type": type(exc).__name__,
        "message": _plain(message),
        "traceback": ""
        if isinstance(exc, StageError | ParityUsageError)
        else _plain(_traceback_tail(exc)),
    }
    root = _exception_chain(exc)[0]
    if root is not exc and exc.__cause__ is None:  # failed while handling `root`: the real error
        first = (str(root).strip().splitlines() or [""])[0]
        info["cause"] = _plain(f"{type(root).__name__}: {first}" if first else type(root).__name__)
    return info


def _import_file(path: str, name_hint: str):
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


_PACKAGE_DIR = os.path.realpath(os.path.dirname(os.path.dirname(__file__)))


def _is_library_file(path: str) -> bool:
    """Installed code (site-packages, the standard library, kmigrate itself)."""
    parts = path.split(os.sep)
    return (
        path.startswith(_LIBRARY_DIRS)
        or "site-packages" in parts
        or "dist-packages" in parts
        or _under(path, _PACKAGE_DIR)
    )


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _savable(array: np.ndarray) -> np.ndarray:
    """np.savez cannot store bfloat16 and friends (ml_dtypes): widen them to float32."""
    array = np.asarray(array)
    if array.dtype.kind not in "biufc":
        return array.astype(np.float32)
    return array


def _flatten(value, prefix: str = "output") -> list[tuple[str, object]]:
    """Nested outputs (list / tuple / dict) as (name, tensor) pairs, None skipped."""
    if value is None:
        return []
    if isinstance(value, dict):
        items = []
        for key in sorted(value, key=str):
            items.extend(_flatten(value[key], f"{key}"))
        return items
    if isinstance(value, list | tuple):
        if len(value) == 1:
            return _flatten(value[0], prefix)
        items = []
        for i, item in enumerate(value):
            items.extend(_flatten(item, f"{prefix}_{i}"))
        return items
    return [(prefix, value)]


class Worker:
    def __init__(self, task: dict):
        self.task = task
        self.result: dict = {
            "status": "ok",
            "role": task["role"],
            "backend": task["backend"],
            "keras_major": task["keras"],
            "timings": {},
            "notes": [],
        }
        self.arrays: dict[str, np.ndarray] = {}
        self.keras = None
        self.model = None
        self.module = None
        self.custom_objects: dict = {}
        self.inputs: list[np.ndarray] = []

    # -- framework helpers that differ between Keras 3 and Keras 2 (tf_keras) --------------

    @property
    def legacy(self) -> bool:
        return self.task["keras"] == 2

    def to_numpy(self, tensor) -> np.ndarray:
        if self.legacy:
            return np.asarray(tensor.numpy() if hasattr(tensor, "numpy") else tensor)
        return np.asarray(self.keras.ops.convert_to_numpy(tensor))

    def dtype_name(self, tensor) -> str:
        dtype = getattr(tensor, "dtype", None)
        if dtype is None:
            return str(np.asarray(tensor).dtype)
        if not self.legacy:
            try:
                return self.keras.backend.standardize_dtype(dtype)
            except Exception:  # noqa: BLE001 - fall through to the generic spelling
                pass
        name = getattr(dtype, "name", None) or str(dtype)
        return name.replace("torch.", "")

    def children(self, layer) -> list:
        try:
            return list(layer._flatten_layers(include_self=False, recursive=False))
        except (AttributeError, TypeError):
            return list(getattr(layer, "layers", []) or [])

    def layer_tree(self) -> list[tuple[str, object]]:
        """Every sub-layer with its path inside the model, depth first, each layer once."""
        seen: set[int] = {id(self.model)}
        tree: list[tuple[str, object]] = []

        def walk(layer, prefix: str) -> None:
            for child in self.children(layer):
                if id(child) in seen:
                    continue
                seen.add(id(child))
                path = f"{prefix}/{child.name}" if prefix else child.name
                tree.append((path, child))
                walk(child, path)

        walk(self.model, "")
        return tree

    def weight_groups(self) -> list[tuple[WeightGroup, list]]:
        """Each layer's own variables (not its sub-layers'), in a stable order."""
        claimed: set[int] = set()
        groups = []
        for path, layer in [("", self.model), *self.layer_tree()]:
            inner = {id(w) for child in self.children(layer) for w in child.weights}
            own = [w for w in layer.weights if id(w) not in inner and id(w) not in claimed]
            if not own:
                continue
            claimed.update(id(w) for w in own)
            group = WeightGroup(
                path=path or "<model>",
                class_name=type(layer).__name__,
                names=tuple(str(getattr(w, "path", None) or w.name) for w in own),
                shapes=tuple(tuple(int(d) for d in w.shape) for w in own),
            )
            groups.append((group, own))
        return groups

    # -- stages ----------------------------------------------------------------------------

    def enter(self, stage: str) -> None:
        """Note the stage, in the result and in a file the parent reads after a time-out."""
        self.stage = stage
        if self.task.get("stage_file"):
            Path(self.task["stage_file"]).write_text(stage, encoding="utf-8")

    def run(self) -> None:
        started = time.perf_counter()
        self.stage = "load"
        watch = TensorFlowWatch().install() if self.task.get("watch_tensorflow") else None
        try:
            self.enter("load")
            self.load_user_code()
            self.check_isolation()
            self.enter("import")
            self.import_keras()
            self.enter("build")
            self.build_model()
            if self.task.get("wait_for"):
                self.enter("wait")
                self.wait_for_reference()
            self.enter("inputs")
            self.prepare_inputs()
            self.enter("build")
            self.ensure_built()
            self.enter("weights")
            self.transfer_weights()
        except BaseException as exc:  # noqa: BLE001 - every failure is reported, none lost
            self.result["status"] = "error"
            self.result["error"] = self.error_info(self.stage, exc)
        else:
            self.run_checks()
            if self.task.get("export_dir"):
                self.enter("export")
                self.export()
        if watch is not None:
            self.result["tensorflow"] = watch.verdict()
        self.result["timings"]["total"] = time.perf_counter() - started

    def run_checks(self) -> None:
        """Each check on its own: one that raises does not hide the others' results."""
        self.result["checks"] = {}
        for check in self.task.get("checks") or ["call"]:
            self.enter(check)
            started = time.perf_counter()
            saved = self.snapshot_state()
            try:
                getattr(self, f"check_{check}")()
                self.result["checks"][check] = {"status": "ok"}
            except BaseException as exc:  # noqa: BLE001 - reported per check
                # a compiled step that fails half way can leave variables without values
                # (Keras on jax empties them while a jitted function runs): put them back
                self.restore_state(saved)
                info = self.error_info(check, exc)
                self.result["checks"][check] = {"status": "error", "error": info}
                if check == "call" and self.task["role"] == "reference":
                    self.result["status"] = "error"  # nothing to compare with
                    self.result["error"] = info
                    return
            self._timed(check, started)

    def snapshot_state(self) -> list[tuple[object, np.ndarray]]:
        """Every readable model variable with its value: weights plus seed-generator states
        (Keras 3 keeps those out of ``weights``). One that cannot be read (never
        initialised) is left out: there is nothing to put back."""
        pairs = []
        for variable in getattr(self.model, "variables", None) or self.model.weights:
            try:
                pairs.append((variable, np.array(self.to_numpy(variable))))
            except Exception:  # noqa: BLE001, S112 - unreadable: nothing to restore
                continue
        return pairs

    def restore_state(self, snapshot: list[tuple[object, np.ndarray]]) -> None:
        for variable, value in snapshot:
            variable.assign(self.as_variable_dtype(value, variable))

    def error_info(self, stage: str, exc: BaseException) -> dict:
        """`_error_info` plus the model layer whose code raised, when there is one."""
        info = _error_info(stage, exc)
        layer = getattr(exc, "kmigrate_layer", None) or self.layer_in_traceback(exc)
        if layer:
            info["layer"] = layer
        forward = getattr(exc, "kmigrate_forward", None)
        if forward:
            info["message"] += f"\n(the tensor was made in the forward pass at {forward})"
        return info

    def layer_at(self, file: str, line: int) -> str | None:
        """'path' (Class) of the model layer whose class defines the code at file:line."""
        target = os.path.realpath(file)
        for path, layer in reversed(self.layer_tree()):
            for function in vars(type(layer)).values():
                code = getattr(function, "__code__", None)
                if code is None or os.path.realpath(code.co_filename) != target:
                    continue
                lines = [n for _, _, n in code.co_lines() if n is not None]
                if lines and min(lines + [code.co_firstlineno]) <= line <= max(lines):
                    return f"'{path}' ({type(layer).__name__})"
        return None

    def layer_in_traceback(self, exc: BaseException) -> str | None:
        """'path' (Class) of the innermost model layer on the traceback of `exc` (or of
        the exceptions it chains), found by the ``self`` of each frame."""
        if self.model is None:
            return None
        try:
            known = {id(layer): path for path, layer in self.layer_tree()}
        except Exception:  # noqa: BLE001 - naming is a help, never a second failure
            return None
        found = {True: None, False: None}  # innermost layer frame in user code / anywhere
        for link in _exception_chain(exc):
            tb = link.__traceback__
            while tb is not None:
                owner = tb.tb_frame.f_locals.get("self")
                if id(owner) in known:
                    user = _is_user_frame(tb.tb_frame.f_code.co_filename)
                    found[user] = f"'{known[id(owner)]}' ({type(owner).__name__})"
                tb = tb.tb_next
        return found[True] or found[False]

    def check_isolation(self) -> None:
        """No module of the other side's tree may be loaded in this process."""
        own = [os.path.realpath(p) for p in (self.task["model"].get("sys_path") or [])]
        for root in self.task.get("forbidden_roots") or []:
            root = os.path.realpath(root)
            for name, module in list(sys.modules.items()):
                file = getattr(module, "__file__", None)
                if not file:
                    continue
                path = os.path.realpath(file)
                if _is_library_file(path):  # a virtualenv inside the project is not its tree
                    continue
                if _under(path, root) and not any(_under(path, o) and o != root for o in own):
                    raise StageError(
                        f"module '{name}' was imported from {path}, which belongs to the other "
                        f"side of the comparison ({root}); the two trees must not share a "
                        f"process or an import root"
                    )

    def _timed(self, name: str, started: float) -> None:
        self.result["timings"][name] = self.result["timings"].get(name, 0.0) + (
            time.perf_counter() - started
        )

    def load_user_code(self) -> None:
        started = time.perf_counter()
        spec = self.task["model"]
        if self.legacy:  # standalone Keras 2 code (`import keras`) runs on tf_keras too
            self.result["keras_alias"] = keras2_alias.install()
        for folder in reversed(spec.get("sys_path") or []):
            if folder not in sys.path:
                sys.path.insert(0, folder)
        if self.task.get("custom_objects"):
            module = _import_file(self.task["custom_objects"], "custom_objects")
            self.custom_objects = {
                name: value
                for name, value in vars(module).items()
                if callable(value) and getattr(value, "__module__", None) == module.__name__
            }
        if spec["kind"] == "factory":
            if spec.get("path"):
                self.module = _import_file(spec["path"], self.task["role"])
            else:
                self.module = importlib.import_module(spec["module"])
            if not hasattr(self.module, spec["factory"]):
                raise StageError(f"{spec['label']}: the module has no '{spec['factory']}'")
        self._timed("import", started)

    def import_keras(self) -> None:
        started = time.perf_counter()
        if self.legacy:
            import tf_keras as keras  # noqa: PLC0415 - the backend is chosen by the env

            self.result["keras_package"] = "tf_keras"
        else:
            import keras  # noqa: PLC0415

            self.result["keras_package"] = "keras"
            actual = keras.backend.backend()
            if actual != self.task["backend"]:
                raise StageError(
                    f"Keras runs on '{actual}' although KERAS_BACKEND="
                    f"{os.environ.get('KERAS_BACKEND')}; is keras imported before kmigrate "
                    f"sets it (sitecustomize)?"
                )
        self.keras = keras
        self.show_full_tracebacks()
        if self.task["backend"] == "openvino":
            self.openvino_in_float32()
        self.result["keras_version"] = keras.__version__
        self._timed("import", started)

    def openvino_in_float32(self) -> None:
        """Compile OpenVINO models with ``INFERENCE_PRECISION_HINT=f32``.

        On CPUs with bfloat16 units (AMX, AVX512-BF16) OpenVINO runs float32 models in
        bfloat16 by default, which moves float32 outputs by ~1e-3: a difference of the
        device setting, not of the model. Keras's OpenVINO predict compiles with the
        default; parity asks for float32 so the model's own numbers are compared.
        """
        import openvino  # noqa: PLC0415 - only on the openvino backend

        original = openvino.compile_model

        @functools.wraps(original)
        def compile_model(model, device_name=None, config=None, *args, **kwargs):
            config = {"INFERENCE_PRECISION_HINT": "f32", **(config or {})}
            return original(model, device_name, config, *args, **kwargs)

        openvino.compile_model = compile_model
        self.result["notes"].append("OpenVINO compiled with INFERENCE_PRECISION_HINT=f32")

    def show_full_tracebacks(self) -> None:
        """Keras hides its frames and, with them, the failing line inside a layer's call()."""
        try:
            if self.legacy:
                import tensorflow as tf  # noqa: PLC0415 - already imported by tf_keras

                tf.debugging.disable_traceback_filtering()
            else:
                self.keras.config.disable_traceback_filtering()
        except Exception:  # noqa: BLE001 - shorter tracebacks are no reason to fail
            pass

    def build_model(self) -> None:
        started = time.perf_counter()
        spec = self.task["model"]
        if spec["kind"] == "keras_file":
            kwargs = {"custom_objects": self.custom_objects or None, "compile": False}
            if not self.legacy:
                kwargs["safe_mode"] = self.task.get("safe_mode", True)
            self.model = self.keras.saving.load_model(spec["path"], **kwargs)
        else:
            factory = getattr(self.module, spec["factory"])
            if self.task["role"] == "reference":  # targets get the reference's weights
                self.seed_initializers(int(self.task["inputs"]["seed"]))
            self.model = factory(**(self.task.get("factory_kwargs") or {}))
        if not (callable(self.model) and hasattr(self.model, "weights")):
            raise StageError(
                f"{spec['label']} returned {type(self.model).__name__}, not a Keras model; "
                f"point kmigrate parity at the function that returns the model"
            )
        self._timed("build", started)

    def seed_initializers(self, seed: int) -> None:
        """Fixed initial weights, so that the same run gives the same numbers.

        ``keras.utils.set_random_seed`` also seeds TensorFlow, importing it (seconds) on
        the jax and torch backends too; there, set Keras's own global seed instead.
        """
        if self.legacy or "tensorflow" in sys.modules:
            self.keras.utils.set_random_seed(seed)
            return
        try:
            from keras.src.backend.common import global_state  # noqa: PLC0415
            from keras.src.random import seed_generator  # noqa: PLC0415
            from keras.src.utils import rng_utils  # noqa: PLC0415
        except ImportError:  # another Keras layout: pay for the TF import
            self.keras.utils.set_random_seed(seed)
            return
        global_state.set_global_attribute(rng_utils.GLOBAL_RANDOM_SEED, seed)
        global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
        random.seed(seed)
        np.random.seed(seed)
        if self.task["backend"] == "torch":
            import torch  # noqa: PLC0415

            torch.manual_seed(seed)

    def wait_for_reference(self) -> None:
        started = time.perf_counter()
        go = Path(self.task["wait_for"])
        parent = os.getppid()
        while not go.exists():
            if os.getppid() != parent:  # the parent is gone: nobody will read our results
                raise StageError("the parent process exited while this worker was waiting")
            time.sleep(WAIT_POLL_SECONDS)
        self._timed("wait", started)

    def model_input_specs(self) -> list[tuple[str, tuple, str]] | None:
        try:
            inputs = self.model.inputs
        except (AttributeError, ValueError):
            return None
        if not inputs:
            return None
        specs = []
        for tensor in inputs:
            shape = tensor.shape
            dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
            specs.append((str(tensor.name), tuple(dims), self.dtype_name(tensor)))
        return specs

    def prepare_inputs(self) -> None:
        self.inputs = InputBatch(self).prepare(self.task["inputs"])

    def model_args(self):
        struct = getattr(self.model, "_inputs_struct", None)
        if isinstance(struct, dict) and len(struct) == len(self.inputs):
            return dict(zip(sorted(struct), self.inputs))
        return self.inputs[0] if len(self.inputs) == 1 else list(self.inputs)

    def call_model(self):
        if self.task["backend"] == "openvino":  # inference-only backend: no eager call
            return self.model.predict(self.model_args(), verbose=0, batch_size=len(self.inputs[0]))
        return self.model(self.model_args(), training=False)

    def ensure_built(self) -> None:
        if getattr(self.model, "built", True) and self.model.weights:
            return
        started = time.perf_counter()
        self.call_model()
        self._timed("build", started)

    def transfer_weights(self) -> None:
        mode = (self.task.get("weights") or {}).get("mode")
        if not mode:
            return
        started = time.perf_counter()
        paths = self.task["weights"]
        groups = self.weight_groups()
        if mode == "save":
            meta = []
            arrays = {}
            for i, (group, variables) in enumerate(groups):
                meta.append(group.to_dict())
                for k, variable in enumerate(variables):
                    arrays[f"g{i}_{k}"] = _savable(np.asarray(variable.numpy()))
            np.savez(paths["path"], **arrays)
            Path(paths["meta"]).write_text(json.dumps(meta), encoding="utf-8")
            self.pairs = [(i, i) for i in range(len(groups))]
            self.reference_groups = [g for g, _ in groups]
        else:
            reference = [
                WeightGroup.from_dict(d)
                for d in json.loads(Path(paths["meta"]).read_text(encoding="utf-8"))
            ]
            try:
                pairs, how = match_groups(reference, [g for g, _ in groups])
            except WeightMismatchError as exc:
                raise StageError(f"the reference weights do not fit this model: {exc}") from None
            with np.load(paths["path"]) as data:
                for i, j in pairs:
                    for k_ref, k in weight_order(reference[i], groups[j][0]):
                        variable = groups[j][1][k]
                        variable.assign(self.as_variable_dtype(data[f"g{i}_{k_ref}"], variable))
            self.pairs = pairs
            self.reference_groups = reference
            self.result["weights_matched_by"] = how
        self.result["weight_groups"] = len(groups)
        self._timed("weights", started)

    def weight_pairs(self, groups: list) -> list[tuple[int, int, list[tuple[int, int]]]]:
        """(reference group, group here, weight order) for every transferred group; on a
        run without transferred weights (a .keras file) each group pairs with itself."""
        pairs = getattr(self, "pairs", None)
        if pairs is None:
            return [(i, i, [(k, k) for k in range(len(v))]) for i, (_, v) in enumerate(groups)]
        return [(i, j, weight_order(self.reference_groups[i], groups[j][0])) for i, j in pairs]

    def as_variable_dtype(self, array: np.ndarray, variable) -> np.ndarray:
        dtype = self.dtype_name(variable)
        return array.astype(dtype) if dtype in np.sctypeDict else array

    def check_call(self) -> None:
        """``model(x, training=False)``, eager, recording every layer's outputs."""
        records: list[tuple[str, str, list]] = []
        restore = []
        if self.task.get("record_layers"):
            restore = self.install_hooks(records)
        try:
            outputs = self.model(self.model_args(), training=False)
        finally:
            self.remove_hooks(restore)
        self.call_outputs = outputs
        flat = _flatten(outputs)
        self.result["outputs"] = []
        for i, (name, tensor) in enumerate(flat):
            self.result["outputs"].append(self.store(f"out{i}", tensor, name))
        self.result["layers"] = []
        for i, (path, class_name, tensors) in enumerate(records):
            entry = {"path": path, "class": class_name, "arrays": []}
            for k, tensor in enumerate(tensors):
                entry["arrays"].append(self.store(f"layer{i}_{k}", tensor, str(k)))
            self.result["layers"].append(entry)

    def check_predict(self) -> None:
        """``model.predict``: the compiled path (``jit_compile`` as the backend defaults it)."""
        outputs = self.model.predict(self.model_args(), batch_size=len(self.inputs[0]), verbose=0)
        self.result["predict"] = {
            "jit_compile": str(getattr(self.model, "jit_compile", None)),
            "outputs": [
                self.store(f"pred{i}", tensor, name)
                for i, (name, tensor) in enumerate(_flatten(outputs))
            ],
        }
        if "outputs" not in self.result:  # no eager call (openvino): shape the targets here
            self.call_outputs = outputs

    def check_train(self) -> None:
        """One SGD step from the shared weights (see `train_step`)."""
        self.result["train"] = {}  # present even if the step raises
        structure = getattr(self, "call_outputs", None)
        if structure is None:
            raise StageError("the training step needs the outputs of the eager call, which failed")
        self.result["train"] = TrainingCheck(self).run(structure)

    def flatten(self, value) -> list[tuple[str, object]]:
        return _flatten(value)

    def reseed(self, seed: int) -> None:
        self.seed_initializers(seed)

    def store(self, key: str, tensor, name: str) -> dict:
        dtype = self.dtype_name(tensor)
        array = self.to_numpy(tensor) if not isinstance(tensor, np.ndarray) else tensor
        self.arrays[key] = _savable(array)
        return {"name": name, "dtype": dtype, "shape": list(array.shape)}

    def install_hooks(self, records: list | None, forced: set[str] = frozenset()) -> list:
        """Wrap sub-layers' `call` on the instance: keep a copy of what each returns (when
        `records` is a list) and call the layers in `forced` with ``training=False``.

        Keras 2 and 3 both invoke ``self.call`` from ``Layer.__call__``, so an instance
        attribute sees every call of every layer of any model type (functional, Sequential,
        subclassed, nested). Only concrete values are kept: a symbolic call (shape inference
        during the pass, tracing under jit) cannot be converted and is skipped.
        """
        calls: dict[int, int] = {}
        restore = []
        for path, layer in self.layer_tree():
            if records is None and path not in forced:
                continue
            original = layer.call
            force = path in forced
            position = _training_position(original) if force else None

            @functools.wraps(original)
            def recorder(
                *args, _original=original, _layer=layer, _path=path, _f=force, _p=position, **kwargs
            ):
                if _f:
                    args, kwargs = _training_off(args, kwargs, _p)
                output = _original(*args, **kwargs)
                if records is None:
                    return output
                try:
                    tensors = [
                        np.asarray(self.to_numpy(t)) if not isinstance(t, np.ndarray) else t
                        for _, t in _flatten(output)
                    ]
                except Exception:  # noqa: BLE001 - symbolic / non-tensor output: not recorded
                    return output
                count = calls.get(id(_layer), 0) + 1
                calls[id(_layer)] = count
                name = _path if count == 1 else f"{_path}#{count}"
                records.append((name, type(_layer).__name__, tensors))
                return output

            try:
                layer.call = recorder
            except (AttributeError, TypeError):
                continue
            restore.append((layer, original))
        return restore

    def remove_hooks(self, restore: list) -> None:
        for layer, original in restore:
            try:
                del layer.call  # back to the class's method
            except AttributeError:
                layer.call = original

    def export(self) -> None:
        """SavedModel via model.export, served back through tf.saved_model.load."""
        started = time.perf_counter()
        directory = self.task["export_dir"]
        info: dict = {"status": "ok", "dir": directory}
        try:
            self.model.export(directory, format="tf_saved_model", verbose=False)
            import tensorflow as tf  # noqa: PLC0415 - only on the tensorflow backend

            loaded = tf.saved_model.load(directory)
            if "serving_default" not in loaded.signatures:
                raise StageError(
                    f"the SavedModel in {directory} has no serving_default signature "
                    f"(signatures: {', '.join(loaded.signatures) or 'none'})"
                )
            serve = loaded.signatures["serving_default"]
            _, spec = serve.structured_input_signature
            feed = self.signature_feed(spec, tf)
            served = serve(**feed)
            keys = sorted(served, key=_output_key)
            info["signature_inputs"] = sorted(spec)
            info["outputs"] = [
                self.store(f"export{i}", served[key], key) for i, key in enumerate(keys)
            ]
        except BaseException as exc:  # noqa: BLE001 - an export failure is a result too
            info["status"] = "error"
            info["error"] = _error_info("export", exc)
        self.result["export"] = info
        self._timed("export", started)

    def signature_feed(self, spec: dict, tf) -> dict:
        names = [name for name, _, _ in (self.model_input_specs() or [])]
        if len(spec) != len(self.inputs):
            raise StageError(
                f"serving_default takes {len(spec)} inputs ({', '.join(sorted(spec))}), "
                f"the model {len(self.inputs)}"
            )
        if names and set(names) == set(spec):
            order = names
        else:  # unnamed inputs: the signature lists them in sorted order
            order = sorted(spec)
            if len(order) > 1:
                self.result["notes"].append(
                    "serving_default inputs matched to model inputs by sorted name"
                )
        return {
            name: tf.cast(tf.constant(x), spec[name].dtype) for name, x in zip(order, self.inputs)
        }


def _training_position(call) -> int | None:
    """Where ``training`` sits among `call`'s positional parameters (bound method)."""
    try:
        names = [
            p.name
            for p in inspect.signature(call).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return None
    return names.index("training") if "training" in names else None


def _training_off(args: tuple, kwargs: dict, position: int | None) -> tuple[tuple, dict]:
    if "training" in kwargs:
        return args, {**kwargs, "training": False}
    if position is not None and len(args) > position:
        return (*args[:position], False, *args[position + 1 :]), kwargs
    return args, kwargs


def _output_key(key: str):
    """'output_10' sorts after 'output_2'."""
    stem, _, number = key.rpartition("_")
    return (stem, int(number)) if number.isdigit() else (key, -1)


def _clear_session() -> None:
    """Fresh Keras state between two models in one process (layer names restart at 'dense')."""
    for name in ("keras", "tf_keras"):
        keras = sys.modules.get(name)
        if keras is None:
            continue
        try:
            keras.backend.clear_session()
        except Exception:  # noqa: BLE001 - a failed reset only changes auto-generated names
            pass


def run_task(task: dict, stage_file: str | None) -> None:
    """Run one model and write its arrays, then its result (atomically, last)."""
    if stage_file:
        task = {**task, "stage_file": stage_file}
    worker = Worker(task)
    worker.run()
    np.savez(task["arrays"], **worker.arrays)
    temporary = task["result"] + ".tmp"
    Path(temporary).write_text(json.dumps(worker.result, default=str), encoding="utf-8")
    os.replace(temporary, task["result"])  # the parent never sees half a result


def drop_working_folder_from_path() -> None:
    """``python -m`` puts the current folder first on ``sys.path``; it may hold the other
    side's tree (run from the project root, where ``mylayers.py`` is the rewritten one), so
    a worker imports only from its own model's folder (what ``-P`` does on Python 3.11+)."""
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.realpath(os.getcwd()):
        del sys.path[0]


def main(argv: list[str] | None = None) -> int:
    """Run the job's tasks in order in this process (same backend, one framework import)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m kmigrate.parity.worker JOB.json", file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    drop_working_folder_from_path()
    for i, task in enumerate(job["tasks"]):
        if i:
            _clear_session()
        run_task(task, job.get("stage_file"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
