"""KM529 on the real backends: Keras 2 code that takes ``model.input`` / ``model.output`` of
a ``Sequential`` to build a feature model raises AttributeError under Keras 3 (its
``Sequential`` has no ``input`` / ``output`` of its own); after ``kmigrate apply``
(``model.inputs[0]``, ``model.outputs[0]``) the feature model predicts on TensorFlow, JAX
and PyTorch what the Keras 2 original (tf_keras) predicts, with the same weights.

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
        model = keras.Sequential(
            [keras.Input((4,)), keras.layers.Dense(3, activation="tanh"), keras.layers.Dense(2)]
        )
        features = keras.Model(model.input, [model.layers[0].output, model.output])
        return model, features
    """
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    spec.loader.exec_module(subject)
    try:
        model, features = subject.build()
    except Exception as error:
        print("REPORT" + json.dumps({"error": f"{type(error).__name__}: {error}"[:300]}))
        raise SystemExit(0)
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
    x = rng.normal(size=(3, 4)).astype("float32")
    hidden, out = features.predict(x, verbose=0)
    print("REPORT" + json.dumps({"hidden": hidden.tolist(), "out": out.tolist()}))
    """
)


def test_the_sequential_feature_model_matches_keras2_on_every_backend(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert "keras.Model(model.inputs[0], [model.layers[0].output, model.outputs[0]])" in (converted)
    reference, targets = keras2_and_converted(WORKER, LEGACY, converted, tmp_path)
    for backend, got in targets.items():
        for name in ("hidden", "out"):
            np.testing.assert_allclose(
                got[name], reference[name], rtol=1e-5, atol=1e-6, err_msg=backend
            )


@pytest.mark.parametrize("attribute", ["input", "output"])
def test_keras3_sequential_has_no_input_or_output(tmp_path, attribute) -> None:
    """The reason for the rule: with only the imports ported, either read raises."""
    source = LEGACY.replace("from tensorflow import keras", "import keras")
    other = "output" if attribute == "input" else "input"
    for end in (",", "]"):
        source = source.replace(f"model.{other}{end}", f"model.{other}s[0]{end}")
    assert f"model.{attribute}" in source and f"model.{other}s[0]" in source
    subject = tmp_path / "imports_only.py"
    subject.write_text(source)
    got = run_module_worker(WORKER, subject, "jax", tmp_path)
    assert got.get("error", "").startswith("AttributeError"), got
