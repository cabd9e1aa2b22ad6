"""``K.rnn`` has no public Keras 3 form; ``apply`` calls the project's ``rnn`` helper
(``rules/data/keras2_compat.py``), Keras 2's loop written on ``keras.ops.scan``.

Proven against Keras 2 itself (tf_keras's ``K.rnn``) on tensorflow, jax and torch, over
what changes the loop: go_backwards, constants, a mask (with and without
zero_output_for_mask), a tensor input_length (each sample stops at its length), an int
input_length (ignored, as in Keras 2), return_all_outputs=False, unroll (where Keras 2's
unrolled loop differs: it ignores a tensor input_length and zeroes masked outputs
afterwards in time order), time_major, two states, and a CRF-like step (a float step
counter in the states, argmin tables as outputs: keras-contrib's CRF shape). Each case
runs eagerly, under ``jax.jit``, and (a subset) inside a functional model whose batch
axis is unknown while it is built. Then a whole project: a Keras 2 layer calling K.rnn
converted by ``kmigrate apply`` predicts what the original predicts.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from kmigrate.rules.common.compat_helpers import HELPER_FILE
from tests.backend_run import project_runs_on_backends, saved_outputs

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

# case -> (step function, K.rnn keywords); strings name the worker's arrays
CASES = {
    "plain": ("simple", {}),
    "backwards": ("simple", {"go_backwards": True}),
    "constants": ("with_constant", {"constants": ["C"]}),
    "mask": ("simple", {"mask": "MASK"}),
    "mask_zero": ("simple", {"mask": "MASK", "zero_output_for_mask": True}),
    "mask_backwards": ("simple", {"mask": "MASK", "go_backwards": True}),
    "mask_zero_backwards": (
        "simple",
        {"mask": "MASK", "go_backwards": True, "zero_output_for_mask": True},
    ),
    "lengths": ("simple", {"input_length": "LENGTHS"}),
    "lengths_backwards": ("simple", {"input_length": "LENGTHS", "go_backwards": True}),
    "lengths_int": ("simple", {"input_length": 5}),
    "last_only": ("simple", {"return_all_outputs": False}),
    "last_only_mask": ("simple", {"mask": "MASK", "return_all_outputs": False}),
    "unroll": ("simple", {"unroll": True}),
    "unroll_mask": ("simple", {"unroll": True, "mask": "MASK"}),
    "unroll_mask_zero": ("simple", {"unroll": True, "mask": "MASK", "zero_output_for_mask": True}),
    "unroll_mask_zero_backwards": (
        "simple",
        {"unroll": True, "mask": "MASK", "zero_output_for_mask": True, "go_backwards": True},
    ),
    "unroll_lengths": ("simple", {"unroll": True, "input_length": "LENGTHS"}),
    "time_major": ("simple", {"time_major": True}),
    "two_states": ("two_states", {}),
    "two_states_mask": ("two_states", {"mask": "MASK"}),
    "crf_like": ("crf_like", {}),
}
# the cases also run inside a functional model (mask and lengths are model inputs there)
IN_A_MODEL = (
    "plain",
    "mask_backwards",
    "lengths",
    "lengths_backwards",
    "two_states",
    "crf_like",
    "last_only_mask",
    "unroll_mask_zero_backwards",
)

WORKER = r"""
import importlib.util, json, os, sys
import numpy as np

reference = os.environ.get("TF_USE_LEGACY_KERAS") == "1"
cases = json.load(open("cases.json"))
rng = np.random.default_rng(0)
W = rng.standard_normal((3, 4)).astype("float32")
U = rng.standard_normal((4, 4)).astype("float32")
arrays = {
    "C": rng.standard_normal((2, 4)).astype("float32"),
    "MASK": np.array([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1]], dtype=bool),
    "LENGTHS": np.array([3, 5], dtype="int32"),
}
X = rng.standard_normal((2, 5, 3)).astype("float32")
H0 = rng.standard_normal((2, 4)).astype("float32")

if reference:
    import tensorflow as tf
    import tf_keras
    O = tf_keras.backend
    rnn, tensor = O.rnn, tf.constant
else:
    import keras
    from keras import ops as O
    spec = importlib.util.spec_from_file_location("keras2_compat", sys.argv[1])
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    rnn, tensor = compat.rnn, O.convert_to_tensor


def simple(x, states):
    h = O.tanh(x @ tensor(W) + states[0] @ tensor(U))
    return h, [h]


def with_constant(x, states):
    h = O.tanh(x @ tensor(W) + states[0] @ tensor(U) + states[1])
    return h, [h]


def two_states(x, states):
    h, c = states[0], states[1]
    c = c * 0.5 + O.tanh(x @ tensor(W))
    h = O.tanh(c + h @ tensor(U))
    return h * 2.0, [h, c]


def crf_like(x, states):
    prev, i = states[0], states[1]
    energy = O.expand_dims(prev, 2) + O.expand_dims(x @ tensor(W), 1)
    table = O.cast(O.argmin(energy, 1), "float32")
    return table + i, [O.min(energy, 1), i + 1]


STEPS = {"simple": simple, "with_constant": with_constant, "two_states": two_states,
         "crf_like": crf_like}


def run(name, x, h0, given=None):
    step_name, kwargs = cases[name]
    kwargs = dict(kwargs)
    for key, value in kwargs.items():
        if key == "constants":
            kwargs[key] = [tensor(arrays[v]) for v in value]
        elif isinstance(value, str):
            kwargs[key] = (given or {}).get(value, None)
            if kwargs[key] is None:
                kwargs[key] = tensor(arrays[value])
    states = {"two_states": lambda: [h0, h0 * 0.25],
              "crf_like": lambda: [h0, O.zeros_like(h0[:, :1])]}.get(step_name, lambda: [h0])()
    last, outputs, new_states = rnn(STEPS[step_name], x, states, **kwargs)
    return [last, outputs, *new_states]


def data_for(name):
    return np.swapaxes(X, 0, 1).copy() if cases[name][1].get("time_major") else X


out = {}
for name in cases:
    values = run(name, tensor(data_for(name)), tensor(H0))
    for k, v in enumerate(values):
        out[f"{name}_{k}"] = np.asarray(v) if reference else O.convert_to_numpy(v)
    if not reference and keras.backend.backend() == "jax":
        import jax
        jitted = jax.jit(lambda x, h, name=name: run(name, x, h))(data_for(name), H0)
        for k, v in enumerate(jitted):
            out[f"{name}_{k}_jit"] = np.asarray(v)
if not reference:
    class Loop(keras.layers.Layer):
        def __init__(self, case, **kwargs):
            super().__init__(**kwargs)
            self.case = case

        def call(self, x, h, mask, lengths):
            return run(self.case, x, h, {"MASK": mask, "LENGTHS": lengths})

    for name in json.load(open("in_a_model.json")):
        x_in, h_in = keras.Input((5, 3)), keras.Input((4,))
        m_in, l_in = keras.Input((5,), dtype="bool"), keras.Input((), dtype="int32")
        model = keras.Model([x_in, h_in, m_in, l_in], Loop(name)(x_in, h_in, m_in, l_in))
        predicted = model.predict([X, H0, arrays["MASK"], arrays["LENGTHS"]], verbose=0)
        for k, v in enumerate(predicted):
            out[f"{name}_{k}_model"] = np.asarray(v)
np.savez(f"out_{os.environ['KERAS_BACKEND']}_{int(reference)}.npz", **out)
print("REPORT{}")
"""


@pytest.fixture(scope="module")
def loop_runs(tmp_path_factory) -> dict[str, dict[str, np.ndarray]]:
    """Every case's (last_output, outputs, *new_states): tf_keras's K.rnn, and the
    helper on each backend (eager, ``_jit``, ``_model``)."""
    import json

    work = tmp_path_factory.mktemp("rnn")
    (work / "worker.py").write_text(WORKER)
    (work / "cases.json").write_text(json.dumps(CASES))
    (work / "in_a_model.json").write_text(json.dumps(IN_A_MODEL))
    return saved_outputs(work, [sys.executable, "worker.py", str(HELPER_FILE)], BACKENDS)


def _same(expected: np.ndarray, got: np.ndarray, what: str) -> None:
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_rnn_helper_matches_keras2(loop_runs, backend: str, case: str) -> None:
    reference, got = loop_runs["reference"], loop_runs[backend]
    values = sorted(k for k in reference if k.rpartition("_")[0] == case)
    assert values, case
    for key in values:
        what = f"K.rnn {case} {key} on {backend}"
        _same(reference[key], got[key], what)
        if backend == "jax":
            _same(reference[key], got[key + "_jit"], what + " under jax.jit")
        if case in IN_A_MODEL:
            _same(reference[key], got[key + "_model"], what + " in a functional model")


# -- a whole project, converted by `kmigrate apply` ----------------------------------

LAYER = '''
from tensorflow.keras import backend as K
from tensorflow import keras


class ForwardScores(keras.layers.Layer):
    """A CRF-like forward pass: log-sum-exp over the previous tags at each step."""

    def build(self, input_shape):
        tags = input_shape[-1]
        self.transitions = self.add_weight(
            name="transitions", shape=(tags, tags), initializer="glorot_uniform"
        )

    def step(self, energy, states):
        previous = K.expand_dims(states[0], 2)
        scores = K.log(K.sum(K.exp(previous + self.transitions), axis=1)) + energy
        return scores, [scores]

    def call(self, inputs, mask=None):
        first = inputs[:, 0, :]
        last, scores, _ = K.rnn(self.step, inputs[:, 1:, :], [first], go_backwards=False)
        return K.concatenate([K.expand_dims(last, 1), scores], axis=1)
'''

DRIVER = """
import json, os
import numpy as np
from tensorflow import keras
if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
    import keras
from model.crf import ForwardScores

rng = np.random.default_rng(0)
x = rng.standard_normal((3, 6, 4)).astype("float32")
inputs = keras.Input(shape=(None, 4))
model = keras.Model(inputs, ForwardScores()(inputs))
model.layers[-1].set_weights([rng.standard_normal((4, 4)).astype("float32")])
print("REPORT" + json.dumps(np.asarray(model.predict(x, verbose=0)).tolist()))
"""


@pytest.fixture(scope="module")
def project_runs(tmp_path_factory):
    """The Keras 2 project's prediction, and the converted project's on each backend."""
    files = {"model/__init__.py": "", "model/crf.py": LAYER, "driver.py": DRIVER}
    return project_runs_on_backends(tmp_path_factory, files, BACKENDS)


def test_apply_calls_the_rnn_helper(project_runs) -> None:
    written, _ = project_runs
    layer = next(text for path, text in written.items() if path.endswith("crf.py"))
    helpers = next(text for path, text in written.items() if path.endswith("_keras2_compat.py"))
    assert "from ._keras2_compat import rnn" in layer and "K.rnn(" not in layer
    assert "rnn(self.step, inputs[:, 1:, :], [first], go_backwards=False)" in layer
    assert "def rnn(" in helpers and "def batch_dot(" not in helpers


@pytest.mark.parametrize("backend", BACKENDS)
def test_converted_project_predicts_what_keras2_predicts(project_runs, backend: str) -> None:
    _, runs = project_runs
    expected = np.asarray(runs["reference"], dtype="float32")
    got = np.asarray(runs[backend], dtype="float32")
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
