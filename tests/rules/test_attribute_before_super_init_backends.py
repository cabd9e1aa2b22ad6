"""KM516 on the real backends: a Keras 2 wrapper that sets ``self.layer = layer`` before
``super().__init__()`` raises on PyTorch under Keras 3; after ``kmigrate apply`` moved the
``super().__init__(...)`` line first, it builds and predicts on TensorFlow, JAX and PyTorch
what the Keras 2 original (tf_keras) predicts, with the same weights.

The converted code comes from the engine (``apply_to_text``). Each side runs in its own
subprocess: ``KERAS_BACKEND`` (and tf_keras versus Keras 3) is chosen at import.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import PREDICT_WORKER, keras2_and_converted, run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    from tensorflow import keras


    class Scaled(keras.layers.Layer):
        def __init__(self, layer, factor=2.0, **kwargs):
            self.layer = layer
            self.factor = factor
            super(Scaled, self).__init__(**kwargs)

        def call(self, x):
            return self.layer(x) * self.factor


    class Residual(keras.layers.Wrapper):
        def __init__(self, layer, **kwargs):
            self.layer = layer
            super().__init__(layer, **kwargs)

        def call(self, x):
            return x + self.layer(x)


    def build():
        inputs = keras.Input((4,))
        hidden = Scaled(keras.layers.Dense(4), factor=3.0)(inputs)
        outputs = Residual(keras.layers.Dense(4, activation="tanh"))(hidden)
        return keras.Model(inputs, outputs)
    """
).lstrip("\n")

WORKER = PREDICT_WORKER


def test_the_moved_super_init_builds_and_matches_keras2_on_every_backend(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert "super(Scaled, self).__init__(**kwargs)\n        self.layer = layer" in converted
    assert "super().__init__(layer, **kwargs)\n        self.layer = layer" in converted
    reference, targets = keras2_and_converted(WORKER, LEGACY, converted, tmp_path)
    assert reference["weights"] == 4
    for backend, got in targets.items():
        assert got["weights"] == reference["weights"], backend
        for name in ("out",):
            np.testing.assert_allclose(
                got[name], reference[name], rtol=1e-5, atol=1e-6, err_msg=backend
            )


def test_the_original_order_raises_on_torch(tmp_path) -> None:
    """The reason for the rule: with only the imports ported, PyTorch refuses the layer."""
    imports_only = tmp_path / "imports_only.py"
    imports_only.write_text(LEGACY.replace("from tensorflow import keras", "import keras"))
    got = run_module_worker(WORKER, imports_only, "torch", tmp_path)
    assert "cannot assign module before Module.__init__() call" in got.get("error", ""), got
