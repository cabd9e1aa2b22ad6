"""KM531 on the real backends: an octave-convolution block in the shape of titu1994's
keras-octconv builds ``AveragePooling2D()`` with Keras 2's default pool size. Keras 3
requires ``pool_size``, so with only the imports ported the model does not build (TypeError
on every backend); after ``kmigrate apply`` (``pool_size=(2, 2)`` written out) it predicts
what the Keras 2 original (tf_keras) does on TensorFlow, JAX and PyTorch.

Each side runs in its own subprocess: ``KERAS_BACKEND`` (and tf_keras versus Keras 3) is
chosen at import.
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
    from tensorflow.keras.layers import AveragePooling1D, AveragePooling2D, Conv2D, Input
    from tensorflow.keras.layers import Reshape, UpSampling2D, add
    from tensorflow.keras.models import Model


    def build():
        inputs = Input((8, 8, 3))
        high = Conv2D(4, 3, padding="same", use_bias=False)(inputs)
        low = Conv2D(4, 3, padding="same", use_bias=False)(AveragePooling2D()(inputs))
        merged = add([high, UpSampling2D()(low)])
        rows = Reshape((64, 4))(merged)
        return Model(inputs, AveragePooling1D(padding="same")(rows))
    """
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    try:
        spec.loader.exec_module(subject)
        model = subject.build()
    except Exception as error:
        print("REPORT" + json.dumps({"error": f"{type(error).__name__}: {error}"[:300]}))
        raise SystemExit(0)
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
    x = rng.normal(size=(2, 8, 8, 3)).astype("float32")
    print("REPORT" + json.dumps({"y": model.predict(x, verbose=0).tolist()}))
    """
)


def test_the_pooled_block_matches_keras2_on_every_backend(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert "AveragePooling2D(pool_size=(2, 2))(inputs)" in converted
    assert 'AveragePooling1D(pool_size=2, padding="same")(rows)' in converted
    reference, targets = keras2_and_converted(WORKER, LEGACY, converted, tmp_path)
    assert "error" not in reference, reference
    for backend, got in targets.items():
        np.testing.assert_allclose(got["y"], reference["y"], rtol=1e-5, atol=1e-5, err_msg=backend)


def test_without_pool_size_keras3_does_not_build(tmp_path) -> None:
    """The reason for the rule: with only the imports ported, Keras 3 raises."""
    imports_only = tmp_path / "imports_only.py"
    imports_only.write_text(LEGACY.replace("tensorflow.keras", "keras"))
    for backend in ("tensorflow", "jax", "torch"):
        got = run_module_worker(WORKER, imports_only, backend, tmp_path)
        assert got.get("error", "").startswith("TypeError"), (backend, got)
        assert "pool_size" in got["error"], (backend, got)
