"""The run-time-length tf.TensorArray loop that `kmigrate apply` turns into
keras.ops.scan (rules/common/catalog/tensor_array_scan.py) computes what Keras 2 computed:
an RNN-like layer with two states (one read by the next step, one only after the loop) and
weights, over `tf.range(tf.shape(x)[1])`, in a functional model whose batch and time
dimensions are unknown (a graph on tensorflow, jit on jax: `predict` on two lengths) and
called eagerly; tf_keras is the reference, the converted module runs on tensorflow, jax and
torch. The layer is the fixture repository tensor_array_scan's."""

from __future__ import annotations

import pytest

from tests.backend_run import assert_same_report, layer_runs
from tests.repo_fixtures import REPOS

pytestmark = pytest.mark.backends

ORIGINAL = (REPOS / "tensor_array_scan" / "recurrent.py").read_text()

DRIVER = """
import json
import numpy as np
from layer import Recurrent, keras

inputs = keras.Input((None, 3))
layer = Recurrent()
model = keras.Model(inputs, layer(inputs))
rng = np.random.default_rng(7)
layer.set_weights([rng.normal(size=w.shape).astype("float32") for w in layer.get_weights()])
batches = [rng.normal(size=s).astype("float32") for s in ((2, 5, 3), (3, 7, 3))]
eager = layer(batches[0])  # called as it is, outside a model (a torch tensor: detached)
report = {
    "predict_each": [np.asarray(model.predict(x, verbose=0)).tolist() for x in batches],
    "eager": np.asarray(getattr(eager, "detach", lambda: eager)()).tolist(),
}
print("REPORT" + json.dumps(report))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[str, dict[str, dict]]:
    return layer_runs(tmp_path_factory, ORIGINAL, DRIVER)


def test_the_loop_became_a_scan(runs) -> None:
    text, _ = runs
    recurrent, doubled = text.split("class Recurrent")[1].split("class Doubled")  # it stays
    assert "TensorArray" not in recurrent and "tf." not in recurrent, text
    assert "tf.TensorArray" in doubled, text
    assert "h, outputs = keras.ops.scan(step, h, keras.ops.arange(steps))" not in text
    assert "def step(carry, t):\n            h, total = carry\n" in text, text
    assert "            return (h, total), (outputs, total)\n" in text, text
    assert (
        "        (h, total), outputs = keras.ops.scan(step, (h, total), keras.ops.arange(steps))\n"
        "        outputs = outputs[0]\n"
    ) in text, text


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_scan_matches_keras2(runs, backend: str) -> None:
    _, found = runs
    assert_same_report(
        found[backend], found["reference"], ("predict_each", "eager"), rtol=1e-5, atol=1e-6
    )
