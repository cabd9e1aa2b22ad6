"""Models on one backend, in their own process: ``python -m kmigrate.parity.worker JOB.json``.

The parent sets ``KERAS_BACKEND`` (and ``TF_USE_LEGACY_KERAS=1`` for a Keras 2 reference)
before starting this process, because Keras picks its backend at import time. The job file
lists tasks, run in order in this one process so the framework is imported once (on
TensorFlow: the original as reference, then the converted model); each task says what to
build, where the input batch and the weights are, and where to write results.

Steps of a task: load the user's module (which imports its framework), import Keras, build
or load the model; a target then waits until the reference has written the weights and the batch (so
the slow imports of all backends overlap); then inputs, weights, one forward pass with
``training=False`` while recording every layer's outputs, and optionally a SavedModel export
served back through ``tf.saved_model.load``. Results go to a JSON file and an ``.npz``; an
exception is recorded with the stage it happened in and the tail of its traceback, so the
parent can say what broke where.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
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

from kmigrate.parity.weights import WeightGroup, WeightMismatchError, match_groups

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


def _error_info(stage: str, exc: BaseException) -> dict:
    message = str(exc).strip() or type(exc).__name__
    info = {
        "stage": stage,
        "type": type(exc).__name__,
        "message": _plain(message),
        "traceback": "" if isinstance(exc, StageError) else _plain(_traceback_tail(exc)),
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
        try:
            self.enter("load")
            self.load_user_code()
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
            self.enter("predict")
            self.predict()
        except BaseException as exc:  # noqa: BLE001 - every failure is reported, none lost
            self.result["status"] = "error"
            self.result["error"] = _error_info(self.stage, exc)
        else:
            if self.task.get("export_dir"):
                self.enter("export")
                self.export()
        self.result["timings"]["total"] = time.perf_counter() - started

    def _timed(self, name: str, started: float) -> None:
        self.result["timings"][name] = self.result["timings"].get(name, 0.0) + (
            time.perf_counter() - started
        )

    def load_user_code(self) -> None:
        started = time.perf_counter()
        spec = self.task["model"]
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
        self.result["keras_version"] = keras.__version__
        self._timed("import", started)

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
        options = self.task["inputs"]
        if not options.get("write"):
            with np.load(options["path"]) as data:
                self.inputs = [data[f"x{i}"] for i in range(len(data.files))]
            return
        if options.get("source"):
            self.inputs = self.read_inputs_file(options["source"])
        else:
            self.inputs = self.generate_inputs(options)
        np.savez(options["path"], **{f"x{i}": x for i, x in enumerate(self.inputs)})
        self.result["inputs"] = [
            {"shape": list(x.shape), "dtype": str(x.dtype)} for x in self.inputs
        ]

    def read_inputs_file(self, path: str) -> list[np.ndarray]:
        if path.endswith(".npy"):
            return [np.load(path)]
        with np.load(path) as data:
            return [data[name] for name in data.files]

    def generate_inputs(self, options: dict) -> list[np.ndarray]:
        specs = self.model_input_specs()
        shapes = options.get("shapes")
        dtypes = options.get("dtypes")
        batch = int(options["batch_size"])
        if shapes:
            if specs and len(specs) != len(shapes):
                raise StageError(
                    f"the model has {len(specs)} inputs but {len(shapes)} --input-shape "
                    f"options were given; give one per input, in order"
                )
            full = [(batch, *shape) for shape in shapes]
        elif specs:
            full = []
            for name, dims, _ in specs:
                if any(d is None for d in dims[1:]):
                    raise StageError(
                        f"input '{name}' has shape {tuple(dims)} with unknown sizes besides "
                        f"the batch axis; give them with --input-shape (e.g. --input-shape "
                        f"{','.join('16' if d is None else str(d) for d in dims[1:])})"
                    )
                full.append((batch, *dims[1:]))
        else:
            raise StageError(
                "the model does not declare its inputs (a subclassed model before its first "
                "call); give them with --input-shape 16,32 [--input-dtype float32]"
            )
        if not dtypes:
            dtypes = [s[2] for s in specs] if specs else ["float32"] * len(full)
        elif len(dtypes) == 1:
            dtypes = list(dtypes) * len(full)
        rng = np.random.default_rng(int(options["seed"]))
        return [
            self.random_array(rng, shape, dtype, int(options["int_high"]))
            for shape, dtype in zip(full, dtypes)
        ]

    def random_array(self, rng, shape: tuple, dtype: str, int_high: int) -> np.ndarray:
        kind = np.dtype(dtype).kind if dtype in np.sctypeDict else "f"
        if kind == "b":
            return rng.random(shape) < 0.5
        if kind in "iu":
            return rng.integers(0, int_high, size=shape).astype(dtype)
        values = rng.standard_normal(shape)
        if dtype not in np.sctypeDict:  # bfloat16: feed float32, the model casts
            self.result["notes"].append(f"inputs of dtype {dtype} are fed as float32")
            return values.astype(np.float32)
        return values.astype(dtype)

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
                    for k, variable in enumerate(groups[j][1]):
                        variable.assign(self.as_variable_dtype(data[f"g{i}_{k}"], variable))
            self.result["weights_matched_by"] = how
        self.result["weight_groups"] = len(groups)
        self._timed("weights", started)

    def as_variable_dtype(self, array: np.ndarray, variable) -> np.ndarray:
        dtype = self.dtype_name(variable)
        return array.astype(dtype) if dtype in np.sctypeDict else array

    def predict(self) -> None:
        started = time.perf_counter()
        records: list[tuple[str, str, list]] = []
        restore = []
        if self.task.get("record_layers") and self.task["backend"] != "openvino":
            restore = self.install_recorders(records)
        try:
            outputs = self.call_model()
        finally:
            for layer, original in restore:
                try:
                    del layer.call  # back to the class's method
                except AttributeError:
                    layer.call = original
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
        self._timed("predict", started)

    def store(self, key: str, tensor, name: str) -> dict:
        dtype = self.dtype_name(tensor)
        array = self.to_numpy(tensor) if not isinstance(tensor, np.ndarray) else tensor
        self.arrays[key] = _savable(array)
        return {"name": name, "dtype": dtype, "shape": list(array.shape)}

    def install_recorders(self, records: list) -> list:
        """Wrap each sub-layer's `call` on the instance to keep a copy of what it returns.

        Keras 2 and 3 both invoke ``self.call`` from ``Layer.__call__``, so an instance
        attribute sees every call of every layer of any model type (functional, Sequential,
        subclassed, nested). Only concrete values are kept: a symbolic call (shape inference
        during the pass) cannot be converted and is skipped.
        """
        calls: dict[int, int] = {}
        restore = []
        for path, layer in self.layer_tree():
            original = layer.call

            @functools.wraps(original)
            def recorder(*args, _original=original, _layer=layer, _path=path, **kwargs):
                output = _original(*args, **kwargs)
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


def main(argv: list[str] | None = None) -> int:
    """Run the job's tasks in order in this process (same backend, one framework import)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m kmigrate.parity.worker JOB.json", file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    for i, task in enumerate(job["tasks"]):
        if i:
            _clear_session()
        run_task(task, job.get("stage_file"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
