"""The Keras 2 helpers ``apply`` writes into a project (``rules/data/keras2_compat.py``),
proven against Keras 2 itself (tf_keras) on tensorflow, jax and torch.

Each helper runs, as the data file holds it, over ranks, axes, dtypes and edge shapes
(a batch of one, an empty axis): eagerly, inside a functional model (``predict``:
a graph on tensorflow with the batch axis unknown, jit on jax), and under ``jax.jit``;
tf_keras's ``K.<fn>`` on the same inputs is the reference (shape, dtype and values).
Then a whole project: a Keras 2 layer whose ``K.batch_dot`` ranks are not written is
converted by ``kmigrate apply`` (which writes ``_keras2_compat.py`` into the package)
and the converted model predicts what the Keras 2 original predicts, on each backend.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend_run import helper_reports, project_runs_on_backends
from tests.differential.harness import FLOAT_TOLERANCE

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

# K.batch_dot: (x shape, y shape, axes, dtype); the batch axis first, as Keras 2 needs.
BATCH_DOT = [
    ((2, 3), (2, 3), None, "float32"),  # two rank-2 inputs: shape (batch, 1)
    ((2, 3), (2, 3), 1, "float32"),
    ((2, 4, 3), (2, 3), None, "float32"),  # y rank 2: its last axis
    ((2, 3), (2, 3, 5), (1, 1), "float32"),
    ((2, 4, 3), (2, 5, 3), [2, 2], "float32"),  # attention scores
    ((2, 4, 3), (2, 3, 5), None, "float32"),  # default: a batched matmul
    ((2, 4, 3), (2, 4, 5), (1, 1), "float32"),
    ((2, 20, 1), (2, 30, 20), (1, 2), "float32"),  # Keras 2's docstring example
    ((2, 3, 4, 5), (2, 5, 6), (3, 1), "float32"),  # rank 4 with rank 3
    ((2, 3, 4, 5), (2, 5, 6, 7), (-1, 1), "float32"),  # negative axis, rank 4 and 4
    ((2, 3, 4, 5), (2, 3, 6), (1, 1), "float32"),
    ((2, 4), (2, 3, 4), (1, 2), "float32"),
    ((2, 4, 3), (2, 5, 3), 2, "float64"),
    ((2, 4, 3), (2, 3, 5), None, "float16"),
    ((1, 1, 1), (1, 1, 1), None, "float32"),  # a batch of one, all axes of one
    ((2, 0, 3), (2, 3, 4), None, "float32"),  # an empty axis
]

# K.cast_to_floatx: (name, how the input is made) -> a tensor stays a tensor, anything
# else becomes a NumPy array (both of floatx).
CAST_TO_FLOATX = [
    "py_int",
    "py_float",
    "py_list",
    "np_int",
    "np_f64",
    "tensor_int",
    "tensor_f64",
    "variable",
]
# ... and a number's result on the left of a tensor (keras-contrib's SineReLU:
# `self.epsilon * (K.sin(x) - K.cos(x))`), eagerly and in a functional model.
CAST_ON_THE_LEFT = ["py_int", "py_float"]

# K.int_shape: concrete shapes (a scalar, an empty axis); then a symbolic input (batch
# None), a variable, a tensor of unknown rank (None: TensorFlow only) and a jit trace
INT_SHAPE = {"matrix": [2, 3], "scalar": [], "empty": [0, 4], "rank4": [1, 2, 3, 4]}


def _array(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype)


def _inputs() -> dict[str, np.ndarray]:
    arrays = {}
    for index, (x_shape, y_shape, _, dtype) in enumerate(BATCH_DOT):
        arrays[f"bd{index}_x"] = _array(x_shape, dtype, 2 * index)
        arrays[f"bd{index}_y"] = _array(y_shape, dtype, 2 * index + 1)
    arrays["int"] = np.arange(6, dtype="int32").reshape(2, 3) - 2
    arrays["f64"] = _array((2, 3), "float64", 99)
    arrays["f32"] = _array((2, 3), "float32", 98)
    return arrays


WORKER = r"""
import importlib.util, json, os, sys
import numpy as np

cases = json.load(open("cases.json"))
data = dict(np.load("inputs.npz"))
out = {}
kinds = {}
reference = os.environ.get("TF_USE_LEGACY_KERAS") == "1"

def cast_input(name, tensor, variable):
    return {
        "py_int": lambda: 2, "py_float": lambda: 0.0025, "py_list": lambda: [1, 2.5],
        "np_int": lambda: data["int"],
        "np_f64": lambda: data["f64"], "tensor_int": lambda: tensor(data["int"]),
        "tensor_f64": lambda: tensor(data["f64"]), "variable": lambda: variable(data["f64"]),
    }[name]()

if reference:
    import tensorflow as tf
    import tf_keras
    K = tf_keras.backend
    for i, (xs, ys, axes, dtype) in enumerate(cases["batch_dot"]):
        x, y = data[f"bd{i}_x"], data[f"bd{i}_y"]
        out[f"bd{i}"] = K.batch_dot(tf.constant(x), tf.constant(y), axes=axes).numpy()
    for name in cases["cast"]:
        value = K.cast_to_floatx(cast_input(name, tf.constant, tf.Variable))
        kinds[name] = "numpy" if isinstance(value, (np.ndarray, np.generic)) else "tensor"
        out[f"cast_{name}"] = np.asarray(value)
    for name in cases["cast_left"]:
        value = K.cast_to_floatx(cast_input(name, tf.constant, tf.Variable))
        out[f"cast_{name}_left"] = (value * tf.constant(data["f32"])).numpy()
        a = tf_keras.Input(shape=(3,))
        model = tf_keras.Model(a, tf_keras.layers.Lambda(lambda t, v=value: v * t)(a))
        out[f"cast_{name}_left_model"] = np.asarray(model.predict(data["f32"], verbose=0))
else:
    import keras
    from keras import ops
    spec = importlib.util.spec_from_file_location("keras2_compat", sys.argv[1])
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    backend = keras.backend.backend()
    for i, (xs, ys, axes, dtype) in enumerate(cases["batch_dot"]):
        x, y = data[f"bd{i}_x"], data[f"bd{i}_y"]
        fn = lambda a, b, axes=axes: compat.batch_dot(a, b, axes=axes)
        out[f"bd{i}"] = ops.convert_to_numpy(fn(ops.convert_to_tensor(x), ops.convert_to_tensor(y)))
        if 0 not in xs + ys:  # a functional model: the batch axis unknown while it is built
            a = keras.Input(shape=xs[1:], dtype=dtype)
            b = keras.Input(shape=ys[1:], dtype=dtype)
            layer = keras.layers.Lambda(lambda t, f=fn: f(t[0], t[1]), dtype=dtype)
            model = keras.Model([a, b], layer([a, b]))
            out[f"bd{i}_model"] = np.asarray(model.predict([x, y], verbose=0))
        if backend == "jax":
            import jax
            out[f"bd{i}_jit"] = np.asarray(jax.jit(fn)(x, y))
    for name in cases["cast"]:
        value = compat.cast_to_floatx(cast_input(name, ops.convert_to_tensor, keras.Variable))
        kinds[name] = "numpy" if isinstance(value, (np.ndarray, np.generic)) else "tensor"
        out[f"cast_{name}"] = ops.convert_to_numpy(value)
        if name.startswith("tensor") and backend == "jax":
            import jax
            out[f"cast_{name}_jit"] = np.asarray(jax.jit(compat.cast_to_floatx)(data["int"]))
    for name in cases["cast_left"]:
        value = compat.cast_to_floatx(cast_input(name, ops.convert_to_tensor, keras.Variable))
        out[f"cast_{name}_left"] = ops.convert_to_numpy(value * ops.convert_to_tensor(data["f32"]))
        a = keras.Input(shape=(3,))
        model = keras.Model(a, keras.layers.Lambda(lambda t, v=value: v * t)(a))
        out[f"cast_{name}_left_model"] = np.asarray(model.predict(data["f32"], verbose=0))
    a = keras.Input(shape=(3,), dtype="int32")
    model = keras.Model(a, keras.layers.Lambda(compat.cast_to_floatx)(a))
    out["cast_model"] = np.asarray(model.predict(data["int"], verbose=0))
shapes = {}
if reference:
    for name, shape in cases["int_shape"].items():
        shapes[name] = K.int_shape(tf.zeros(shape))
    shapes["symbolic"] = K.int_shape(tf_keras.Input(shape=(3, 4)))
    unknown = tf.function(lambda t: tf.constant(K.int_shape(t) is None),
                          input_signature=[tf.TensorSpec(None, tf.float32)])
    shapes["unknown_rank"] = bool(unknown(tf.zeros((2, 3))))
    shapes["variable"] = K.int_shape(tf.Variable(tf.zeros((2, 5))))
else:
    for name, shape in cases["int_shape"].items():
        shapes[name] = compat.int_shape(ops.zeros(shape))
    shapes["symbolic"] = compat.int_shape(keras.Input(shape=(3, 4)))
    shapes["variable"] = compat.int_shape(keras.Variable(np.zeros((2, 5), "float32")))
    if backend == "tensorflow":
        import tensorflow as tf
        unknown = tf.function(lambda t: tf.constant(compat.int_shape(t) is None),
                              input_signature=[tf.TensorSpec(None, tf.float32)])
        shapes["unknown_rank"] = bool(unknown(tf.zeros((2, 3))))
    if backend == "jax":
        import jax
        jax.jit(lambda t: shapes.__setitem__("jit", compat.int_shape(t)) or t)(np.zeros((2, 3)))
np.savez(f"out_{os.environ['KERAS_BACKEND']}_{int(reference)}.npz", **out)
print("REPORT" + json.dumps({"kinds": kinds, "shapes": shapes}))
"""


@pytest.fixture(scope="module")
def helper_runs(tmp_path_factory):
    """The reference (tf_keras) and each backend's run of the helpers: outputs and the
    kind (NumPy array or tensor) of each K.cast_to_floatx result."""
    work = tmp_path_factory.mktemp("helpers")
    cases = {
        "batch_dot": BATCH_DOT,
        "cast": CAST_TO_FLOATX,
        "cast_left": CAST_ON_THE_LEFT,
        "int_shape": INT_SHAPE,
    }
    return helper_reports(work, WORKER, cases, _inputs(), BACKENDS)


def _same(expected: np.ndarray, got: np.ndarray, what: str, precision: str = "") -> None:
    """Same shape, dtype and values (within the tolerance of ``precision``, by default
    the dtype's own)."""
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    rtol, atol = FLOAT_TOLERANCE.get(precision or str(expected.dtype), (0, 0))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


def _float64_on(backend: str, expected: np.ndarray) -> np.ndarray:
    """JAX computes in float32 unless x64 is enabled (any Keras 3 code on jax, not the
    helper): there the reference's float64 result is compared as float32."""
    return (
        expected.astype("float32") if backend == "jax" and expected.dtype == "float64" else expected
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(BATCH_DOT)))
def test_batch_dot_helper_matches_keras2(helper_runs, backend: str, index: int) -> None:
    expected = _float64_on(backend, helper_runs["reference"]["out"][f"bd{index}"])
    got = helper_runs[backend]["out"]
    x_shape, y_shape, _, dtype = BATCH_DOT[index]
    what = f"batch_dot{BATCH_DOT[index]} on {backend}"
    _same(expected, got[f"bd{index}"], what)
    if 0 not in x_shape + y_shape:  # an empty axis is not given to keras.Input
        # predict() casts float64 inputs to floatx first (Keras 3's data adapters)
        precision = "float32" if dtype == "float64" else ""
        _same(expected, got[f"bd{index}_model"], what + " in a functional model", precision)
    if backend == "jax":
        _same(expected, got[f"bd{index}_jit"], what + " under jax.jit")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", CAST_TO_FLOATX)
def test_cast_to_floatx_helper_matches_keras2(helper_runs, backend: str, name: str) -> None:
    reference, run = helper_runs["reference"], helper_runs[backend]
    assert run["kinds"][name] == reference["kinds"][name]  # NumPy stays NumPy
    expected = reference["out"][f"cast_{name}"]
    _same(expected, run["out"][f"cast_{name}"], f"cast_to_floatx({name}) on {backend}")
    if f"cast_{name}_jit" in run["out"]:
        _same(
            reference["out"]["cast_tensor_int"],
            run["out"][f"cast_{name}_jit"],
            f"cast_to_floatx under jax.jit on {backend}",
        )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", CAST_ON_THE_LEFT)
def test_cast_to_floatx_of_a_number_on_the_left_of_a_tensor(
    helper_runs, backend: str, name: str
) -> None:
    """`K.cast_to_floatx(0.0025) * x` runs on every backend with Keras 2's numbers (a 0-d
    NumPy array there raised TypeError on torch: keras-contrib's SineReLU)."""
    reference, run = helper_runs["reference"]["out"], helper_runs[backend]["out"]
    for suffix in ("left", "left_model"):
        key = f"cast_{name}_{suffix}"
        _same(reference[key], run[key], f"{key} on {backend}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_cast_to_floatx_helper_in_a_functional_model(helper_runs, backend: str) -> None:
    expected = helper_runs["reference"]["out"]["cast_tensor_int"]
    _same(expected, helper_runs[backend]["out"]["cast_model"], f"in a model on {backend}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_shape_helper_matches_keras2(helper_runs, backend: str) -> None:
    expected = helper_runs["reference"]["shapes"]
    got = helper_runs[backend]["shapes"]
    for name in [*INT_SHAPE, "symbolic", "variable"]:
        assert got[name] == expected[name], name
    assert expected["unknown_rank"] is True  # Keras 2 says None for an unknown rank
    if backend == "tensorflow":
        assert got["unknown_rank"] is True
    if backend == "jax":
        assert got["jit"] == expected["matrix"]


# -- a whole project, converted by `kmigrate apply` ----------------------------------

LAYER = '''
from tensorflow.keras import backend as K
from tensorflow import keras


class Attention(keras.layers.Layer):
    """Scores and values with K.batch_dot on inputs whose ranks the code never states."""

    def call(self, inputs):
        query, key, value = inputs
        scale = K.cast_to_floatx(0.5)
        scores = K.softmax(K.batch_dot(query, key, axes=[2, 2]) * scale)
        pooled = K.batch_dot(K.sum(query, axis=1), K.sum(key, axis=1), axes=1)
        return K.batch_dot(scores, value) + pooled[:, :, None]
'''

DRIVER = """
import json, os
import numpy as np
from tensorflow import keras
if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
    import keras
from model.attention import Attention

rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((3, 4, 6)).astype("float32") for _ in range(3))
inputs = [keras.Input(shape=(4, 6)) for _ in range(3)]
model = keras.Model(inputs, Attention()(inputs))
print("REPORT" + json.dumps(np.asarray(model.predict([q, k, v], verbose=0)).tolist()))
"""


@pytest.fixture(scope="module")
def project_runs(tmp_path_factory):
    """The Keras 2 project's prediction, and the converted project's on each backend."""
    files = {"model/__init__.py": "", "model/attention.py": LAYER, "driver.py": DRIVER}
    return project_runs_on_backends(tmp_path_factory, files, BACKENDS)


def test_apply_writes_the_helper_module_beside_the_layer(project_runs) -> None:
    written, _ = project_runs
    layer = next(text for path, text in written.items() if path.endswith("attention.py"))
    helpers = next(text for path, text in written.items() if path.endswith("_keras2_compat.py"))
    assert "from ._keras2_compat import batch_dot" in layer
    assert "K.batch_dot(" not in layer and "K.cast_to_floatx(" not in layer
    assert "def batch_dot(" in helpers and "def cast_to_floatx(" in helpers
    assert helpers.startswith('"""Keras 2 backend functions')


@pytest.mark.parametrize("backend", BACKENDS)
def test_converted_project_predicts_what_keras2_predicts(project_runs, backend: str) -> None:
    _, runs = project_runs
    expected = np.asarray(runs["reference"], dtype="float32")
    _same(expected, np.asarray(runs[backend], dtype="float32"), f"the model on {backend}")
