"""The ``shape_of`` helper ``apply`` writes for ``K.shape(x)`` / ``tf.shape(x)`` where the
code does not show ``x`` to be a tensor (rules/data/keras2_compat.py), proven against
Keras 2 itself (tf_keras's ``K.shape``) on tensorflow, jax and torch.

Keras 2 converts a Python number, bool or (nested) list to a tensor before it reads the
shape; ``keras.ops.shape`` reads ``x.shape``, which they do not have on JAX and PyTorch
(shown here: it raises there). The helper converts only those: NumPy arrays and scalars,
tensors, variables and the symbolic tensors of a functional model being built (which
``ops.convert_to_tensor`` refuses) are read as they are. Each value's shape is compared
eagerly; then a function that reads the shapes of its tensor input and of Python values
runs inside a functional model with unknown dimensions (predict: a graph on tensorflow,
jit on jax) and under ``jax.jit``, against the same function on tf_keras.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from kmigrate.rules.common.compat_helpers import HELPER_FILE
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

# Python values, as K.shape is given them (JSON keeps them as they are)
VALUES = [
    3,
    -2.5,
    True,
    0,
    [],
    [[]],
    [1, 2, 3],
    [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
    [[[1], [2]]],
    [True, False],
]
# NumPy values: (shape, dtype); "scalar" is a NumPy scalar (np.float32(1.5)), not an array
ARRAYS = [((2, 3), "float64"), ((4,), "int32"), ((), "float32"), ((0, 5), "bool"), "scalar"]

WORKER = r"""
import importlib.util, json, os, sys
import numpy as np

values = json.loads(sys.argv[2])
arrays = json.loads(sys.argv[3])
reference = os.environ.get("TF_USE_LEGACY_KERAS") == "1"

def numpy_value(spec):
    if spec == "scalar":
        return np.float32(1.5)
    shape, dtype = spec
    return np.ones(shape, dtype=dtype)

if reference:
    import tensorflow as tf
    import tf_keras as keras
    K = keras.backend
    shape, reshape, cast = K.shape, K.reshape, K.cast
    to_tensor = tf.convert_to_tensor
    listed = lambda s: [int(d) for d in s.numpy()]
else:
    import keras
    from keras import ops
    spec = importlib.util.spec_from_file_location("keras2_compat", sys.argv[1])
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    shape, reshape, cast = compat.shape_of, ops.reshape, ops.cast
    to_tensor = ops.convert_to_tensor
    listed = lambda s: [int(d) for d in s]

report = {
    "values": [listed(shape(v)) for v in values],
    "arrays": [listed(shape(numpy_value(a))) for a in arrays],
    "tensors": [listed(shape(to_tensor(numpy_value(a)))) for a in arrays[:-1]],
}
ones = np.ones((2, 5), "float32")
variable = tf.Variable(ones) if reference else keras.Variable(ones)
report["variable"] = listed(shape(variable))
# a layer input that is a list of tensors (K.concatenate(inputs) shows it): TensorFlow
# stacks it; ops.shape of the list is what a rewrite to it would do
report["tensor_list"] = listed(shape([to_tensor(ones), to_tensor(ones) * 2.0]))

def fn(t):
    # the input's shape (symbolic while the model is built), and Python values' shapes
    s = shape(t)
    n = shape([[1.0, 2.0, 3.0]] * 2)
    m = shape([[2.5]] * 4)
    flat = reshape(t, (s[0], -1)) * cast(s[1], "float32")
    return flat + cast(n[0] * 10 + n[1] + m[0] * 100, "float32")

x = np.arange(2 * 4 * 3, dtype="float32").reshape(2, 4, 3)
a = keras.Input(shape=(None, 3))
model = keras.Model(a, keras.layers.Lambda(fn, output_shape=(None,))(a))
report["model"] = np.asarray(model.predict(x, verbose=0)).tolist()
report["eager"] = np.asarray(fn(to_tensor(x))).tolist()
if not reference:
    if keras.backend.backend() == "jax":
        import jax
        report["jit"] = np.asarray(jax.jit(fn)(x)).tolist()
    try:  # what a rewrite to ops.shape does with a Python number
        ops.shape(2.5)
        report["ops_shape_number"] = "ok"
    except Exception as error:
        report["ops_shape_number"] = type(error).__name__
    try:
        ops.shape([to_tensor(ones), to_tensor(ones)])
        report["ops_shape_list"] = "ok"
    except Exception as error:
        report["ops_shape_list"] = type(error).__name__
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    import json

    work = tmp_path_factory.mktemp("shape_of")
    (work / "worker.py").write_text(WORKER)
    argv = [sys.executable, "worker.py", str(HELPER_FILE), json.dumps(VALUES), json.dumps(ARRAYS)]
    found = {"reference": run_on_backend(argv, "tensorflow", work, legacy_keras=True)}
    for backend in BACKENDS:
        found[backend] = run_on_backend(argv, backend, work)
    return found


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(VALUES)))
def test_the_shape_of_a_python_value_is_keras2s(runs, backend: str, index: int) -> None:
    expected = runs["reference"]["values"][index]
    assert runs[backend]["values"][index] == expected, (VALUES[index], backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["arrays", "tensors", "variable", "tensor_list"])
def test_the_shape_of_an_array_tensor_or_variable_is_keras2s(runs, backend: str, kind) -> None:
    assert runs[backend][kind] == runs["reference"][kind], (kind, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_a_model_eagerly_and_under_jit_the_shapes_are_keras2s(runs, backend: str) -> None:
    expected = np.asarray(runs["reference"]["eager"])
    np.testing.assert_allclose(runs["reference"]["model"], expected)
    np.testing.assert_allclose(runs[backend]["eager"], expected, err_msg="eager")
    np.testing.assert_allclose(runs[backend]["model"], expected, err_msg="model")
    if backend == "jax":
        np.testing.assert_allclose(runs[backend]["jit"], expected, err_msg="jit")


def test_ops_shape_of_a_python_number_fails_on_jax_and_torch(runs) -> None:
    # why the helper: the plain rewrite works on TensorFlow only
    found = {backend: runs[backend]["ops_shape_number"] for backend in BACKENDS}
    assert found == {"tensorflow": "ok", "jax": "AttributeError", "torch": "AttributeError"}


def test_ops_shape_of_a_list_of_tensors_fails_on_jax_and_torch(runs) -> None:
    # why a layer input used as a list takes the helper (known_tensors._used_as_list)
    found = {backend: runs[backend]["ops_shape_list"] for backend in BACKENDS}
    assert found == {"tensorflow": "ok", "jax": "AttributeError", "torch": "AttributeError"}
