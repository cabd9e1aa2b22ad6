"""KM527 on the real backends: Keras 2 code that reads a layer's node-0 tensors with
``get_output_at(0)`` / ``get_input_at(0)`` and a tensor's producer with
``_keras_history.layer`` raises AttributeError under Keras 3; after ``kmigrate apply``
(``.output``, ``.input``, ``._keras_history.operation``) it builds the same feature model
on TensorFlow, JAX and PyTorch, which predicts what the Keras 2 original (tf_keras) does.

The converted code comes from the engine (``apply_to_text``). Each side runs in its own
subprocess: ``KERAS_BACKEND`` (and tf_keras versus Keras 3) is chosen at import.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import keras2_and_converted, run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    from tensorflow import keras


    def build():
        inputs = keras.Input((4,))
        hidden = keras.layers.Dense(3, activation="tanh", name="hidden")(inputs)
        outputs = keras.layers.Dense(2, name="head")(hidden)
        return keras.Model(inputs, outputs)


    def features(model):
        hidden = model.get_layer("hidden")
        head = model.get_layer("head")
        assert model.output._keras_history.layer is head
        return keras.Model(hidden.get_input_at(0), [hidden.get_output_at(0), head.get_output_at(0)])
    """
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    spec.loader.exec_module(subject)
    model = subject.build()
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
    x = rng.normal(size=(3, 4)).astype("float32")
    try:
        hidden, head = subject.features(model).predict(x, verbose=0)
    except Exception as error:
        print("REPORT" + json.dumps({"error": f"{type(error).__name__}: {error}"[:300]}))
        raise SystemExit(0)
    print("REPORT" + json.dumps({"hidden": hidden.tolist(), "head": head.tolist()}))
    """
)


def test_the_node_reads_match_keras2_on_every_backend(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert "model.output._keras_history.operation is head" in converted
    assert "keras.Model(hidden.input, [hidden.output, head.output])" in converted
    reference, targets = keras2_and_converted(WORKER, LEGACY, converted, tmp_path)
    for backend, got in targets.items():
        for name in ("hidden", "head"):
            np.testing.assert_allclose(
                got[name], reference[name], rtol=1e-5, atol=1e-6, err_msg=backend
            )


def test_the_keras2_reads_fail_under_keras3(tmp_path) -> None:
    """The reason for the rule: with only the imports ported, Keras 3 has none of them."""
    imports_only = tmp_path / "imports_only.py"
    imports_only.write_text(LEGACY.replace("from tensorflow import keras", "import keras"))
    got = run_module_worker(WORKER, imports_only, "jax", tmp_path)
    assert got.get("error", "").startswith("AttributeError"), got
