"""The differential harness: every automatic ops-catalog rewrite, run on three backends.

For each :class:`Case` (a TensorFlow expression, e.g. ``tf.reduce_mean(x, axis=1)``) the
harness writes one module with one ``keras.layers.Layer`` subclass per case whose
``call`` returns the expression, runs the REAL rewrite on it
(``kmigrate.engine.apply.apply_to_text(text, select=["KM2"])``), and then, in one subprocess per
backend (``KERAS_BACKEND`` set before Keras is imported):

- tensorflow: the original module with TensorFlow and tf_keras's backend as ``K``
  (the reference), and the rewritten module;
- jax and torch: the rewritten module, with every ``tensorflow`` import removed, so
  a rewrite that still needs TensorFlow fails with a NameError.

Inputs are seeded NumPy arrays (``inputs.npz``); outputs go through ``<job>.npz`` and
the parent compares them leaf by leaf: same shape, same dtype (unless the case
declares the documented difference), values within a tolerance set by dtype.

This module imports only the standard library and NumPy at import time (fast tests
use :func:`make_inputs` and the case list); the backends are imported in the worker.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

BACKENDS = ("tensorflow", "jax", "torch")
# Default tolerances by dtype kind (float32 ~1e-5 relative / 1e-6 absolute).
FLOAT_TOLERANCE = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-9, 1e-12)}


@dataclass(frozen=True)
class Case:
    """One TensorFlow expression proving one catalog entry.

    ``symbol`` is the catalog symbol it proves (inferred from the outermost call when
    empty). ``inputs`` maps argument names of ``call`` to specs (see :func:`make_array`).
    ``init`` holds ``__init__`` statements (state cases). ``dtype`` is the Keras result
    dtype when it intentionally differs from TensorFlow's (documented in the catalog):
    a dtype name, or ``"int"`` for any integer dtype.
    """

    expr: str
    inputs: dict[str, str] = field(default_factory=dict)
    symbol: str = ""
    init: str = ""
    body: str = ""  # statements of ``call`` before ``return expr`` (uses of local names)
    graph: bool = False  # run the TF reference inside tf.function (graph-only ops)
    dtype: str | None = None
    rtol: float | None = None
    atol: float | None = None

    @property
    def proves(self) -> str:
        if self.symbol:
            return self.symbol
        node = ast.parse(self.expr, mode="eval").body
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        assert isinstance(node, ast.Call), self.expr
        name = _dotted(node.func)
        assert name, self.expr
        return name


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])


# ---------------------------------------------------------------------------
# Inputs.
# ---------------------------------------------------------------------------

_SPEC = re.compile(r"^(?P<kind>\w+)\[(?P<dims>[\d, ]*)\](?::(?P<lo>-?\d+):(?P<hi>-?\d+))?$")


def make_array(spec: str, seed: int) -> np.ndarray:
    """A deterministic array from a spec such as ``f32[3,4]`` or ``i32[5]:0:4``.

    Kinds: f32/f64 (normal), pos (0.5..2), unit (0.05..0.95), sym (-0.9..0.9),
    big (1.1..3), img (0..1), i32/i64 (ints in [lo, hi)), bool, spd (symmetric
    positive-definite matrices), tri (well-conditioned lower-triangular), perm (a
    permutation), sorted (increasing floats), nan (floats with nan/inf), onehot,
    seg (sorted segment ids covering [0, hi)).
    """
    match = _SPEC.match(spec.replace(" ", ""))
    if match is None:
        raise ValueError(f"bad input spec {spec!r}")
    kind = match["kind"]
    dims = tuple(int(d) for d in match["dims"].split(",") if d)
    lo, hi = int(match["lo"] or 0), int(match["hi"] or 4)
    rng = np.random.default_rng(seed)
    f32 = np.float32
    if kind == "f32":
        return rng.standard_normal(dims).astype(f32)
    if kind == "f64":
        return rng.standard_normal(dims)
    if kind in ("pos", "unit", "sym", "big", "img"):
        low, high = {
            "pos": (0.5, 2.0),
            "unit": (0.05, 0.95),
            "sym": (-0.9, 0.9),
            "big": (1.1, 3.0),
            "img": (0.0, 1.0),
        }[kind]
        return rng.uniform(low, high, dims).astype(f32)
    if kind in ("i32", "i64"):
        return rng.integers(lo, hi, dims).astype(np.int32 if kind == "i32" else np.int64)
    if kind == "bool":
        return rng.random(dims) < 0.5
    if kind == "spd":
        a = rng.standard_normal(dims)
        n = dims[-1]
        return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(f32)
    if kind == "tri":
        a = np.tril(rng.uniform(-0.5, 0.5, dims)) + 2 * np.eye(dims[-1])
        return a.astype(f32)
    if kind == "perm":
        return rng.permutation(dims[0]).astype(np.int32)
    if kind == "sorted":
        return np.sort(rng.standard_normal(dims), axis=-1).astype(f32)
    if kind == "nan":
        values = rng.standard_normal(dims).astype(f32).reshape(-1)
        values[::3] = np.nan
        values[1::5] = np.inf
        return values.reshape(dims)
    if kind == "onehot":
        labels = rng.integers(0, dims[-1], dims[:-1])
        return np.eye(dims[-1], dtype=f32)[labels]
    if kind == "seg":
        n = dims[0]
        ids = np.sort(np.concatenate([np.arange(hi), rng.integers(0, hi, n - hi)]))
        return ids.astype(np.int32)
    raise ValueError(f"unknown input kind {kind!r} in {spec!r}")


def make_inputs(cases: Sequence[Case]) -> dict[str, np.ndarray]:
    """All inputs, keyed ``"<case>:<name>"``; seeds depend on the case text only."""
    arrays = {}
    for index, case in enumerate(cases):
        for name, spec in case.inputs.items():
            seed = zlib.crc32(f"{case.expr}|{name}|{spec}".encode())
            arrays[f"{index}:{name}"] = make_array(spec, seed)
    return arrays


# ---------------------------------------------------------------------------
# The module the rewrite runs on.
# ---------------------------------------------------------------------------

MODULE_HEADER = '''\
"""Generated by tests/differential/harness.py: one layer per catalog case."""
import math

import keras
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K
'''


def case_module(cases: Sequence[Case]) -> str:
    parts = [MODULE_HEADER]
    for index, case in enumerate(cases):
        params = ", ".join(["self", *case.inputs])
        lines = [f"\n\nclass Case{index}(keras.layers.Layer):"]
        if case.init:
            lines.append("    def __init__(self):")
            lines.append("        super().__init__()")
            lines.extend(textwrap.indent(textwrap.dedent(case.init).strip(), " " * 8).split("\n"))
            lines.append("")
        lines.append(f"    def call({params}):")
        if case.body:
            lines.extend(textwrap.indent(textwrap.dedent(case.body).strip(), " " * 8).split("\n"))
        lines.append(f"        return {case.expr}")
        parts.append("\n".join(lines) + "\n")
    return "".join(parts)


def case_sources(module_text: str, count: int) -> list[str]:
    """The expression each ``CaseN.call`` returns (after the rewrite), for messages."""
    tree = ast.parse(module_text)
    found = ["<missing>"] * count
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Case"):
            index = int(node.name[4:])
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "call":
                    ret = item.body[-1]
                    if isinstance(ret, ast.Return) and ret.value is not None:
                        found[index] = ast.get_source_segment(module_text, ret.value) or ""
    return found


def without_imports(module_text: str, roots: Iterable[str] | None) -> str:
    """Blank out import statements of ``roots`` (all imports when None)."""
    tree = ast.parse(module_text)
    lines = module_text.splitlines(keepends=True)
    wanted = None if roots is None else tuple(roots)
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            names = [node.module or ""]
        if wanted is None or any(n.split(".")[0] in wanted for n in names):
            for line in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[line] = "\n"
    return "".join(lines)


# ---------------------------------------------------------------------------
# Running (parent side).
# ---------------------------------------------------------------------------


@dataclass
class Outcome:
    """One job's results: leaves per case, or the error the case raised."""

    leaves: dict[int, list[tuple[str, np.ndarray]]]  # case -> [(kind, array)]
    errors: dict[int, str]
    seconds: dict[str, float] = field(default_factory=dict)  # worker wall/cpu time so far


def _subprocess_env(backend: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        KERAS_BACKEND=backend,
        TF_CPP_MIN_LOG_LEVEL="3",
        CUDA_VISIBLE_DEVICES="",
        JAX_PLATFORMS="cpu",
        PYTHONWARNINGS="ignore",
    )
    env.pop("TF_USE_LEGACY_KERAS", None)
    return env


def run_backends(
    cases: Sequence[Case], rewritten: str, workdir: Path, timeout: float = 600
) -> dict[str, Outcome]:
    """Run the reference and the rewrite: one subprocess per backend, in parallel."""
    workdir.mkdir(parents=True, exist_ok=True)
    np.savez(workdir / "inputs.npz", **make_inputs(cases))
    manifest = [{"inputs": list(case.inputs), "graph": case.graph} for case in cases]
    (workdir / "manifest.json").write_text(json.dumps(manifest))
    (workdir / "original.py").write_text(without_imports(case_module(cases), None))
    (workdir / "rewritten.py").write_text(without_imports(rewritten, ("tensorflow", "tf_keras")))
    # a rewrite may call a project helper (`K.shape` of a value not known to be a tensor):
    # the module apply would write beside the file, all of it, importable from workdir
    # (not tests.backend_run.write_converted: the workers import this module by path,
    # where the tests package is not importable)
    from kmigrate.rules.common.compat_helpers import HELPER_FILE, HELPER_MODULE

    shutil.copyfile(HELPER_FILE, workdir / f"{HELPER_MODULE}.py")
    jobs = {
        "tensorflow": [("reference", "original.py"), ("tensorflow", "rewritten.py")],
        "jax": [("jax", "rewritten.py")],
        "torch": [("torch", "rewritten.py")],
    }
    processes = {}
    for backend, backend_jobs in jobs.items():
        command = [sys.executable, __file__, str(workdir), json.dumps(backend_jobs)]
        processes[backend] = subprocess.Popen(
            command,
            env=_subprocess_env(backend),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    logs = {}
    for backend, process in processes.items():
        out, _ = process.communicate(timeout=timeout)
        logs[backend] = out
        if process.returncode != 0:
            raise RuntimeError(f"{backend} worker failed ({process.returncode}):\n{out[-4000:]}")
    outcomes = {}
    for backend_jobs in jobs.values():
        for name, _ in backend_jobs:
            outcomes[name] = _load(workdir, name)
    return outcomes


def _load(workdir: Path, name: str) -> Outcome:
    meta = json.loads((workdir / f"{name}.json").read_text())
    arrays = np.load(workdir / f"{name}.npz", allow_pickle=False)
    leaves: dict[int, list[tuple[str, np.ndarray]]] = {}
    for key, kinds in meta["leaves"].items():
        leaves[int(key)] = [(kind, arrays[f"{key}:{j}"]) for j, kind in enumerate(kinds)]
    errors = {int(k): v for k, v in meta["errors"].items()}
    return Outcome(leaves, errors, meta.get("seconds", {}))


def compare(case: Case, reference: list[tuple[str, np.ndarray]], got: list[tuple[str, Any]]) -> str:
    """Empty when ``got`` matches the TF reference; otherwise what differs."""
    if len(reference) != len(got):
        return f"{len(got)} outputs, TensorFlow gives {len(reference)}"
    for j, ((ref_kind, ref), (kind, value)) in enumerate(zip(reference, got)):
        where = f"output {j}: " if len(reference) > 1 else ""
        if ref.shape != value.shape:
            return f"{where}shape {value.shape}, TensorFlow {ref.shape}"
        if ref_kind == "tensor" and kind == "tensor":
            # A case's dtype= covers the documented index-dtype differences only.
            integer = np.issubdtype(ref.dtype, np.integer)
            expected = case.dtype if case.dtype and integer else str(ref.dtype)
            actual = str(value.dtype)
            if expected == "int":
                ok = np.issubdtype(value.dtype, np.integer)
            else:
                ok = actual == expected
            if not ok:
                return f"{where}dtype {actual}, expected {expected} (TensorFlow {ref.dtype})"
        if ref.dtype.kind in "US" or value.dtype.kind in "US":
            if str(ref) != str(value):
                return f"{where}{value!r} != TensorFlow {ref!r}"
            continue
        if np.issubdtype(ref.dtype, np.floating) or np.issubdtype(value.dtype, np.floating):
            rtol, atol = FLOAT_TOLERANCE.get(str(ref.dtype), FLOAT_TOLERANCE["float32"])
            rtol = case.rtol if case.rtol is not None else rtol
            atol = case.atol if case.atol is not None else atol
            a, b = value.astype(np.float64), ref.astype(np.float64)
            if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                error = np.nanmax(np.abs(a - b)) if a.size else 0.0
                return f"{where}max abs error {error:.3g} (rtol {rtol}, atol {atol})"
        elif not np.array_equal(value, ref):
            return f"{where}values differ: {value.ravel()[:8]} vs TensorFlow {ref.ravel()[:8]}"
    return ""


# ---------------------------------------------------------------------------
# Worker (child side): python harness.py WORKDIR JOBS_JSON
# ---------------------------------------------------------------------------


def _leaves(value: Any, to_numpy) -> list[tuple[str, np.ndarray]]:
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _leaves(value[k], to_numpy)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item, to_numpy)]
    if value is None:
        return [("none", np.zeros((0,)))]
    if isinstance(value, str):
        return [("str", np.asarray(value))]
    if isinstance(value, (bool, int, float, np.generic)) and not hasattr(value, "shape"):
        return [("py", np.asarray(value))]
    if isinstance(value, (bool, int, float)):
        return [("py", np.asarray(value))]
    return [("tensor", np.asarray(to_numpy(value)))]


def legacy_backend(tf_keras: Any) -> Any:
    """Keras 2's backend as legacy code's ``K``: ``tf_keras.backend`` plus the Keras 2
    functions tf_keras still defines in ``tf_keras.src.backend`` but no longer exports
    (``K.logsumexp``, ``K.identity``; real legacy code calls them)."""
    import types

    from tf_keras.src import backend as implementation

    names = {name: getattr(tf_keras.backend, name) for name in dir(tf_keras.backend)}
    names.update(logsumexp=implementation.logsumexp, identity=implementation.identity)
    return types.SimpleNamespace(**names)


def _worker(workdir: Path, jobs: list[tuple[str, str]]) -> None:
    import time
    import warnings

    started = time.perf_counter(), time.process_time()
    sys.path.insert(0, str(workdir))  # the project helpers' module (run_backends)

    warnings.simplefilter("ignore")
    backend = os.environ["KERAS_BACKEND"]
    import keras

    assert keras.config.backend() == backend, keras.config.backend()
    manifest = json.loads((workdir / "manifest.json").read_text())
    inputs = np.load(workdir / "inputs.npz")
    for name, module_file in jobs:
        if name == "reference":
            import tensorflow as tf
            import tf_keras

            legacy_k = legacy_backend(tf_keras)
            namespace: dict[str, Any] = {"tf": tf, "K": legacy_k, "np": np, "keras": keras}
            namespace["math"] = math
            convert = tf.convert_to_tensor

            def to_numpy(v):
                return v.numpy() if hasattr(v, "numpy") else np.asarray(v)

        else:
            namespace = {}
            convert = keras.ops.convert_to_tensor
            to_numpy = keras.ops.convert_to_numpy
        source = (workdir / module_file).read_text()
        exec(compile(source, str(workdir / module_file), "exec"), namespace)  # noqa: S102
        leaves: dict[str, list[str]] = {}
        arrays: dict[str, np.ndarray] = {}
        errors: dict[str, str] = {}
        for index, spec in enumerate(manifest):
            try:
                layer = namespace[f"Case{index}"]()
                args = [convert(inputs[f"{index}:{n}"]) for n in spec["inputs"]]
                call = layer.call
                if name == "reference" and spec["graph"]:
                    call = tf.function(call)
                result = _leaves(call(*args), to_numpy)
            except Exception as error:  # noqa: BLE001 - reported per case
                errors[str(index)] = f"{type(error).__name__}: {str(error)[:300]}"
                continue
            leaves[str(index)] = [kind for kind, _ in result]
            for j, (_, array) in enumerate(result):
                arrays[f"{index}:{j}"] = array
        np.savez(workdir / f"{name}.npz", **arrays)
        seconds = {
            "wall": time.perf_counter() - started[0],
            "cpu": time.process_time() - started[1],
        }
        meta = {"leaves": leaves, "errors": errors, "seconds": seconds}
        (workdir / f"{name}.json").write_text(json.dumps(meta))


if __name__ == "__main__":
    _worker(Path(sys.argv[1]), [tuple(job) for job in json.loads(sys.argv[2])])
