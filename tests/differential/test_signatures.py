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

import pytest

from kmigrate.rules.ops_catalog import CATALOG, OpEntry

pytestmark = pytest.mark.backends

# Keras 2.x backend functions that tf_keras no longer has (real legacy code still calls
# them; the differential harness defines the automatic ones as Keras 2.3 did), and
# functions third-party libraries patched onto K.
NOT_IN_TF_KERAS = {
    "K.logsumexp": "x, axis=None, keepdims=False",
    "K.identity": "x, name=None",
    "K.pattern_broadcast": None,
    "K.symbolic": None,
    "K.where": None,
}


def _resolve(symbol: str):
    if symbol.startswith("K."):
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
    functions = []
    for symbol in entry.symbols:
        if symbol in NOT_IN_TF_KERAS:
            sig = ", ".join(
                (f"*{p.name}" if p.varargs else p.name)
                + ("" if p.default is None else f"={p.default}")
                for p in entry.params
            )
            assert sig == NOT_IN_TF_KERAS[symbol], symbol
            continue
        functions.append((symbol, _resolve(symbol)))
    if not functions:
        return
    first_symbol, first = functions[0]
    for symbol, function in functions[1:]:
        assert function is first or _actual(function) == _actual(first), (
            f"{symbol} is not an alias of {first_symbol}"
        )
    actual = _actual(first)
    if entry.symbol == "tf.Variable":
        actual = _actual(first.__init__)[1:]  # drop self
    expected = [(n, k, _normal(d)) for n, k, d in _expected(entry)][: len(actual)]
    assert [(n, k, _normal(d)) for n, k, d in actual] == expected, first_symbol


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
