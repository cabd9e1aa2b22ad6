"""KM108's fix table, checked against tf_keras: each Keras 2 backend call, rewritten by
``kmigrate apply``, computes what tf_keras's ``K.<fn>`` computes on the same inputs
(negative numbers for ``K.sqrt``, default axes, ``K.constant``'s floatx dtype, ``K.dtype``'s
string ...), and the rewritten module, being TensorFlow, imports and gives the same
numbers under ``KERAS_BACKEND=jax`` and ``=torch`` (Keras 3 installed, tf_keras never
imported), in a ``tf.data`` map too.

One module holds every case (a function each), converted once; the original runs with
``K`` bound to tf_keras's backend, the converted one as written.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kmigrate.api import apply_to_text
from kmigrate.rules.km1_imports.keras2_backend_tf import ENTRIES

pytestmark = pytest.mark.backends

# Inputs every case receives: floats with negatives, ints, bools, indices.
INPUTS = """
def inputs():
    f = tf.constant([[1.5, -2.0, 0.25], [-0.5, 4.0, 9.0]])
    i = tf.constant([[1, 5, 2], [7, 0, 3]])
    b = tf.constant([[True, False, True], [False, False, True]])
    idx = tf.constant([1, 0])
    return f, i, b, idx
"""

CASES = [
    "K.cast(i, 'float32')",
    "K.cast(f, dtype='int32')",
    "K.cast(b, 'float32')",
    "K.shape(f)",
    "K.abs(f)",
    "K.exp(f)",
    "K.log(f)",  # NaN for the negatives, as tf.math.log
    "K.round(f * 2.5)",
    "K.sign(i - 2)",
    "K.square(i)",
    "K.tanh(f)",
    "K.transpose(f)",
    "K.equal(i, 5)",
    "K.not_equal(f, 0.25)",
    "K.greater(f, 0.0)",
    "K.greater_equal(i, 2)",
    "K.less(f, 1)",
    "K.less_equal(i, 2)",
    "K.maximum(f, 0.0)",
    "K.minimum(i, 3)",
    "K.pow(f, 2)",
    "K.pow(i, a=3)",
    "K.sum(f)",
    "K.sum(i, axis=1)",
    "K.sum(f, 0, True)",
    "K.sum(f, keepdims=True)",
    "K.max(f, axis=0)",
    "K.min(i, 1, True)",
    "K.prod(f, keepdims=True, axis=-1)",
    "K.logsumexp(f)",
    "K.logsumexp(f, axis=1, keepdims=True)",
    "K.argmax(f)",  # last axis, where tf.argmax's default is 0
    "K.argmax(i, axis=0)",
    "K.argmin(f)",
    "K.argmin(i, 0)",
    "K.cumsum(i)",
    "K.cumsum(f, axis=1)",
    "K.reshape(f, (3, 2))",
    "K.reshape(i, shape=[-1])",
    "K.expand_dims(f)",  # last axis; tf.expand_dims requires one
    "K.expand_dims(i, 0)",
    "K.expand_dims(i, axis=1)",
    "K.stack([f, f])",
    "K.stack([i, i], axis=-1)",
    "K.gather(f, idx)",
    "K.gather(i, indices=[1])",
    "K.permute_dimensions(f, (1, 0))",
    "K.permute_dimensions(K.expand_dims(f), pattern=[2, 0, 1])",
    "K.one_hot(idx, 4)",
    "K.one_hot(indices=idx, num_classes=3)",
    "K.zeros_like(f)",
    "K.zeros_like(i, dtype='float32')",
    "K.ones_like(b)",
    "K.ones_like(f, 'int64', name='ones')",
    "K.constant([1, 2])",  # floatx, although the values are ints
    "K.constant(3, dtype='int32')",
    "K.constant(1.5, shape=(2, 2))",
    "K.constant([[1, 2]], 'int64', name='c')",
    "K.sqrt(f)",  # negatives become 0 first
    "K.sqrt(K.cast(i - 3, 'float64'))",
    "K.flatten(f + 1)",
    "K.squeeze(K.expand_dims(f, 0), 0)",
    "K.squeeze(K.expand_dims(i), axis=-1)",
    "K.dtype(f)",  # a string
    "K.dtype(b)",
    "K.update(tf.Variable([1.0, 2.0]), [3.0, 4.0])",
    "K.update_add(tf.Variable([1, 2]), [3, 4])",
    "K.update_sub(tf.Variable([1.0, 2.0]), decrement=[0.5, 1.0])",
    "K.name_scope('block').name",
    "tf.function(lambda v: K.gradients(K.sum(v * v), [v])[0])(f)",  # graph mode only
]

# A tf.data map (traced as a graph) built from the same functions.
PIPELINE = """
def _row(row):
    scaled = K.sqrt(row) / (K.sum(K.abs(row)) + K.constant(1))
    return K.cast(K.argmax(K.expand_dims(scaled, 0)), 'float32'), K.maximum(scaled, 0.1)


def pipeline(f):
    return [[a.numpy().tolist(), b.numpy().tolist()] for a, b in
            tf.data.Dataset.from_tensor_slices(f).map(_row)]
"""


def _module() -> str:
    cases = "".join(
        f"\n\ndef case_{n}(f, i, b, idx):\n    return {expr}\n" for n, expr in enumerate(CASES)
    )
    # Static evidence that the cases are data code (functions a dataset maps: never
    # called here): elsewhere a Keras backend call is Keras code and becomes keras.ops.
    mapped = ", ".join(
        ["dataset.map(inputs)"] + [f"dataset.map(case_{n})" for n in range(len(CASES))]
    )
    evidence = f"\n\ndef _mapped(dataset):\n    return [{mapped}]\n"
    header = "import tensorflow as tf\nfrom keras import backend as K\n\n"
    return f"{header}{INPUTS}{cases}{evidence}{PIPELINE}"


RUN = """
def results():
    f, i, b, idx = inputs()
    out = {}
    for n in range(COUNT):
        value = globals()[f"case_{n}"](f, i, b, idx)
        if isinstance(value, str):
            out[n] = ["str", value]
        else:
            out[n] = [value.dtype.name, value.numpy().tolist()]
    out["pipeline"] = pipeline(f)
    return out
"""


def _run(text: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(text + RUN.replace("COUNT", str(len(CASES))), "<case>", "exec"), namespace)
    return json.loads(json.dumps(namespace["results"]()))  # same shape as a subprocess's


@pytest.fixture(scope="module")
def converted() -> str:
    return apply_to_text(_module())


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    # tf_keras's own module: its public `backend` leaves out a few (`logsumexp`)
    return _run(_module().replace("from keras import backend", "from tf_keras.src import backend"))


def test_every_automatic_entry_is_rewritten_and_has_a_case(converted: str) -> None:
    assert "K." not in converted and "keras import backend" not in converted, converted
    # (a call to the project's helper is proven in tests/rules/test_keras2_helpers_backends.py)
    automatic = {e.symbol for e in ENTRIES if e.automatic and e.builder != "keras2_helper"}
    covered = {name for expr in CASES for name in re.findall(r"K\.\w+", expr)}
    assert automatic == covered


def test_table_signatures_are_tf_keras_signatures() -> None:
    from tf_keras.src import backend

    for entry in ENTRIES:
        if entry.automatic and entry.builder != "keras2_helper":
            shown = str(inspect.signature(getattr(backend, entry.symbol[2:])))
            assert shown == f"({entry.sig})", entry.symbol


def _same(got: dict[str, Any], expected: dict[str, Any]) -> None:
    for key, want in expected.items():
        label = CASES[int(key)] if key != "pipeline" else "pipeline"
        assert str(got[key]) == str(want), label  # NaN compares equal as text


def test_rewritten_calls_compute_what_tf_keras_computed(
    converted: str, reference: dict[str, Any]
) -> None:
    _same(_run(converted), reference)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_rewritten_module_runs_the_same_under_other_keras_backends(
    backend: str, converted: str, reference: dict[str, Any], tmp_path: Path
) -> None:
    script = tmp_path / "converted.py"
    script.write_text(
        converted
        + RUN.replace("COUNT", str(len(CASES)))
        + "\n\nimport json, sys, keras\n"
        + "assert 'tf_keras' not in sys.modules\n"
        + "print(json.dumps([keras.backend.backend(), results()]))\n"
    )
    env = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ran_on, got = json.loads(done.stdout.strip().splitlines()[-1])
    assert ran_on == backend
    _same(got, reference)
