"""KM530 on the real backends: a layer whose ``__init__`` a decorator wraps in
``(*args, **kwargs)`` (tensorflow/addons' layers carry typeguard 2's ``@typechecked``;
here a project's own checking decorator of the same shape: ``functools.wraps`` around a
``(*args, **kwargs)`` wrapper that checks the arguments) builds under Keras 2 and raises
``IndexError`` under Keras 3 on every backend: Keras 3 reads the constructor's arguments
with ``inspect.getfullargspec``. Apply's ``__init__.__signature__ =
inspect.signature(__init__)`` makes the converted layer match the Keras 2 original on
TensorFlow, JAX and PyTorch with the same weights, with the checks still running. A
wrapper without ``functools.wraps`` stays reported, and the change its finding offers
matches too."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import (
    assert_fails_on_every_backend,
    assert_matches_keras2,
    build_and_predict_worker,
)

pytestmark = pytest.mark.backends

# ``build()`` asks the checking decorator first: a scale of 1.5 when ``Gain(scale="")``
# is refused, 0.0 when nothing checked it, so a conversion that dropped the checks
# predicts zeros where Keras 2 does not.
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
        try:
            Gain(scale="")
            scale = 0.0
        except TypeError:
            scale = 1.5
        inputs = tf.keras.Input((4,))
        return tf.keras.Model(inputs, Gain(units=3, scale=scale, name="gain")(inputs))
    """
).lstrip("\n")

WORKER = build_and_predict_worker((3, 4))
FIX = "    __init__.__signature__ = inspect.signature(__init__)\n"
# The same decorator without ``functools.wraps``: nothing to copy a signature from.
BARE = LEGACY.replace("    @functools.wraps(function)\n", "")
assert BARE != LEGACY
SIGNATURE = "    wrapper.__signature__ = inspect.signature(function)\n    return wrapper"


def _km530(source: str) -> list[dict]:
    return [f for f in scan_text(source) if f["rule"] == "KM530"]


def test_apply_gives_the_signature_and_the_checks_stay(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert FIX in converted and "@checked" in converted
    assert _km530(converted) == []
    assert_matches_keras2(WORKER, LEGACY, converted, tmp_path)


def test_without_the_signature_the_layer_raises_under_keras3(tmp_path) -> None:
    converted = apply_to_text(LEGACY)
    assert FIX in converted
    withheld = converted.replace(FIX, "")
    assert_fails_on_every_backend(WORKER, withheld, "IndexError", "list index", tmp_path)


def test_a_wrapper_without_wraps_stays_reported_and_raises(tmp_path) -> None:
    (finding,) = _km530(BARE)
    assert not finding["fixable"]
    assert "wrapper.__signature__ = inspect.signature(function)" in finding["message"]
    converted = apply_to_text(BARE)
    assert FIX not in converted
    assert_fails_on_every_backend(WORKER, converted, "IndexError", "list index", tmp_path)


def test_the_change_the_bare_finding_offers_matches_keras2(tmp_path) -> None:
    fixed = "import inspect\n" + BARE.replace("    return wrapper", SIGNATURE)
    assert SIGNATURE in fixed and _km530(fixed) == []
    assert_matches_keras2(WORKER, BARE, apply_to_text(fixed), tmp_path)
