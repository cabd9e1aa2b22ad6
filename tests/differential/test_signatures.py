"""The catalog's TF signatures are TensorFlow's real ones (installed TF / tf_keras 2.21).

Argument binding (positional and keyword forms, defaults that differ) is only as good
as the signature the table states, so every automatic entry's ``sig`` is compared with
``inspect.signature`` of every alias; aliases must be the same function (so counting
them once is right); every manual symbol must exist.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import re

import pytest

from kmigrate.rules.ops_catalog import CATALOG, OpEntry

pytestmark = pytest.mark.backends

# Functions third-party libraries patched onto K (real legacy code still calls them).
NOT_IN_TF_KERAS = {
    "K.pattern_broadcast": None,
    "K.symbolic": None,
    "K.where": None,
}
# Keras 2 backend functions that tf_keras still defines but no longer exports from
# `tf_keras.backend`; the differential reference uses these very functions.
UNEXPORTED = ("K.logsumexp", "K.identity")


def _resolve(symbol: str):
    if symbol in UNEXPORTED:
        module, rest = importlib.import_module("tf_keras.src.backend"), symbol[2:].split(".")
    elif symbol.startswith("K."):
        module, rest = importlib.import_module("tf_keras.backend"), symbol[2:].split(".")
    else:
        module, rest = importlib.import_module("tensorflow"), symbol.split(".")[1:]
    value = module
    for part in rest:
        value = getattr(value, part)
    return value


def _expected(entry: OpEntry) -> list[tuple[str, str, str | None]]:
    out = []
    for p in entry.params:
        kind = "VAR_POSITIONAL" if p.varargs else "NORMAL"
        out.append((p.name, kind, p.default))
    return out


def _normal(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return repr(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return text


def _actual(function) -> list[tuple[str, str, str | None]]:
    out = []
    for p in inspect.signature(function).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            break  # **kwargs: the keyword-only parameters the table lists are documented
        kind = "VAR_POSITIONAL" if p.kind is p.VAR_POSITIONAL else "NORMAL"
        default = None if p.default is p.empty else repr(p.default)
        if isinstance(p.default, enum.Enum):
            default = f"tf.{p.default}"  # tf.VariableSynchronization.AUTO
        out.append((p.name, kind, default))
    return out


ENTRIES = [e for e in CATALOG if e.automatic]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.symbol for e in ENTRIES])
def test_signature_is_tensorflows(entry: OpEntry) -> None:
    functions = [(symbol, _resolve(symbol)) for symbol in entry.symbols]
    first_symbol, first = functions[0]
    for symbol, function in functions[1:]:
        assert function is first or _actual(function) == _actual(first), (
            f"{symbol} is not an alias of {first_symbol}"
        )
    function, actual = first, _actual(first)
    if entry.symbol == "tf.Variable":
        function, actual = first.__init__, _actual(first.__init__)[1:]  # drop self
    expected = [(n, k, _normal(d)) for n, k, d in _expected(entry)]
    assert [(n, k, _normal(d)) for n, k, d in actual] == expected[: len(actual)], first_symbol
    extra = [name for name, _, _ in expected[len(actual) :]]
    if extra:  # only behind **kwargs, and only names the function's documentation gives
        assert _takes_kwargs(function), f"{first_symbol} has no parameter(s) {extra}"
        undocumented = [n for n in extra if not re.search(rf"\b{n}\b", inspect.getdoc(first) or "")]
        assert not undocumented, f"{first_symbol} does not document {undocumented}"


def _takes_kwargs(function) -> bool:
    kinds = [p.kind for p in inspect.signature(function).parameters.values()]
    return inspect.Parameter.VAR_KEYWORD in kinds


@pytest.mark.parametrize("symbol", UNEXPORTED)
def test_the_reference_runs_tf_keras_own_functions(symbol: str) -> None:
    """The differential reference for K.logsumexp / K.identity is Keras 2's own code."""
    import tf_keras

    from differential.harness import legacy_backend

    name = symbol[2:]
    assert getattr(legacy_backend(tf_keras), name) is _resolve(symbol)
    assert _resolve(symbol).__module__ == "tf_keras.src.backend"
    assert not hasattr(tf_keras.backend, name)


MANUAL = sorted({s for e in CATALOG if not e.automatic for s in e.symbols})


def test_every_manual_symbol_exists() -> None:
    missing = []
    for symbol in MANUAL:
        if symbol in NOT_IN_TF_KERAS:
            continue
        try:
            _resolve(symbol)
        except AttributeError:
            missing.append(symbol)
    assert not missing, f"not in TensorFlow 2.21 / tf_keras 2.21: {missing}"
