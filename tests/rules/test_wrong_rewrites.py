"""Regressions for rewrites that broke working code on real repositories (issue 18)."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from kmigrate.rules.common.keras_api import keras3_path
from kmigrate.run.runner import scan_text


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def found(text: str, rule: str):
    return [f for f in scan_text(_code(text), select=[rule]) if f.rule.startswith(rule)]


# -- a module alias whose object escapes ------------------------------------------------

KERAS_APPLICATIONS_STYLE = """
import tensorflow.keras as tfkeras

backend = None


def swish(x):
    return x * backend.sigmoid(x)


def build(**kwargs):
    global backend
    backend = kwargs.get("backend", tfkeras.backend)
    return swish(tfkeras.Input((4,)))


model = build(backend=tfkeras.backend, layers=tfkeras.layers)
"""


def test_escaping_alias_is_reported_not_renamed():
    text = _code(KERAS_APPLICATIONS_STYLE)
    assert apply_to_text(text, select=["KM1"]) == text
    (finding,) = found(text, "KM102")
    assert not finding.fixable
    assert "escapes" in finding.message and "tfkeras.backend" in finding.message


def test_module_passed_to_a_local_function_is_followed():
    text = """
    import tensorflow.keras as tfkeras

    def head(x, backend=None):
        return backend.sigmoid(x)

    y = head(1.0, backend=tfkeras.backend)
    """
    (finding,) = found(text, "KM102")
    assert not finding.fixable
    assert "`backend.sigmoid` does not exist in Keras 3" in finding.message


def test_module_stored_then_used_portably_is_renamed():
    text = """
    import tensorflow as tf

    layers = tf.keras.layers
    dense = layers.Dense(4)
    """
    assert "layers = keras.layers" in apply_to_text(_code(text), select=["KM1"])


def test_module_stored_then_used_unportably_stays():
    text = """
    import tensorflow as tf

    backend = tf.keras.backend
    y = backend.sigmoid(1.0)
    """
    text = _code(text)
    assert apply_to_text(text, select=["KM1"]) == text


def test_layers_module_stored_then_used_unportably_is_reported():
    text = """
    import tensorflow as tf

    layers = tf.keras.layers
    old = layers.CuDNNLSTM(4)
    """
    # The stored module is reported where it is taken; the project index also follows the
    # alias, so the call through it gets its own finding.
    stored, called = sorted(found(text, "KM101"), key=lambda f: f.span.line)
    assert not stored.fixable and not called.fixable
    assert "`layers.CuDNNLSTM` does not exist in Keras 3" in stored.message
    assert called.symbol == "tf.keras.layers.CuDNNLSTM"


def test_class_passed_as_value_is_still_renamed():
    text = "import tensorflow.keras as tfk\nmake = [tfk.layers.Dense]\n"
    assert apply_to_text(text, select=["KM1"]) == "import keras as tfk\nmake = [tfk.layers.Dense]\n"


# -- Keras 2 re-exported modules -----------------------------------------------------------


@pytest.mark.parametrize(
    ("legacy", "target"),
    [
        ("layers.activations", "activations"),
        ("layers.activations.serialize", "activations.serialize"),
        ("layers.activations.get", "activations.get"),
        ("layers.initializers.get", "initializers.get"),
        ("layers.activations.no_such_function", None),
        ("layers.core.Dense", "layers.Dense"),
        ("utils.np_utils.to_categorical", "utils.to_categorical"),
    ],
)
def test_keras2_module_paths(legacy, target):
    assert keras3_path(legacy) == target


def test_activations_from_layers_becomes_keras_activations():
    text = """
    from keras.layers import activations

    def config(act):
        return activations.serialize(activations.get(act))
    """
    out = apply_to_text(_code(text), select=["KM1"])
    assert "layers.serialize" not in out
    # the import becomes `from keras import activations`, which the new names then use
    assert "from keras import activations\n" in out
    assert "activations.serialize(activations.get(act))" in out
    assert "keras.layers" not in out


# -- random draws need a layer-owned SeedGenerator ------------------------------------


def test_dropout_nested_in_call_of_standalone_keras2_layer_is_not_rewritten():
    text = """
    from keras import backend as K
    from keras.engine import Layer

    class Noisy(Layer):
        def call(self, x, training=None):
            def dropped():
                return K.dropout(x, 0.5)

            return K.in_train_phase(dropped, x, training=training)
    """
    (finding,) = found(text, "KM302")
    assert not finding.fixable
    assert finding.context.value == "model"
    assert "keras.random.dropout" not in apply_to_text(_code(text), select=["KM3"])


def test_draw_in_an_unrecognised_class_is_not_rewritten_unseeded():
    text = """
    from keras import backend as K

    class Helper(object):
        def noise(self, x):
            return K.random_normal((2, 2))
    """
    (finding,) = found(text, "KM302")
    assert not finding.fixable
    assert "does not recognise as a Keras layer" in finding.message


# -- KM303: host-side data generation is not model code ---------------------------------


def test_numpy_random_in_a_test_that_builds_a_model_is_not_reported():
    text = """
    import numpy as np
    from keras.layers import Input, Dense
    from keras.models import Model

    def test_layer():
        x = np.random.random((10, 4))
        a = Input(shape=(4,))
        model = Model(a, Dense(2)(a))
        model.compile("sgd", "mse")
        model.train_on_batch(x, x[:, :2])
    """
    assert found(text, "KM303") == []


def test_numpy_random_in_a_lambda_function_is_still_reported():
    text = """
    import numpy as np
    import keras

    def noisy(x):
        return x + np.random.normal(size=(4,))

    layer = keras.layers.Lambda(noisy)
    """
    (finding,) = found(text, "KM303")
    assert finding.context.value == "model"


def test_feature_checks_on_a_module_do_not_block_the_rename():
    text = """
    import tensorflow as tf

    if hasattr(tf.keras.optimizers, "legacy"):
        opt = None
    """
    out = apply_to_text(_code(text), select=["KM101"])
    assert "hasattr(keras.optimizers" in out


def test_keras3_private_modules_are_not_moved():
    assert keras3_path("src.backend") is None
    text = "import keras\nfrom keras.src import backend\nfrom keras.src.utils import tf_utils\n"
    assert apply_to_text(text, select=["KM103"]) == text
    assert found(text, "KM103") == []


def test_standalone_backend_module_passed_on_is_reported():
    text = """
    import functools
    import keras

    def inject(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            kwargs["backend"] = keras.backend
            return func(*args, **kwargs)
        return wrapper

    patched = getattr(keras.backend, "logsumexp", None)
    """
    (finding,) = found(text, "KM105")
    assert finding.span.line == 7


def test_keras_version_is_public_in_keras3():
    """`keras.__version__` exists in Keras 3 (bert4keras reads it to pick code paths):
    no "not in Keras 3" finding, and no rewrite of a line that works."""
    text = """
    import keras

    if keras.__version__[0] == "2":
        legacy = True
    """
    assert found(text, "KM103") == []
    assert apply_to_text(textwrap.dedent(text).lstrip(), select=["KM1"]) == (
        textwrap.dedent(text).lstrip()
    )
