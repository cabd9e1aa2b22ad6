"""The reference's weights in a rebuilt model, and the seeded perturbation both sides apply
when the model's outputs are degenerate.

The reference writes its weights grouped by layer (`weights`); a target matches the groups,
loads them and lists the constants one side tracks and the other does not, and the weights
it matched across layers (a variable Keras 2 moved to the layer that holds it). A model whose
outputs are constant (a zero-initialised gamma makes every output 0) agrees with any
conversion that is constant too, so the reference probes its outputs first: when one is
constant, every side adds the same seeded noise to the same trainable weights (indexed by
the reference's group and weight) before anything is compared.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from kmigrate.parity.model_layers import flatten
from kmigrate.parity.tracebacks import StageError
from kmigrate.parity.weights import (
    MovedWeight,
    WeightGroup,
    WeightMatch,
    WeightMismatchError,
    match_weights,
)

NOISE_SCALE = 0.5  # times the weight's spread (at least NOISE_FLOOR): visibly non-degenerate
NOISE_FLOOR = 0.1


def savable(array: np.ndarray) -> np.ndarray:
    """np.savez cannot store bfloat16 and friends (ml_dtypes): widen them to float32."""
    array = np.asarray(array)
    if array.dtype.kind not in "biufc":
        return array.astype(np.float32)
    return array


def constant_outputs(arrays: list[tuple[str, np.ndarray]]) -> list[str]:
    """Names of the floating-point outputs whose values are all the same (all zeros...)."""
    found = []
    for name, array in arrays:
        if array.dtype.kind == "f" and array.size > 1:
            finite = array[np.isfinite(array)]
            if finite.size == array.size and float(np.ptp(finite)) == 0.0:
                found.append(f"'{name}' is all {float(finite.flat[0]):g}")
    return found


def noise(seed: int, group: int, weight: int, shape: tuple[int, ...], scale: float) -> np.ndarray:
    """The same perturbation on every side: seeded by the reference's (group, weight)."""
    rng = np.random.default_rng([seed, group, weight])
    return (scale * rng.standard_normal(shape)).astype(np.float64)


class WeightTransfer:
    """Inside a worker (`worker.Worker`): save, load and perturb the shared weights."""

    def __init__(self, worker):
        self.worker = worker
        self.pairs: list[tuple[int, int]] | None = None  # None: no transfer (a .keras file)
        self.reference_groups: list[WeightGroup] = []
        self.moved: list[MovedWeight] = []  # weights matched across layers (`weights`)

    def groups(self) -> list[tuple[WeightGroup, list]]:
        return self.worker.layers.weight_groups()

    def run(self) -> None:
        mode = (self.worker.task.get("weights") or {}).get("mode")
        if not mode:
            return
        paths = self.worker.task["weights"]
        groups = self.groups()
        if mode == "save":
            self.save(groups, paths)
        else:
            self.load(groups, paths)
        self.worker.result["weight_groups"] = len(groups)

    def save(self, groups: list, paths: dict) -> None:
        meta, arrays = [], {}
        for i, (group, variables) in enumerate(groups):
            meta.append(group.to_dict())
            for k, variable in enumerate(variables):
                arrays[f"g{i}_{k}"] = savable(self.worker.runtime.to_numpy(variable))
        np.savez(paths["path"], **arrays)
        Path(paths["meta"]).write_text(json.dumps(meta), encoding="utf-8")
        self.pairs = [(i, i) for i in range(len(groups))]
        self.reference_groups = [g for g, _ in groups]

    def load(self, groups: list, paths: dict) -> None:
        reference = [
            WeightGroup.from_dict(d)
            for d in json.loads(Path(paths["meta"]).read_text(encoding="utf-8"))
        ]
        try:
            match = match_weights(reference, [g for g, _ in groups])
        except WeightMismatchError as exc:
            raise StageError(f"the reference weights do not fit this model: {exc}") from None
        runtime = self.worker.runtime
        with np.load(paths["path"]) as data:
            for i, j, order in match.order(reference, [g for g, _ in groups]):
                for k_ref, k in order:
                    variable = groups[j][1][k]
                    variable.assign(runtime.as_variable_dtype(data[f"g{i}_{k_ref}"], variable))
        self.pairs = match.pairs
        self.moved = match.moved
        self.reference_groups = reference
        self.worker.result["weights_matched_by"] = match.how
        if match.moved:
            self.worker.result["weights_moved"] = [m.to_dict() for m in match.moved]
            self.worker.result["notes"].extend(f"weights: {m.describe()}" for m in match.moved)
        if match.unmatched:
            self.worker.result["weights_unmatched"] = [u.to_dict() for u in match.unmatched]
            self.worker.result["notes"].extend(
                f"weights: {u.describe()}; the other weights are matched" for u in match.unmatched
            )

    def weight_pairs(self, groups: list) -> list[tuple[int, int, list[tuple[int, int]]]]:
        """(reference group, group here, weight order) for every transferred group; on a
        run without transferred weights (a .keras file) each group pairs with itself."""
        if self.pairs is None:
            return [(i, i, [(k, k) for k in range(len(v))]) for i, (_, v) in enumerate(groups)]
        match = WeightMatch(self.pairs, "", [], self.moved)
        return match.order(self.reference_groups, [g for g, _ in groups])

    # -- degenerate outputs ---------------------------------------------------------------

    def perturb_if_degenerate(self) -> None:
        """Reference: probe the outputs, perturb when one is constant, say so in the result.
        Target: apply the reference's perturbation, if it made one."""
        if self.worker.task["role"] == "reference":
            self.probe_and_perturb()
        else:
            self.follow_reference()

    def outputs(self) -> list[tuple[str, np.ndarray]]:
        worker = self.worker
        value = worker.runtime.profile.call(worker.model, worker.model_args(), worker.batch_size)
        return [(name, worker.runtime.to_numpy(t)) for name, t in flatten(value)]

    def probe_and_perturb(self) -> None:
        try:
            constant = constant_outputs(self.outputs())
        except Exception:  # noqa: BLE001 - the call check reports it, with its layer
            return
        if not constant:
            return
        seed = int(self.worker.task["inputs"]["seed"])
        groups = self.groups()
        plan = []
        for i, j, order in self.weight_pairs(groups):
            group, variables = groups[j]
            for k_ref, k in order:
                variable = variables[k]
                value = np.asarray(self.worker.runtime.to_numpy(variable))
                if not getattr(variable, "trainable", True) or value.dtype.kind != "f":
                    continue
                spread = float(np.std(value)) if value.size > 1 else abs(float(value.sum()))
                plan.append([i, k_ref, NOISE_SCALE * max(spread, NOISE_FLOOR)])
        self.apply(seed, plan, groups)
        still = constant_outputs(self.outputs())
        self.worker.result["perturbed"] = {
            "seed": seed,
            "weights": plan,
            "constant_outputs": constant,
            "still_constant": still,
        }
        note = (
            f"outputs are degenerate ({'; '.join(constant)}): {len(plan)} trainable weights "
            f"perturbed with seeded noise (seed {seed}), the same on every side, before comparing"
        )
        if still:
            note += f"; still constant after that ({'; '.join(still)}): the comparison says little"
        self.worker.result["notes"].append(note)

    def follow_reference(self) -> None:
        path = (self.worker.task.get("train") or {}).get("reference_result")
        if not path or not Path(path).exists():
            return
        perturbed = json.loads(Path(path).read_text(encoding="utf-8")).get("perturbed")
        if perturbed:
            self.apply(int(perturbed["seed"]), perturbed["weights"], self.groups())
            self.worker.result["perturbed"] = {"seed": perturbed["seed"], "as": "the reference"}

    def apply(self, seed: int, plan: list, groups: list) -> None:
        """Add `noise` to each (reference group, weight, scale) in `plan` that exists here."""
        wanted = {(int(i), int(k)): float(scale) for i, k, scale in plan}
        runtime = self.worker.runtime
        for i, j, order in self.weight_pairs(groups):
            variables = groups[j][1]
            for k_ref, k in order:
                scale = wanted.get((i, k_ref))
                if scale is None:
                    continue
                variable = variables[k]
                value = np.asarray(runtime.to_numpy(variable)).astype(np.float64)
                value = value + noise(seed, i, k_ref, value.shape, scale)
                variable.assign(runtime.as_variable_dtype(value.astype(np.float32), variable))
