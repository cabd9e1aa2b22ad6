"""The shape helpers ``apply`` writes into a project (``shape_prod`` and ``split`` in
``rules/data/keras2_compat.py``), proven against Keras 2 itself (tf_keras) on
tensorflow, jax and torch.

``shape_prod`` is Keras 2's ``K.prod(K.shape(x)[a:b])``; ``split`` is ``tf.split`` with a
count or sizes that are not literals. Each runs over ranks, axes, dtypes and edge shapes
(an empty axis, sizes of 0, a -1 in every position): eagerly, inside a functional model
whose dimensions are not known while it is built (a graph on tensorflow, JAX's symbolic
dimensions, PyTorch's meta tensors) and under ``jax.jit``; tf_keras on the same inputs
is the reference (shapes, dtypes and values). ``keras.ops.prod`` and ``keras.ops.split``
are shown to be wrong there: the first gives a traced value that ``ops.reshape`` refuses
under jit, the second takes cut indices, not sizes.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend_run import helper_reports
from tests.differential.harness import FLOAT_TOLERANCE

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

# tf.split: (shape, num_or_size_splits, axis, dtype); "np:" sizes are a NumPy array.
SPLIT = [
    ((6,), 3, 0, "float32"),
    ((2, 6), [1, -1, 2], 1, "float32"),
    ((2, 6, 3), [2, 4], 1, "int32"),
    ((2, 6, 3), [-1, 2], -2, "float16"),
    ((2, 6, 3), [2, -1], 1, "float32"),
    ((2, 3, 6), 2, -1, "float32"),
    ((2, 6, 4), [1, 2, 3], 1, "float32"),  # sizes: as cut indices they cut elsewhere
    ((2, 6, 4), [0, 6, 0], 1, "float32"),  # empty pieces
    ((2, 6, 4), [2, -1, 0], 1, "float32"),  # an empty piece after the -1, at the end
    ((2, 6, 4), [6], 1, "float32"),
    ((2, 6, 4), 1, 1, "float32"),
    ((2, 0, 4), 2, 1, "float32"),  # an empty axis
    ((2, 0, 4), [0, -1], 1, "float32"),
    ((1, 4, 2, 6), [3, -1, 1], 3, "float64"),
    ((2, 6, 4), "np:2,4", 1, "float32"),
]
# Inputs Keras 2 refuses: the helper raises too.
SPLIT_ERRORS = [((2, 6), 4, 1), ((2, 6), [2, 3], 1), ((2, 6), [2, -1, -1], 1), ((2, 6), [7, -1], 1)]

# K.prod(K.shape(x)[start:stop]): (shape, start, stop)
PROD = [((2, 3, 4, 5), 1, 3), ((2, 3, 4, 5), 1, None), ((2, 3, 4), 0, 0), ((2, 3, 4), 0, None)]


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    arrays = {}
    for index, (shape, _, _, dtype) in enumerate(SPLIT):
        arrays[f"split{index}"] = (rng.standard_normal(shape) * 10).astype(dtype)
    for index, (shape, _, _) in enumerate(PROD):
        arrays[f"prod{index}"] = rng.standard_normal(shape).astype("float32")
    return arrays


WORKER = r"""
import importlib.util, json, os, sys
import numpy as np

cases = json.load(open("cases.json"))
data = dict(np.load("inputs.npz"))
out, report = {}, {"errors": [], "ops_split": None, "ops_prod_jit": None}
reference = os.environ.get("TF_USE_LEGACY_KERAS") == "1"

def sizes_of(arg):
    if isinstance(arg, str):
        return np.array([int(v) for v in arg[3:].split(",")])
    return arg

def model_shape(shape, axis):
    # the split axis (and the rest but the batch axis) unknown while the model is built
    return tuple(None for _ in shape[1:])

if reference:
    import tensorflow as tf
    import tf_keras
    K = tf_keras.backend
    for i, (shape, arg, axis, dtype) in enumerate(cases["split"]):
        x = data[f"split{i}"]
        fn = lambda t, arg=arg, axis=axis: tf.split(t, sizes_of(arg), axis=axis)
        for j, piece in enumerate(fn(tf.constant(x))):
            out[f"split{i}_{j}"] = piece.numpy()
    for shape, arg, axis in cases["split_errors"]:
        try:
            tf.split(tf.zeros(shape), arg, axis=axis)
            report["errors"].append(False)
        except (ValueError, tf.errors.InvalidArgumentError):
            report["errors"].append(True)
    for i, (shape, start, stop) in enumerate(cases["prod"]):
        x = tf.constant(data[f"prod{i}"])
        out[f"prod{i}"] = K.prod(K.shape(x)[start:stop]).numpy()
        s = K.shape(x)
        out[f"prod{i}_flat"] = K.reshape(x, [-1, K.prod(s[start:stop])]).numpy()
    out["prod_tensor"] = K.prod(tf.constant([2, 3, 4])).numpy()
else:
    import keras
    from keras import ops
    spec = importlib.util.spec_from_file_location("keras2_compat", sys.argv[1])
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    backend = keras.backend.backend()
    if backend == "jax":
        import jax
    for i, (shape, arg, axis, dtype) in enumerate(cases["split"]):
        x = data[f"split{i}"]
        fn = lambda t, arg=arg, axis=axis: compat.split(t, sizes_of(arg), axis=axis)
        for j, piece in enumerate(fn(ops.convert_to_tensor(x))):
            out[f"split{i}_{j}"] = ops.convert_to_numpy(piece)
        if len(shape) > 1 and 0 not in shape:
            a = keras.Input(shape=model_shape(shape, axis), dtype=dtype)
            model = keras.Model(a, keras.layers.Lambda(fn, dtype=dtype)(a))
            pieces = model.predict(x, verbose=0)
            for j, piece in enumerate(pieces if isinstance(pieces, list) else [pieces]):
                out[f"split{i}_{j}_model"] = np.asarray(piece)
        if backend == "jax":
            for j, piece in enumerate(jax.jit(fn)(x)):
                out[f"split{i}_{j}_jit"] = np.asarray(piece)
    for shape, arg, axis in cases["split_errors"]:
        try:
            compat.split(ops.zeros(shape), arg, axis=axis)
            report["errors"].append(False)
        except ValueError:
            report["errors"].append(True)
    # keras.ops.split's own meaning of a list: cut indices
    pieces = ops.split(ops.zeros((2, 6, 4)), [1, 2, 3], axis=1)
    report["ops_split"] = [list(p.shape) for p in pieces]
    for i, (shape, start, stop) in enumerate(cases["prod"]):
        x = data[f"prod{i}"]
        value = compat.shape_prod(ops.shape(ops.convert_to_tensor(x))[start:stop])
        report.setdefault("prod_kinds", []).append(type(value).__name__)
        out[f"prod{i}"] = np.asarray(value)
        def flat(t, start=start, stop=stop):
            return ops.reshape(t, (-1, compat.shape_prod(ops.shape(t)[start:stop])))
        out[f"prod{i}_flat"] = ops.convert_to_numpy(flat(ops.convert_to_tensor(x)))
        if start >= 1:  # the batch axis is not in the product: the model's output shape
            a = keras.Input(shape=tuple(None for _ in shape[1:]))
            model = keras.Model(a, keras.layers.Lambda(flat)(a))
            out[f"prod{i}_flat_model"] = np.asarray(model.predict(x, verbose=0))
        if backend == "jax":
            out[f"prod{i}_flat_jit"] = np.asarray(jax.jit(flat)(x))
    out["prod_tensor"] = ops.convert_to_numpy(compat.shape_prod(ops.convert_to_tensor([2, 3, 4])))
    if backend == "jax":  # what a rewrite to ops.prod would do under jit
        try:
            jax.jit(lambda t: ops.reshape(t, (-1, ops.prod(ops.shape(t)[1:3]))))(data["prod0"])
            report["ops_prod_jit"] = "ok"
        except Exception as error:
            report["ops_prod_jit"] = type(error).__name__
np.savez(f"out_{os.environ['KERAS_BACKEND']}_{int(reference)}.npz", **out)
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def helper_runs(tmp_path_factory):
    work = tmp_path_factory.mktemp("shape_helpers")
    cases = {"split": SPLIT, "split_errors": SPLIT_ERRORS, "prod": PROD}
    return helper_reports(work, WORKER, cases, _inputs(), BACKENDS)


def _same(expected: np.ndarray, got: np.ndarray, what: str) -> None:
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    rtol, atol = FLOAT_TOLERANCE.get(str(expected.dtype), (0, 0))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


def _as_run(backend: str, expected: np.ndarray) -> np.ndarray:
    """JAX computes in float32 without x64: there the reference's float64 pieces are
    compared as float32."""
    if expected.dtype == "float64" and backend == "jax":
        return expected.astype("float32")
    return expected


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(SPLIT)))
def test_split_helper_matches_keras2(helper_runs, backend: str, index: int) -> None:
    reference = helper_runs["reference"]["out"]
    got = helper_runs[backend]["out"]
    pieces = sorted(k for k in reference if k.startswith(f"split{index}_"))
    assert pieces, "the reference split nothing"
    what = f"split{SPLIT[index]} on {backend}"
    assert sorted(k for k in got if k.startswith(f"split{index}_") and k.count("_") == 1) == pieces
    for key in pieces:
        _same(_as_run(backend, reference[key]), got[key], what)
        shape = SPLIT[index][0]
        if len(shape) > 1 and 0 not in shape:
            # predict() casts float64 inputs to floatx first (Keras 3's data adapters)
            expected = _as_run(backend, reference[key])
            if expected.dtype == "float64":
                expected = expected.astype("float32").astype("float64")
            _same(expected, got[f"{key}_model"], what + " (model)")
        if backend == "jax":
            _same(_as_run(backend, reference[key]), got[f"{key}_jit"], what + " under jit")


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_helper_raises_where_keras2_raises(helper_runs, backend: str) -> None:
    assert helper_runs["reference"]["errors"] == [True] * len(SPLIT_ERRORS)
    assert helper_runs[backend]["errors"] == [True] * len(SPLIT_ERRORS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_keras_ops_split_takes_indices_not_sizes(helper_runs, backend: str) -> None:
    """Why the sizes need the helper: ops.split(x, [1, 2, 3]) cuts at 1, 2 and 3 (four
    pieces of 1, 1, 1 and 3), where tf.split makes three pieces of 1, 2 and 3."""
    assert helper_runs[backend]["ops_split"] == [[2, 1, 4], [2, 1, 4], [2, 1, 4], [2, 3, 4]]
    reference = helper_runs["reference"]["out"]
    assert [reference[f"split6_{j}"].shape[1] for j in range(3)] == [1, 2, 3]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(PROD)))
def test_shape_prod_helper_matches_keras2(helper_runs, backend: str, index: int) -> None:
    reference = helper_runs["reference"]["out"]
    run = helper_runs[backend]
    what = f"shape_prod{PROD[index]} on {backend}"
    assert int(run["out"][f"prod{index}"]) == int(reference[f"prod{index}"]), what
    assert run["prod_kinds"][index] == "int", what  # static: a Python int, not a tensor
    expected = reference[f"prod{index}_flat"]
    _same(expected, run["out"][f"prod{index}_flat"], what)
    if PROD[index][1] >= 1:
        _same(expected, run["out"][f"prod{index}_flat_model"], what + " (model)")
    if backend == "jax":
        _same(expected, run["out"][f"prod{index}_flat_jit"], what + " under jit")


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_prod_of_a_tensor_is_its_product(helper_runs, backend: str) -> None:
    expected = helper_runs["reference"]["out"]["prod_tensor"]
    assert int(helper_runs[backend]["out"]["prod_tensor"]) == int(expected) == 24


def test_keras_ops_prod_of_a_shape_fails_under_jax_jit(helper_runs) -> None:
    """Why the product needs the helper: ops.prod gives a traced value under jit, which
    ops.reshape refuses (a static shape is needed there)."""
    assert helper_runs["jax"]["ops_prod_jit"] not in (None, "ok")
