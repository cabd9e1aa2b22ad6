"""A target's checks against the reference's: the eager call, ``predict``, the training step.

Each check becomes a `CheckResult` (pass, fail, error, skipped) that says what differed
and, where it can, which layer: the first diverging layer of the eager call (from the
layer trace), the layer whose code raised (from the worker's traceback), the layer that is
random in training on one side only, the first layer whose updated weights differ after the
training step. Plain NumPy: the parent process never imports a framework.
"""

from __future__ import annotations

import numpy as np

from kmigrate.parity.compare import EXACT, ArrayDiff, compare_arrays
from kmigrate.parity.report import CheckResult, ErrorInfo

MODEL_ITSELF = "<model>"  # as `train_step` names a model whose own call() is random


def compare_output_lists(
    metas: list[dict],
    arrays: dict,
    prefix: str,
    ref_metas: list[dict],
    ref_arrays: dict,
    ref_prefix: str,
    *,
    atol: float | None,
    rtol: float | None,
) -> list[ArrayDiff]:
    """Output i of one side against output i of the reference (and a count mismatch)."""
    diffs = [
        compare_arrays(
            ref_meta.get("name", f"output_{i}"),
            arrays[f"{prefix}{i}"],
            ref_arrays[f"{ref_prefix}{i}"],
            dtype=meta.get("dtype"),
            reference_dtype=ref_meta.get("dtype"),
            atol=atol,
            rtol=rtol,
        )
        for i, (meta, ref_meta) in enumerate(zip(metas, ref_metas))
    ]
    if len(metas) != len(ref_metas):
        diffs.append(
            ArrayDiff(
                name="outputs",
                shape=(),
                dtype="",
                reference_dtype="",
                tolerance=EXACT,
                problem=f"{len(metas)} outputs where the reference has {len(ref_metas)}",
            )
        )
    return diffs


def check_entry(result: dict, name: str) -> dict | None:
    return (result.get("checks") or {}).get(name)


def error_result(name: str, entry: dict) -> CheckResult:
    data = entry.get("error") or {}
    return CheckResult(name, "error", error=ErrorInfo.from_dict(data), layer=data.get("layer"))


def reference_problem(name: str, reference_result: dict) -> CheckResult | None:
    """The check cannot be compared because the reference could not run it."""
    entry = check_entry(reference_result, name)
    if entry is None:
        return CheckResult(name, "skipped", detail=["the reference did not run this check"])
    if entry["status"] == "error":
        headline = ErrorInfo.from_dict(entry.get("error") or {}).headline
        return CheckResult(name, "skipped", detail=[f"the reference failed it: {headline}"])
    return None


def compare_predict(result, arrays, reference, *, atol, rtol) -> CheckResult:
    """``model.predict`` here against the reference's predict (its eager call if predict
    failed there), with a word on what that means when the eager call agreed."""
    ref = reference.result
    if check_entry(ref, "predict") and check_entry(ref, "predict")["status"] == "ok":
        ref_metas, ref_prefix = ref["predict"]["outputs"], "pred"
    else:
        ref_metas, ref_prefix = ref.get("outputs", []), "out"
    diffs = compare_output_lists(
        result["predict"]["outputs"],
        arrays,
        "pred",
        ref_metas,
        reference.arrays,
        ref_prefix,
        atol=atol,
        rtol=rtol,
    )
    passed = all(d.passed for d in diffs)
    check = CheckResult("predict", "pass" if passed else "fail", diffs=diffs)
    check.detail.append(f"jit_compile={result['predict'].get('jit_compile')}")
    return check


def compare_train(result, arrays, reference, *, atol, rtol) -> CheckResult:
    """Loss and updated weights after one SGD step; the random layers of both sides."""
    problem = reference_problem("train", reference.result)
    if problem:
        return problem
    ref = reference.result.get("train") or {}
    here = result.get("train") or {}
    if ref.get("skipped"):  # nothing to train on the reference, nor here (or it raised)
        return CheckResult("train", "n/a", detail=[ref["skipped"]])
    check = CheckResult("train", "pass")
    ref_random = [p for p in ref.get("random_layers", []) if p != MODEL_ITSELF]
    here_random = [p for p in here.get("random_layers", []) if p != MODEL_ITSELF]
    for path in ref_random:
        if path not in here_random:
            check.fail(
                path,
                f"layer '{path}' is random in training on the reference but not here: its "
                f"call() never sees training=True (read from **kwargs? Keras 3 passes "
                f"`training` only to a call() that names it)",
            )
    for path in here_random:
        if path not in ref_random:
            check.fail(path, f"layer '{path}' is random in training here but not on the reference")
    losses = here.get("random_step_losses")
    if losses and len(set(losses)) > 1:
        check.fail(
            ", ".join(here_random),
            f"the training step with random layers active is not reproducible: the same "
            f"seed and state gave losses {losses[0]!r} and {losses[1]!r} (an unseeded random "
            f"op? use keras.random with a SeedGenerator)",
        )
    if MODEL_ITSELF in ref.get("random_layers", []):
        check.detail.append("the model's own call() is random in training: step run, not compared")
        return check
    check.diffs.append(
        compare_arrays(
            "loss",
            np.asarray(here.get("loss", np.nan), dtype=np.float32),
            np.asarray(ref.get("loss", np.nan), dtype=np.float32),
            atol=atol,
            rtol=rtol,
        )
    )
    groups = ref.get("groups") or []
    constants = {
        (u["group"], u["index"])
        for u in result.get("weights_unmatched", [])
        if u.get("side") == "reference" and u.get("constant")
    }
    for key in sorted(k for k in reference.arrays if k.startswith("tw")):
        group, weight = (int(n) for n in key[2:].split("_"))
        path = groups[group] if group < len(groups) else f"group {group}"
        name = f"{path} weight #{weight} after the step"
        if key not in arrays and (group, weight) in constants:
            check.detail.append(f"{name}: a constant this model does not track, not compared")
            continue
        if key not in arrays:
            check.fail(path, f"{name}: no updated value here")
            continue
        diff = compare_arrays(name, arrays[key], reference.arrays[key], atol=atol, rtol=rtol)
        check.diffs.append(diff)
        if not diff.passed and check.layer is None:
            check.layer = f"'{path}'"
    if any(not d.passed for d in check.diffs):
        check.status = "fail"
    detail = f"SGD lr={ref.get('learning_rate')}, {ref.get('loss_function')}"
    if ref_random:
        detail += f"; random layers called with training=False: {', '.join(ref_random)}"
    check.detail.append(detail)
    return check


def compare_checks(outcome, reference, *, atol=None, rtol=None) -> list[CheckResult]:
    """The predict and train checks of one target (the eager call is the runner's)."""
    checks = []
    for name, compare in (("predict", compare_predict), ("train", compare_train)):
        entry = check_entry(outcome.result, name)
        if entry is None:
            continue
        problem = reference_problem(name, reference.result) if name == "train" else None
        if problem is not None:  # the reference failed it: not compared, whatever happened here
            checks.append(problem)
            continue
        if entry["status"] == "error":
            checks.append(error_result(name, entry))
            continue
        checks.append(compare(outcome.result, outcome.arrays, reference, atol=atol, rtol=rtol))
    return checks
