"""``tf.broadcast_dynamic_shape`` -> the project helper ``broadcast_dynamic_shape``
(``rules/data/keras2_compat.py``), proven against TensorFlow on tensorflow, jax and torch.

The helper alone over shape pairs (ranks that differ, dimensions of one and of zero, a
scalar shape), given as tuples and as 1-D int tensors; then bert4keras' ``where`` (the
broadcast of three shapes, the second broadcast reading the first, the result passed to
``tf.broadcast_to``) in a layer converted by ``kmigrate apply``, on tensors and on a
Python number (bert4keras' GlobalPointer masks with ``where(mask, x, -inf)``): the converted model
predicts (a graph with an unknown batch on tensorflow, jit on jax) and calls eagerly
what the Keras 2 original computes on tf_keras.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text, scan_text
from kmigrate.rules.common.compat_helpers import HELPER_FILE
from tests.backend_run import driver_reports, project_runs_on_backends

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

PAIRS = [
    ((2, 3), (3,)),
    ((4, 1, 3), (5, 1)),
    ((1,), (2, 0)),
    ((2, 1, 4), (2, 3, 1)),
    ((), (3, 2)),
    ((1, 1), (1, 1)),
    ((0, 1), (1, 7)),
]

HELPER_DRIVER = f"""
import json, os, sys
import numpy as np
PAIRS = {PAIRS!r}
if os.environ.get("TF_USE_LEGACY_KERAS") == "1":
    import tensorflow as tf
    shapes = [tf.broadcast_dynamic_shape(a, b).numpy().tolist() for a, b in PAIRS]
    out = {{"tuples": shapes, "tensors": shapes, "incompatible": "raises"}}
else:
    sys.path.insert(0, {str(HELPER_FILE.parent)!r})
    from keras import ops
    from keras2_compat import broadcast_dynamic_shape as broadcast
    as_tensor = lambda s: ops.convert_to_tensor(np.asarray(s, dtype="int32"))
    out = {{
        "tuples": [[int(d) for d in broadcast(a, b)] for a, b in PAIRS],
        "tensors": [[int(d) for d in broadcast(as_tensor(a), as_tensor(b))] for a, b in PAIRS],
    }}
    try:
        broadcast((2, 3), (4, 3))
        out["incompatible"] = "returned"
    except ValueError:
        out["incompatible"] = "raises"
print("REPORT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def helper_runs(tmp_path_factory):
    return driver_reports(tmp_path_factory.mktemp("broadcast"), HELPER_DRIVER, BACKENDS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_helper_broadcasts_shapes_as_tensorflow_does(helper_runs, backend) -> None:
    assert helper_runs[backend] == helper_runs["reference"], (backend, helper_runs)


# -- bert4keras' `where`, converted by `kmigrate apply` ------------------------------------

BACKEND_MODULE = '''
import tensorflow as tf
from tensorflow.keras import backend as K


def where(cond, x, y):
    """tf.where with broadcasting (bert4keras.backend.where)."""
    shape = tf.broadcast_dynamic_shape(K.shape(x), K.shape(y))
    shape = tf.broadcast_dynamic_shape(K.shape(cond), shape)
    x = tf.broadcast_to(x, shape)
    y = tf.broadcast_to(y, shape)
    cond = tf.broadcast_to(cond, shape)
    return tf.where(cond, x, y)


class Masked(tf.keras.layers.Layer):
    def call(self, inputs):
        scores, keep = inputs
        return where(keep > 0, scores, tf.zeros_like(scores[:1, :1]) - 1.0)


class MaskedNumber(tf.keras.layers.Layer):
    """bert4keras' GlobalPointer: where(mask, x, value) with a Python number."""

    def call(self, inputs):
        scores, keep = inputs
        return where(keep > 0, scores, -1e4) + where(keep > 0, 1.0, scores)
'''

DRIVER = """
import json, os
import numpy as np
from tensorflow import keras
if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
    import keras
from model.backend import Masked, MaskedNumber

rng = np.random.default_rng(0)
scores = rng.standard_normal((3, 4, 5)).astype("float32")
keep = rng.standard_normal((3, 1, 5)).astype("float32")
inputs = [keras.Input(shape=(4, 5)), keras.Input(shape=(1, 5))]
out = {}
for name, layer in (("", Masked), ("number_", MaskedNumber)):
    model = keras.Model(inputs, layer()(inputs))
    out[name + "predict"] = np.asarray(model.predict([scores, keep], verbose=0)).tolist()
    out[name + "call"] = np.asarray(model([scores, keep])).tolist()
print("REPORT" + json.dumps(out))
"""


def test_the_broadcasts_and_the_shapes_they_read_are_rewritten() -> None:
    converted = apply_to_text(textwrap.dedent(BACKEND_MODULE))
    # where's arguments may be Python numbers (where(mask, x, -1e4)): shape_of converts them
    assert "shape = broadcast_dynamic_shape(shape_of(x), shape_of(y))" in converted
    assert "shape = broadcast_dynamic_shape(shape_of(cond), shape)" in converted
    assert "import tensorflow" not in converted
    # a broadcast whose result is used as a tensor stays, with what to write instead
    used_as_tensor = textwrap.dedent(
        """
        import tensorflow as tf
        from tensorflow import keras


        class Size(keras.layers.Layer):
            def call(self, x, y):
                shape = tf.broadcast_dynamic_shape(tf.shape(x), tf.shape(y))
                return x * tf.cast(shape * 2, "float32")[0]
        """
    )
    (finding,) = [
        f
        for f in scan_text(used_as_tensor)
        if f["rule"] == "KM202" and "broadcast_dynamic_shape" in f["message"]
    ]
    assert finding["fixable"] is False and "tuple" in finding["message"], finding


@pytest.fixture(scope="module")
def project_runs(tmp_path_factory):
    files = {"model/__init__.py": "", "model/backend.py": BACKEND_MODULE, "driver.py": DRIVER}
    return project_runs_on_backends(tmp_path_factory, files, BACKENDS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_converted_where_computes_what_keras2_computes(project_runs, backend) -> None:
    written, runs = project_runs
    assert any(path.endswith("_keras2_compat.py") for path in written), written
    for check in ("predict", "call", "number_predict", "number_call"):
        np.testing.assert_allclose(
            runs[backend][check], runs["reference"][check], rtol=1e-6, err_msg=check
        )
