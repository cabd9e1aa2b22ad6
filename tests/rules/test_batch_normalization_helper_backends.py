"""``tf.nn.batch_normalization`` -> the project helper ``batch_normalization``
(``rules/data/keras2_compat.py``), proven against TensorFlow on tensorflow, jax and torch.

The helper alone over the shapes real layers give it (moments kept with ``keepdims``, a
group axis of their own as in tensorflow/addons' GroupNormalization, vectors along the
last axis, scalars), ``offset`` / ``scale`` given or None, float32 / float64 / float16
inputs with float32 statistics: eagerly, and under ``jax.jit`` on jax. Then a layer
converted by ``kmigrate apply`` (which writes ``_keras2_compat.py`` into the package):
the converted model predicts (a graph with an unknown batch on tensorflow, jit on jax),
calls eagerly and takes a training step as the Keras 2 original does on tf_keras.
"""

from __future__ import annotations

import numpy as np
import pytest

from kmigrate.rules.common.compat_helpers import HELPER_FILE
from tests.backend_run import driver_reports, project_runs_on_backends

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

# (x shape, statistics shape, offset given, scale given, x dtype)
CASES = [
    ((2, 4, 2, 3), (2, 1, 2, 1), True, True, "float32"),  # group norm: keepdims moments
    ((2, 5, 3), (3,), True, True, "float32"),  # vectors along the last axis
    ((2, 5, 3), (1, 1, 3), False, True, "float32"),
    ((2, 5, 3), (1, 5, 1), True, False, "float32"),
    ((2, 5, 3), (1, 1, 1), False, False, "float32"),
    ((3, 4), (), True, True, "float32"),  # scalar statistics
    ((2, 5, 3), (3,), True, True, "float64"),
    ((2, 5, 3), (3,), True, True, "float16"),  # statistics stay float32: cast to x's
    ((1, 1), (1,), True, True, "float32"),  # a batch of one
]
EPSILON = 1e-3

HELPER_DRIVER = f"""
import json, os, sys
import numpy as np
CASES = {CASES!r}
rng = np.random.default_rng(7)
out = {{}}
if os.environ.get("TF_USE_LEGACY_KERAS") == "1":
    import tensorflow as tf
    normalize = tf.nn.batch_normalization
    as_tensor = tf.convert_to_tensor
    jit = None
else:
    sys.path.insert(0, {str(HELPER_FILE.parent)!r})
    import keras
    from keras import ops
    from keras2_compat import batch_normalization as normalize
    as_tensor = ops.convert_to_tensor
    jit = None
    if keras.backend.backend() == "jax":
        import jax
        jit = jax.jit(normalize, static_argnames=("variance_epsilon",))
for index, (x_shape, stats, with_offset, with_scale, dtype) in enumerate(CASES):
    x = rng.standard_normal(x_shape).astype(dtype)
    mean = rng.standard_normal(stats).astype("float32")
    variance = np.abs(rng.standard_normal(stats)).astype("float32")
    offset = rng.standard_normal(stats).astype("float32") if with_offset else None
    scale = rng.standard_normal(stats).astype("float32") if with_scale else None
    args = [as_tensor(v) if v is not None else None for v in (x, mean, variance, offset, scale)]
    result = normalize(*args, variance_epsilon={EPSILON})
    out[f"case{{index}}"] = {{
        "dtype": str(np.asarray(result).dtype),
        "values": np.asarray(result, dtype="float64").tolist(),
    }}
    if jit is not None:
        traced = jit(*args, variance_epsilon={EPSILON})
        out[f"case{{index}}_jit"] = {{
            "dtype": str(np.asarray(traced).dtype),
            "values": np.asarray(traced, dtype="float64").tolist(),
        }}
print("REPORT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def helper_runs(tmp_path_factory):
    return driver_reports(tmp_path_factory.mktemp("batch_normalization"), HELPER_DRIVER, BACKENDS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_helper_normalizes_as_tensorflow_does(helper_runs, backend) -> None:
    reference, runs = helper_runs["reference"], helper_runs[backend]
    for key, got in runs.items():
        expected = reference[key.removesuffix("_jit")]
        dtype = expected["dtype"]
        if backend == "jax" and dtype == "float64":  # jax computes in float32 without x64
            dtype = "float32"
        assert got["dtype"] == dtype, (key, got["dtype"], expected["dtype"])
        tolerance = 1e-3 if expected["dtype"] == "float16" else 1e-6
        np.testing.assert_allclose(
            got["values"], expected["values"], rtol=tolerance, atol=tolerance, err_msg=key
        )
    assert len(runs) >= len(CASES), runs.keys()


# -- a group-normalization layer, converted by `kmigrate apply` ----------------------------

LAYER_MODULE = '''
import tensorflow as tf


class GroupNorm(tf.keras.layers.Layer):
    """Two groups of three channels, normalized as tensorflow/addons does."""

    def build(self, input_shape):
        self.gamma = self.add_weight(name="gamma", shape=(1, 1, 2, 3), initializer="ones")
        self.beta = self.add_weight(name="beta", shape=(1, 1, 2, 3), initializer="zeros")

    def call(self, inputs):
        x = tf.reshape(inputs, (-1, 4, 2, 3))
        mean, variance = tf.nn.moments(x, [1, 3], keepdims=True)
        x = tf.nn.batch_normalization(
            x, mean=mean, variance=variance, scale=self.gamma, offset=self.beta,
            variance_epsilon=1e-3,
        )
        return tf.reshape(x, (-1, 4, 6))
'''

DRIVER = """
import json, os
import numpy as np
from tensorflow import keras
if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
    import keras
from model.layers import GroupNorm

rng = np.random.default_rng(0)
x = rng.standard_normal((3, 4, 6)).astype("float32")
y = rng.standard_normal((3, 4, 6)).astype("float32")
inputs = keras.Input(shape=(4, 6))
layer = GroupNorm()
model = keras.Model(inputs, layer(inputs))
model.set_weights([
    rng.standard_normal((1, 1, 2, 3)).astype("float32"),
    rng.standard_normal((1, 1, 2, 3)).astype("float32"),
])
out = {
    "predict": np.asarray(model.predict(x, verbose=0)).tolist(),
    # a torch tensor that requires grad has no plain numpy()
    "call": np.asarray(getattr(model(x), "detach", lambda: model(x))()).tolist(),
}
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
model.train_on_batch(x, y)
out["trained"] = [np.asarray(w).tolist() for w in model.get_weights()]
print("REPORT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def project_runs(tmp_path_factory):
    files = {"model/__init__.py": "", "model/layers.py": LAYER_MODULE, "driver.py": DRIVER}
    return project_runs_on_backends(tmp_path_factory, files, BACKENDS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_converted_group_norm_computes_what_keras2_computes(project_runs, backend) -> None:
    written, runs = project_runs
    layers = next(text for path, text in written.items() if path.endswith("layers.py"))
    assert "tf." not in layers and "batch_normalization(" in layers, layers
    assert any(path.endswith("_keras2_compat.py") for path in written), written
    for check in ("predict", "call"):
        np.testing.assert_allclose(
            runs[backend][check], runs["reference"][check], rtol=1e-5, atol=1e-6, err_msg=check
        )
    for got, expected in zip(runs[backend]["trained"], runs["reference"]["trained"]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg="trained")
