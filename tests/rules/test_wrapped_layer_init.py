"""KM530 without a backend: which decorated constructors it reports. A layer or model
whose ``__init__`` a ``(*args, **kwargs)`` wrapper hides (typeguard 2's ``@typechecked``,
a decorator of the module returning such a wrapper); not a loss or metric (Keras 3 does
not read their signature), not a wrapper that keeps a named first parameter or sets
``__signature__``, not an unknown decorator from elsewhere (it cannot be told). Apply
writes ``__init__.__signature__ = inspect.signature(__init__)`` after ``__init__`` only
when every decorator keeps the constructor in ``__wrapped__``."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text, scan_text

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


    def bare(function):
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


FIX = "    __init__.__signature__ = inspect.signature(__init__)\n"


def _km530(base: str, decorator: str) -> list[dict]:
    text = LAYER.format(base=base, decorator=decorator)
    return [f for f in scan_text(text) if f["rule"] == "KM530"]


@pytest.mark.parametrize("decorator", ["typechecked", "plain", "typechecked\n    @plain"])
def test_a_wrapper_that_keeps_wrapped_gets_the_signature(decorator: str) -> None:
    findings = _km530("tf.keras.layers.Layer", decorator)
    assert findings and all(f["fixable"] for f in findings)
    assert all(
        "`__init__.__signature__ = inspect.signature(__init__)`" in f["message"] for f in findings
    )
    text = LAYER.format(base="tf.keras.layers.Layer", decorator=decorator)
    converted = apply_to_text(text)
    # right after __init__, once, with inspect imported; the decorators stay
    assert converted.count(FIX) == 1 and "import inspect\n" in converted
    assert converted.index("self.size = size") < converted.index(FIX)
    assert f"@{decorator}" in converted
    assert not [f for f in scan_text(converted) if f["rule"] == "KM530"]
    assert apply_to_text(converted) == converted


@pytest.mark.parametrize("decorator", ["bare", "typechecked\n    @bare"])
def test_a_wrapper_without_wraps_stays_manual(decorator: str) -> None:
    findings = _km530("tf.keras.layers.Layer", decorator)
    assert findings and not any(f["fixable"] for f in findings)
    assert any("Remove `@bare`" in f["message"] for f in findings)
    assert FIX not in apply_to_text(LAYER.format(base="tf.keras.layers.Layer", decorator=decorator))
