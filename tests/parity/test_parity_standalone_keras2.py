"""Parity against an original written for standalone Keras 2 (`import keras`, `from keras
import backend as K`): keras-contrib, keras-bert and bert4keras are written that way.
Keras 3 cannot run such an original (its `keras.backend` has no `mean` or `int_shape`),
so its reference runs on tf_keras with `keras` standing for it (parity/keras2_alias.py).
The converted code comes from `kmigrate apply`; a wrong conversion must FAIL."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from kmigrate.api import apply_to_text
from kmigrate.parity.runner import ParityOptions, run_parity
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

ORIGINAL = textwrap.dedent(
    """
    from keras import backend as K
    from keras.layers import Dense, Input, Layer
    from keras.models import Model


    class Centered(Layer):
        def call(self, inputs):
            mean = K.mean(inputs, axis=-1, keepdims=True)
            return (inputs - mean) * K.int_shape(inputs)[-1]


    def build_model():
        inputs = Input((6,))
        return Model(inputs, Centered()(Dense(4)(inputs)))
    """
).lstrip("\n")


@pytest.fixture(scope="module")
def converted() -> str:
    text = apply_to_text(ORIGINAL)
    assert "K." not in text and "ops.mean" in text
    return text


def _parity(tmp_path, text: str):
    path = tmp_path / "models.py"
    path.write_text(text)
    return run_parity(
        str(path),
        reference_source=ORIGINAL,
        options=ParityOptions(backends=["tensorflow", "jax", "torch"]),
    )


def test_the_converted_layer_matches_its_standalone_keras2_original(tmp_path, converted):
    report = _parity(tmp_path, converted)
    assert report.passed, json.dumps(report.to_dict(), indent=1)[:3000]
    assert report.reference.keras.endswith("(tf_keras)")
    assert "Keras 3 could not run the original" in report.reference_reason
    assert [r.backend for r in report.runs] == ["tensorflow", "jax", "torch"]


def test_a_wrong_conversion_of_it_fails(tmp_path, converted):
    broken = converted.replace("axis=-1", "axis=0")
    assert broken != converted
    report = _parity(tmp_path, broken)
    assert not report.passed


FROZEN = textwrap.dedent(
    """
    from keras import backend as K
    from keras.layers import Input, Layer
    from keras.models import Model


    class Scaled(Layer):
        def __init__(self, start=2.0, **kwargs):
            super().__init__(**kwargs)
            self.start = start
            self.trainable = False

        def build(self, input_shape):
            self.factor = K.variable(self.start, name="factor")
            super().build(input_shape)

        def call(self, x):
            return x * K.sigmoid(self.factor * x)


    def build_model():
        inputs = Input((5,))
        return Model(inputs, Scaled()(inputs))
    """
).lstrip("\n")


def test_a_frozen_variable_stays_frozen_and_parity_says_so_when_not(tmp_path):
    """keras-contrib's Swish: a K.variable in a layer frozen in __init__. The rewrite keeps
    it frozen; dropping that line trains it, and parity names the difference."""
    converted = apply_to_text(FROZEN)
    assert "self.factor.trainable = self.trainable" in converted
    path = tmp_path / "models.py"
    options = ParityOptions(backends=["tensorflow", "jax", "torch"])
    path.write_text(converted)
    report = run_parity(str(path), reference_source=FROZEN, options=options)
    assert report.passed, json.dumps(report.to_dict(), indent=1)[:3000]
    path.write_text(converted.replace("self.factor.trainable = self.trainable", "pass"))
    report = run_parity(str(path), reference_source=FROZEN, options=options)
    assert not report.passed
    assert "the original trained nothing" in json.dumps(report.to_dict())


def test_the_alias_names_the_same_modules_and_keeps_their_own_specs(tmp_path):
    """`keras.X` is `tf_keras.X` itself (classes shared), `keras.__name__` is "keras"
    (keras-contrib checks it), the tf_keras modules keep their own `__spec__`, and a Keras
    2.x module tf_keras has nothing for fails with an import error that says so."""
    code = textwrap.dedent(
        """
        import json
        from kmigrate.parity import keras2_alias
        assert keras2_alias.install()
        import keras
        from keras import backend as K
        from keras.layers import Layer
        import tf_keras
        try:
            import keras.backend.theano_backend
            missing = None
        except ImportError as error:
            missing = str(error)
        print("REPORT" + json.dumps({
            "name": keras.__name__,
            "same": K is tf_keras.backend and Layer is tf_keras.layers.Layer,
            "spec": tf_keras.backend.__spec__.name,
            "missing": missing,
        }))
        """
    )
    found = run_on_backend([sys.executable, "-c", code], "tensorflow", tmp_path, legacy_keras=True)
    assert found == {
        "name": "keras",
        "same": True,
        "spec": "tf_keras.backend",
        "missing": "keras.backend.theano_backend is a Keras 2.x module that tf_keras does not "
        "provide (the Theano backend; tf_keras runs on TensorFlow only); the original cannot "
        "run on Keras 2 as it is written",
    }
