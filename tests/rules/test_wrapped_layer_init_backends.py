"""KM530 on the real backends: a layer whose ``__init__`` a decorator wraps in
``(*args, **kwargs)`` (tensorflow/addons' layers carry typeguard 2's ``@typechecked``;
here a project's own checking decorator of the same shape) builds under Keras 2 and
raises ``IndexError`` under Keras 3 on every backend, as the finding says: Keras 3 reads
the constructor's arguments with ``inspect.getfullargspec``. With either change the
finding offers (the decorator removed, or the wrapper given the constructor's
signature), the converted layer matches the Keras 2 original on TensorFlow, JAX and
PyTorch with the same weights."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import PREDICT_WORKER, keras2_and_converted, run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import functools

    import tensorflow as tf


    def checked(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            for value in kwargs.values():
                if isinstance(value, str) and not value:
                    raise TypeError("empty string argument")
            return function(*args, **kwargs)

        return wrapper


    class Gain(tf.keras.layers.Layer):
        @checked
        def __init__(self, units=3, scale=2.0, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.scale = scale

        def build(self, input_shape):
            self.kernel = self.add_weight(
                name="kernel", shape=(int(input_shape[-1]), self.units), initializer="ones"
            )

        def call(self, x):
            return tf.tanh(tf.matmul(x, self.kernel)) * self.scale


    def build():
        inputs = tf.keras.Input((4,))
        return tf.keras.Model(inputs, Gain(units=3, scale=1.5, name="gain")(inputs))
    """
).lstrip("\n")

WORKER = PREDICT_WORKER
DECORATOR = "    @checked\n    def __init__"
SIGNATURE = "    wrapper.__signature__ = inspect.signature(function)\n    return wrapper"


def _km530(source: str) -> list[str]:
    from kmigrate.api import scan_text

    return [f["message"] for f in scan_text(source) if f["rule"] == "KM530"]


def test_the_finding_names_the_decorator_and_both_ways_out() -> None:
    (message,) = _km530(LEGACY)
    assert "`@checked` on `Gain.__init__`" in message and "IndexError" in message
    assert "wrapper.__signature__ = inspect.signature(function)" in message
    assert _km530(LEGACY.replace(DECORATOR, "    def __init__")) == []


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_wrapped_init_raises_under_keras3(tmp_path, backend: str) -> None:
    converted = tmp_path / "converted.py"
    converted.write_text(apply_to_text(LEGACY))
    got = run_module_worker(WORKER, converted, backend, tmp_path)
    assert got.get("error", "").startswith("IndexError"), got


@pytest.mark.parametrize("change", ["decorator removed", "signature given"])
def test_either_change_the_finding_offers_matches_keras2(tmp_path, change: str) -> None:
    if change == "decorator removed":
        fixed = LEGACY.replace(DECORATOR, "    def __init__")
    else:
        fixed = "import inspect\n" + LEGACY.replace("    return wrapper", SIGNATURE)
        assert SIGNATURE in fixed
    assert _km530(fixed) == []
    reference, targets = keras2_and_converted(WORKER, LEGACY, apply_to_text(fixed), tmp_path)
    for backend, got in targets.items():
        np.testing.assert_allclose(
            got["out"], reference["out"], rtol=1e-5, atol=1e-6, err_msg=backend
        )
