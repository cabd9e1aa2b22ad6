"""KM208 on the real backends: a library's backend package in the shape of keras-contrib's
``keras_contrib.backend`` star-imports its TensorFlow module only when ``K.backend() ==
'tensorflow'``. With that chain left, Keras 3 on JAX or PyTorch takes no branch and the
layer's ``NB.scale`` is missing (AttributeError); after ``kmigrate apply`` (the chain
becomes the TensorFlow branch's import, its module rewritten to keras.ops) the model
predicts what the Keras 2 original (tf_keras) does on TensorFlow, JAX and PyTorch.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from tests.backend_run import project_runs_on_backends, run_on_backend

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

DISPATCH = textwrap.dedent(
    """
    from tensorflow.keras import backend as K

    # one module of backend functions per Keras 2 backend
    if K.backend() == "theano":
        from .theano_backend import *
    elif K.backend() == "tensorflow":
        from .tensorflow_backend import *
    """
).lstrip("\n")

TF_BACKEND = textwrap.dedent(
    """
    import tensorflow as tf
    from tensorflow.keras import backend as K


    def scale(x, factor):
        return tf.abs(x) * K.cast(factor, K.floatx())
    """
).lstrip("\n")

LAYER = textwrap.dedent(
    """
    from tensorflow import keras

    from nets import backend as NB


    class Scaled(keras.layers.Layer):
        def call(self, x):
            return NB.scale(x, 3)
    """
).lstrip("\n")

DRIVER = textwrap.dedent(
    """
    import json, os
    import numpy as np
    from tensorflow import keras
    if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
        import keras
    from nets.layers import Scaled

    try:
        inputs = keras.Input(shape=(4,))
        model = keras.Model(inputs, Scaled()(keras.layers.Dense(3)(inputs)))
        rng = np.random.default_rng(0)
        model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
        x = rng.normal(size=(2, 4)).astype("float32")
        report = {"y": np.asarray(model.predict(x, verbose=0)).tolist()}
    except AttributeError as error:
        report = {"error": str(error)}
    print("REPORT" + json.dumps(report))
    """
).lstrip("\n")

FILES = {
    "nets/__init__.py": "",
    "nets/backend/__init__.py": DISPATCH,
    "nets/backend/tensorflow_backend.py": TF_BACKEND,
    "nets/backend/theano_backend.py": "import theano\n",
    "nets/layers.py": LAYER,
    "driver.py": DRIVER,
}


@pytest.fixture(scope="module")
def project_runs(tmp_path_factory):
    """What apply wrote, and the prediction of the original (tf_keras) and of the copy."""
    return project_runs_on_backends(tmp_path_factory, FILES, BACKENDS)


def test_apply_keeps_the_tensorflow_branch_only(project_runs) -> None:
    written, _ = project_runs
    dispatch = next(text for path, text in written.items() if path.endswith("backend/__init__.py"))
    comment = "# one module of backend functions per Keras 2 backend\n"
    assert dispatch == comment + "from .tensorflow_backend import *\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_converted_project_predicts_what_keras2_predicts(project_runs, backend) -> None:
    _, runs = project_runs
    assert "y" in runs[backend], runs[backend]
    np.testing.assert_allclose(runs[backend]["y"], runs["reference"]["y"], rtol=1e-6)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_with_the_chain_left_keras3_takes_no_branch(tmp_path, backend) -> None:
    """The reason for the rule: only the imports ported, the package is empty on JAX and
    PyTorch."""
    for relative, text in FILES.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            text.replace("from tensorflow.keras import backend", "from keras import backend")
        )
    got = run_on_backend([sys.executable, "driver.py"], backend, tmp_path)
    assert "has no attribute 'scale'" in got.get("error", ""), got
