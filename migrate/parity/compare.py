"""How close is close enough: tolerances by dtype, output diffs, the first diverging layer.

Everything here works on NumPy arrays and plain metadata, so the parent process can
compare what the workers wrote without importing a deep-learning framework.

Tolerances follow ``numpy.allclose``: an element agrees when
``|out - ref| <= atol + rtol * |ref|``, with NaN agreeing only with NaN. The defaults are a
few units in the last place of the dtype, scaled for the accumulation differences that
different kernels (oneDNN, XLA, ATen) legitimately produce on the same float32 model:

=========  ==========  ==========
dtype      atol        rtol
=========  ==========  ==========
float64    1e-8        1e-7
float32    1e-5        1e-4
float16    1e-3        1e-2
bfloat16   1e-2        5e-2
integers   0 (exact)   0
bool       exact       exact
=========  ==========  ==========

``--atol`` / ``--rtol`` replace these for floating outputs; integer and bool outputs are
always compared exactly (an argmax or a class id either matches or it does not).
When the reference and the other backend disagree on the dtype, the looser tolerance of the
two applies and the difference is reported as a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float

    @property
    def exact(self) -> bool:
        return self.atol == 0 and self.rtol == 0

    def describe(self) -> str:
        return "exact" if self.exact else f"atol={self.atol:g} rtol={self.rtol:g}"


FLOAT_TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance(atol=1e-8, rtol=1e-7),
    "float32": Tolerance(atol=1e-5, rtol=1e-4),
    "float16": Tolerance(atol=1e-3, rtol=1e-2),
    "bfloat16": Tolerance(atol=1e-2, rtol=5e-2),
}
EXACT = Tolerance(atol=0.0, rtol=0.0)
_DEFAULT_FLOAT = "float32"


def dtype_kind(dtype: str) -> str:
    """ "float", "int" or "bool" for a dtype name as the backends spell it."""
    name = str(dtype).lower()
    if name.startswith("bool"):
        return "bool"
    if name.startswith(("int", "uint")):
        return "int"
    return "float"


def tolerance_for(dtype: str, *, atol: float | None = None, rtol: float | None = None) -> Tolerance:
    """The tolerance for outputs of `dtype`, with user overrides for floating dtypes."""
    if dtype_kind(dtype) != "float":
        return EXACT
    base = FLOAT_TOLERANCES.get(str(dtype).lower(), FLOAT_TOLERANCES[_DEFAULT_FLOAT])
    return Tolerance(
        atol=base.atol if atol is None else float(atol),
        rtol=base.rtol if rtol is None else float(rtol),
    )


def _looser(a: Tolerance, b: Tolerance) -> Tolerance:
    return Tolerance(atol=max(a.atol, b.atol), rtol=max(a.rtol, b.rtol))


@dataclass
class ArrayDiff:
    """How one output (or one layer output) of a backend differs from the reference."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    reference_dtype: str
    tolerance: Tolerance
    max_abs: float = 0.0
    max_rel: float = 0.0
    mismatched: int = 0
    size: int = 0
    worst: dict | None = None  # {"index": [...], "value": float, "reference": float}
    problem: str | None = None  # shape mismatch and the like: no numbers to compare
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.problem is None and self.mismatched == 0

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "reference_dtype": self.reference_dtype,
            "atol": self.tolerance.atol,
            "rtol": self.tolerance.rtol,
            "max_abs_err": _json_float(self.max_abs),
            "max_rel_err": _json_float(self.max_rel),
            "mismatched": self.mismatched,
            "size": self.size,
            "passed": self.passed,
            "worst": self.worst,
            "problem": self.problem,
            "notes": list(self.notes),
        }


def _json_float(value: float) -> float | str:
    return value if np.isfinite(value) else str(value)


def compare_arrays(
    name: str,
    value: np.ndarray,
    reference: np.ndarray,
    *,
    dtype: str | None = None,
    reference_dtype: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
) -> ArrayDiff:
    """Compare one array with its reference.

    `dtype` / `reference_dtype` are the dtypes the backends produced (workers store
    bfloat16 as float32, so the file's dtype is not always the model's). Max rel err is the
    largest ``|out - ref| / |ref|`` over elements where ``|ref| > atol`` (elsewhere a relative
    error says nothing); pass/fail uses the allclose criterion above.
    """
    value = np.asarray(value)
    reference = np.asarray(reference)
    dtype = str(dtype or value.dtype)
    reference_dtype = str(reference_dtype or reference.dtype)
    tolerance = _looser(
        tolerance_for(dtype, atol=atol, rtol=rtol),
        tolerance_for(reference_dtype, atol=atol, rtol=rtol),
    )
    diff = ArrayDiff(
        name=name,
        shape=tuple(value.shape),
        dtype=dtype,
        reference_dtype=reference_dtype,
        tolerance=tolerance,
        size=int(reference.size),
    )
    if dtype != reference_dtype:
        diff.notes.append(f"dtype {dtype} where the reference gives {reference_dtype}")
    if value.shape != reference.shape:
        diff.problem = f"shape {tuple(value.shape)} where the reference gives {reference.shape}"
        return diff
    if reference.size == 0:
        return diff

    exact_kinds = dtype_kind(dtype) != "float" and dtype_kind(reference_dtype) != "float"
    work = np.int64 if exact_kinds else np.float64
    out = value.astype(work)
    ref = reference.astype(work)

    ref_abs = np.abs(ref.astype(np.float64))
    ref_abs = np.where(np.isfinite(ref_abs), ref_abs, 0.0)  # inf/NaN: no relative scale
    if exact_kinds:
        delta = np.abs(out - ref).astype(np.float64)
        bad = delta > 0
    else:
        out_nan, ref_nan = np.isnan(out), np.isnan(ref)
        same_inf = np.isinf(out) & np.isinf(ref) & (np.sign(out) == np.sign(ref))
        with np.errstate(invalid="ignore"):
            delta = np.abs(out - ref)
        delta = np.where(same_inf | (out_nan & ref_nan), 0.0, delta)
        nan_mismatch = out_nan != ref_nan
        delta = np.where(nan_mismatch, np.inf, delta)
        bad = delta > tolerance.atol + tolerance.rtol * ref_abs
        if nan_mismatch.any():
            diff.notes.append(f"{int(nan_mismatch.sum())} NaN values where the other side has none")

    diff.max_abs = float(delta.max())
    meaningful = ref_abs > max(tolerance.atol, np.finfo(np.float64).tiny)
    if meaningful.any():
        diff.max_rel = float((delta[meaningful] / ref_abs[meaningful]).max())
    diff.mismatched = int(bad.sum())
    if diff.mismatched or diff.max_abs > 0:
        excess = delta - (tolerance.atol + tolerance.rtol * ref_abs)
        flat = int(np.argmax(excess))
        index = [int(i) for i in np.unravel_index(flat, reference.shape)]
        diff.worst = {
            "index": index,
            "value": _json_float(float(value.reshape(-1)[flat])),
            "reference": _json_float(float(reference.reshape(-1)[flat])),
        }
    return diff


@dataclass(frozen=True)
class RecordedArray:
    """One array a worker produced, with the dtype the backend reported for it."""

    array: np.ndarray
    dtype: str


@dataclass(frozen=True)
class LayerRecord:
    """The outputs of one layer call during the forward pass, in call-completion order."""

    path: str  # layer path inside the model ("encoder/dense_1"); "#2" marks a second call
    class_name: str
    arrays: tuple[RecordedArray, ...]


@dataclass
class LayerDivergence:
    """The first layer (in execution order) whose outputs leave the tolerance."""

    path: str
    class_name: str
    diffs: list[ArrayDiff]
    reference_path: str  # the same layer as named on the reference side
    last_agreeing: str | None = None
    last_agreeing_max_abs: float | None = None
    compared: int = 0
    unmatched: int = 0

    @property
    def worst(self) -> ArrayDiff:
        failing = [d for d in self.diffs if not d.passed] or self.diffs
        return max(failing, key=lambda d: (d.problem is not None, d.max_abs))

    def to_dict(self) -> dict:
        return {
            "layer": self.path,
            "class": self.class_name,
            "reference_layer": self.reference_path,
            "outputs": [d.to_dict() for d in self.diffs],
            "last_agreeing_layer": self.last_agreeing,
            "last_agreeing_max_abs_err": self.last_agreeing_max_abs,
            "layers_compared": self.compared,
            "layers_unmatched": self.unmatched,
        }


def align_layers(
    reference: Sequence[LayerRecord], other: Sequence[LayerRecord]
) -> list[tuple[LayerRecord, LayerRecord]]:
    """Pair the layer calls of two runs of the same model.

    Layer paths are the primary key: execution order of independent branches may differ
    between Keras versions (and between backends), and layers with no counterpart (Keras 2
    wraps raw TF ops in TFOpLambda layers; Keras 3 records them as plain ops) are skipped.
    When no path matches at all (the code renamed every layer), fall back to call order.
    Pairs are returned in the other run's execution order.
    """
    by_path = {record.path: record for record in reference}
    pairs = [(by_path[r.path], r) for r in other if r.path in by_path]
    if pairs:
        return pairs
    return list(zip(reference, other))


def find_divergence(
    reference: Sequence[LayerRecord],
    other: Sequence[LayerRecord],
    *,
    atol: float | None = None,
    rtol: float | None = None,
) -> LayerDivergence | None:
    """Walk paired layer outputs in execution order; return the first that disagrees."""
    pairs = align_layers(reference, other)
    last_agreeing: tuple[str, float] | None = None
    for count, (ref, out) in enumerate(pairs, start=1):
        diffs = _compare_records(ref, out, atol=atol, rtol=rtol)
        if diffs is None:  # different number of outputs: not the same layer after all
            continue
        if all(d.passed for d in diffs):
            last_agreeing = (out.path, max((d.max_abs for d in diffs), default=0.0))
            continue
        return LayerDivergence(
            path=out.path,
            class_name=out.class_name,
            diffs=diffs,
            reference_path=ref.path,
            last_agreeing=last_agreeing[0] if last_agreeing else None,
            last_agreeing_max_abs=last_agreeing[1] if last_agreeing else None,
            compared=count,
            unmatched=len(other) - len(pairs),
        )
    return None


def _compare_records(
    ref: LayerRecord, out: LayerRecord, *, atol: float | None, rtol: float | None
) -> list[ArrayDiff] | None:
    if len(ref.arrays) != len(out.arrays):
        return None
    return [
        compare_arrays(
            f"{out.path}[{i}]" if len(out.arrays) > 1 else out.path,
            o.array,
            r.array,
            dtype=o.dtype,
            reference_dtype=r.dtype,
            atol=atol,
            rtol=rtol,
        )
        for i, (r, o) in enumerate(zip(ref.arrays, out.arrays))
    ]
