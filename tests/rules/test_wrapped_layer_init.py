"""KM530 without a backend: which decorated constructors it reports. A layer or model
whose ``__init__`` a ``(*args, **kwargs)`` wrapper hides (typeguard 2's ``@typechecked``,
a decorator of the module returning such a wrapper); not a loss or metric (Keras 3 does
not read their signature), not a wrapper that keeps a named first parameter or sets
``__signature__``, not an unknown decorator from elsewhere (it cannot be told)."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import scan_text

LAYER = textwrap.dedent(
    """
    import functools
    import tensorflow as tf
    from typeguard import typechecked
    from elsewhere import logged


    def plain(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            return function(*args, **kwargs)

        return wrapper


    def keeps_self(function):
        def wrapper(self, *args, **kwargs):
            return function(self, *args, **kwargs)

        return wrapper


    class Subject({base}):
        @{decorator}
        def __init__(self, size: int = 3, **kwargs):
            super().__init__(**kwargs)
            self.size = size
    """
)


def _flagged(base: str, decorator: str) -> bool:
    text = LAYER.format(base=base, decorator=decorator)
    return any(f["rule"] == "KM530" for f in scan_text(text))


@pytest.mark.parametrize(
    "base", ["tf.keras.layers.Layer", "tf.keras.Model", "tf.keras.layers.Wrapper"]
)
@pytest.mark.parametrize("decorator", ["typechecked", "plain"])
def test_a_hidden_layer_signature_is_reported(base: str, decorator: str) -> None:
    assert _flagged(base, decorator)


@pytest.mark.parametrize("base", ["tf.keras.losses.Loss", "tf.keras.metrics.Metric"])
def test_losses_and_metrics_are_not_operations(base: str) -> None:
    assert not _flagged(base, "typechecked")


@pytest.mark.parametrize("decorator", ["keeps_self", "logged", "functools.lru_cache"])
def test_other_decorators_are_not_reported(decorator: str) -> None:
    assert not _flagged("tf.keras.layers.Layer", decorator)
