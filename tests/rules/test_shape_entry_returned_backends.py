"""Why KM202 refuses a returned shape entry (``Lambda(lambda x: tf.shape(x)[1])``): in
Keras 2 it is a scalar int32 tensor and the model runs; ``keras.ops.shape(x)[1]`` is a
Python int there, and the same model fails on tensorflow, jax and torch; the form the
finding gives (``ops.convert_to_tensor(..., dtype="int32")``) gives the original's numbers.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

WORKER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    form = sys.argv[1]
    if form == "keras2":
        import tensorflow as tf
        from tensorflow import keras
        length = lambda x: tf.shape(x)[1]
    else:
        import keras
        from keras import ops
        length = {
            "ops_shape": lambda x: ops.shape(x)[1],
            "advised": lambda x: ops.convert_to_tensor(ops.shape(x)[1], dtype="int32"),
        }[form]
    cast = keras.backend.cast if form == "keras2" else keras.ops.cast
    inputs = keras.Input((None, 4))
    try:
        n = keras.layers.Lambda(length)(inputs)
        scaled = keras.layers.Lambda(lambda a: a[0] * cast(a[1], "float32"))([inputs, n])
        model = keras.Model(inputs, scaled)
        out = model.predict(np.ones((2, 3, 4), "float32"), verbose=0)
        print("REPORT" + json.dumps({"out": np.asarray(out).tolist()}))
    except Exception as error:
        print("REPORT" + json.dumps({"error": type(error).__name__}))
    """
)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_a_returned_shape_entry_needs_the_tensor_form(backend: str, tmp_path: Path) -> None:
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    keras2 = run_on_backend(
        [sys.executable, str(worker), "keras2"], "tensorflow", tmp_path, legacy_keras=True
    )
    assert "out" in keras2, keras2
    plain = run_on_backend([sys.executable, str(worker), "ops_shape"], backend, tmp_path)
    assert "error" in plain, plain
    advised = run_on_backend([sys.executable, str(worker), "advised"], backend, tmp_path)
    assert advised == keras2
