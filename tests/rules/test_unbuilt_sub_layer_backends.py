"""KM532 on the real backends, on a layer with bert4keras's shape (MultiHeadAttention,
GatedAttentionUnit): sub-layers made in ``build``, not in the order ``call`` uses them,
applied to an element of the inputs, to a name unpacked from them and to intermediate
values; one made and never called; a weight of the layer's own; its own
``compute_output_shape``.

After `kmigrate apply` (KM532's fix: ``compute_output_spec`` tracing ``call``) the model
has, when it is made, tf_keras's weights in tf_keras's order on tensorflow, jax and torch,
the weights tf_keras saved load, and it predicts what tf_keras predicts. Converted
without the fix, it has only the layer's own weight and tf_keras's weights do not load."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kmigrate.api import apply_to_text
from kmigrate.rules.registry import all_rules
from tests.backend_run import migrated_off_tensorflow, run_on_backend

pytestmark = pytest.mark.backends

LAYER = """
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import backend as K


class Attend(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        super().build(input_shape)
        self.out = keras.layers.Dense(2)  # on an intermediate value: made first, called last
        self.scale = self.add_weight(name="scale", shape=(1,), initializer="ones")
        self.query = keras.layers.Dense(self.units)  # on inputs[0]
        self.key = keras.layers.Dense(self.units, use_bias=False)  # on a name unpacked
        self.norm = keras.layers.LayerNormalization()  # on an intermediate value
        self.spare = keras.layers.Dense(3)  # never called: Keras 2 never builds it

    def call(self, inputs, mask=None):
        query = self.query(inputs[0])
        _, memory = inputs
        key = self.key(memory)
        scores = K.softmax(tf.einsum("bid,bjd->bij", query, key) * self.scale)
        return self.out(self.norm(tf.einsum("bij,bjd->bid", scores, key)))

    def compute_output_shape(self, input_shape):
        return input_shape[0][:-1] + (2,)
"""

# The same script in both folders; `keras` is whatever layer.py binds (tf_keras for the
# Keras 2 original). tf_keras saves its (seeded) weights to argv[1]; Keras 3 loads them.
DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import Attend, keras

query, memory = keras.Input((4, 3)), keras.Input((5, 7))
attended = Attend(6, name="attend")([query, memory])
model = keras.Model([query, memory], keras.layers.Dense(1, name="head")(attended))
out = {"keras": keras.layers.Layer.__module__.split(".")[0]}
out["made"] = [[list(w.shape) for w in layer.weights] for layer in model.layers]
try:
    if out["keras"] == "tf_keras":
        rng = np.random.default_rng(3)
        model.set_weights([rng.standard_normal(w.shape) for w in model.get_weights()])
        model.save_weights(sys.argv[1])
    else:
        model.load_weights(sys.argv[1])
except Exception as error:
    out["error"] = f"{type(error).__name__}: {error}"[:300]
    print("REPORT" + json.dumps(out))
    raise SystemExit(0)
rng = np.random.default_rng(5)
x = [rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 7))]
out["predict"] = model.predict([a.astype("float32") for a in x], verbose=0).tolist()
print("REPORT" + json.dumps(out))
"""


def _run(folder: Path, backend: str, weights: Path, legacy_keras: bool = False) -> dict:
    argv = [sys.executable, "driver.py", str(weights)]
    return run_on_backend(argv, backend, folder, legacy_keras=legacy_keras, timeout=300)


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    return migrated_off_tensorflow(
        tmp_path_factory, LAYER, DRIVER, "keras.Operation.compute_output_spec(self,"
    )


@pytest.fixture(scope="module")
def reference(folders, tmp_path_factory) -> tuple[dict, Path]:
    weights = tmp_path_factory.mktemp("saved") / "reference.h5"
    found = _run(folders[0], "tensorflow", weights, legacy_keras=True)
    assert found["keras"] == "tf_keras" and "error" not in found, found
    # own weight first, then each sub-layer call built, in the order build assigned them
    # (`out` before `query`), `spare` without weights: Keras 2's order, not call's
    attend = [[1], [6, 2], [2], [3, 6], [6], [7, 6], [6], [6]]
    assert found["made"] == [[], [], attend, [[2, 1], [1]]], found["made"]
    return found, weights


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_fixed_layer_has_keras2_weights_in_order_and_loads_them(
    folders, reference, backend
) -> None:
    want, weights = reference
    got = _run(folders[1], backend, weights)
    assert got["keras"] == "keras" and "error" not in got, got
    assert got["made"] == want["made"]
    np.testing.assert_allclose(got["predict"], want["predict"], rtol=1e-5, atol=1e-6)


def test_without_the_fix_the_sub_layers_have_no_weights_and_keras2_weights_do_not_load(
    reference, tmp_path: Path
) -> None:
    want, weights = reference
    others = [rule.id for rule in all_rules() if rule.id != "KM532"]
    (tmp_path / "layer.py").write_text(apply_to_text(textwrap.dedent(LAYER), select=others))
    (tmp_path / "driver.py").write_text(DRIVER)
    got = _run(tmp_path, "tensorflow", weights)
    assert got["made"][2] == [[1]], got  # only the layer's own weight
    assert "error" in got, got
