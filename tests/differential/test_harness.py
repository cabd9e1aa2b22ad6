"""The differential harness's own judge, ``compare``, on known-good and known-bad pairs.

Every green differential test is only as strict as ``compare``: loosened to 1e-3, the
tanh GELU passes for TensorFlow's exact one. Fast (NumPy only, no backend).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from differential.harness import FLOAT_TOLERANCE, Case, compare

CASE = Case("tf.identity(x)")


def tensor(values, dtype="float32") -> list[tuple[str, np.ndarray]]:
    return [("tensor", np.asarray(values, dtype=dtype))]


def gelu_pair() -> tuple[np.ndarray, np.ndarray]:
    """TensorFlow's default GELU (exact, erf) and the tanh approximation, float32."""
    x = np.linspace(-4.0, 4.0, 801)
    exact = 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    tanh = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return exact.astype(np.float32), tanh.astype(np.float32)


def test_the_tanh_gelu_is_not_the_exact_one() -> None:
    exact, tanh = gelu_pair()
    # The trap is small: within a loose 1e-3, so only a float32-sized tolerance sees it.
    assert np.allclose(tanh, exact, rtol=1e-3, atol=1e-3)
    assert "max abs error" in compare(CASE, tensor(exact), tensor(tanh))
    assert compare(CASE, tensor(exact), tensor(exact)) == ""


def test_float32_tolerance_is_float32_sized() -> None:
    rtol, atol = FLOAT_TOLERANCE["float32"]
    assert rtol <= 1e-5 and atol <= 1e-6
    ref = np.linspace(1.0, 2.0, 16, dtype=np.float32)
    assert compare(CASE, tensor(ref), tensor(ref * (1 + 2e-6))) == ""  # float32 rounding
    assert compare(CASE, tensor(ref), tensor(ref * (1 + 1e-4))) != ""


@pytest.mark.parametrize(
    ("reference", "got", "says"),
    [
        (tensor([1.0, 2.0]), tensor([1.0, 2.0, 3.0]), "shape"),
        (tensor([1.0, 2.0]), tensor([1.0, 2.0], "float64"), "dtype float64"),
        (tensor([1, 2], "int64"), tensor([1, 2], "int32"), "dtype int32"),
        (tensor([1, 2], "int32"), tensor([1, 3], "int32"), "values differ"),
        (tensor([True, False], "bool"), tensor([True, True], "bool"), "values differ"),
        (tensor([1.0, np.nan]), tensor([1.0, 0.0]), "max abs error"),
        (tensor([1.0, 0.0]), tensor([1.0, np.nan]), "max abs error"),
        (tensor([1.0]), tensor([1.0]) + tensor([1.0]), "2 outputs"),
        ([("str", np.asarray("same"))], [("str", np.asarray("valid"))], "!="),
    ],
    ids=[
        "shape",
        "float-dtype",
        "int-dtype",
        "int-values",
        "bool",
        "nan",
        "nan-got",
        "arity",
        "str",
    ],
)
def test_known_bad_pairs_are_rejected(reference, got, says: str) -> None:
    assert says in compare(CASE, reference, got)


def test_declared_differences_are_the_only_ones_forgiven() -> None:
    int_index = Case("tf.argmax(x)", dtype="int")
    assert compare(int_index, tensor([3], "int64"), tensor([3], "int32")) == ""
    assert "dtype" in compare(int_index, tensor([3], "int64"), tensor([3.0], "float32"))
    assert "values differ" in compare(int_index, tensor([3], "int64"), tensor([2], "int32"))
    # dtype= covers integer results only: a float result keeps TensorFlow's dtype.
    assert "dtype" in compare(int_index, tensor([3.0]), tensor([3.0], "float64"))
    loose = Case("tf.math.lgamma(x)", rtol=1e-3, atol=1e-3)
    exact, tanh = gelu_pair()
    assert compare(loose, tensor(exact), tensor(tanh)) == ""
    assert compare(loose, tensor(exact), tensor(tanh + 0.01)) != ""
    assert compare(CASE, tensor([1.0, np.nan]), tensor([1.0, np.nan])) == ""
