"""The converted ``model_default`` fixture model computes the Keras 2 original's numbers
on the tensorflow, jax and torch backends.

Its functional model runs helpers on ``keras.Input`` tensors while it is built: an
activation reached through a registry dict (``K.minimum``/``K.maximum``), a helper
object's methods (``K.clip``, ``K.sum``), an activation registered as a custom object
by name (``K.tanh``/``K.pow``), a layer whose ``build`` reads ``tf.TensorShape``. Before
"model code unless proven otherwise" those became ``tf.*`` calls and the converted model
failed with "A KerasTensor cannot be used as input to a TensorFlow function" even on the
TensorFlow backend. The original runs under tf_keras (Keras 2), the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend_run import run_on_backend
from tests.repo_fixtures import apply_repo, copy_repo

pytestmark = pytest.mark.backends

DRIVER = """
import json
import numpy as np
from netlib.build import build

model = build()
model.set_weights(
    [np.linspace(-0.9, 0.9, w.size, dtype="float32").reshape(w.shape) for w in model.get_weights()]
)
x = np.linspace(-4.0, 4.0, 18, dtype="float32").reshape(3, 6)
print("REPORT" + json.dumps(np.asarray(model.predict(x, verbose=0)).tolist()))
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory):
    original = copy_repo("model_default", tmp_path_factory.mktemp("original"))
    converted = copy_repo("model_default", tmp_path_factory.mktemp("converted"))
    assert apply_repo(converted) > 0
    for root in (original, converted):
        (root / "driver.py").write_text(DRIVER)
    return original, converted


@pytest.fixture(scope="module")
def reference(folders) -> np.ndarray:
    import sys

    got = run_on_backend([sys.executable, "driver.py"], "tensorflow", folders[0], legacy_keras=True)
    return np.asarray(got, dtype="float32")


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_converted_model_matches_the_keras2_original(folders, reference, backend) -> None:
    import sys

    got = run_on_backend([sys.executable, "driver.py"], backend, folders[1])
    assert reference.shape == (3, 5) and np.abs(reference).max() > 0
    np.testing.assert_allclose(np.asarray(got, dtype="float32"), reference, rtol=1e-5, atol=1e-6)
