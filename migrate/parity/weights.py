"""Carrying one set of weights from the reference model to a rebuilt one.

Weights travel as plain arrays grouped by layer: for every layer that owns variables (its
own, not its sub-layers'), the layer's path inside the model ("encoder/dense_1"), its class
and its variables in creation order (trainable first, then non-trainable, which is how both
Keras 2 and Keras 3 list a layer's own weights). Model-level ``get_weights()`` cannot be
used across Keras versions: Keras 2 lists every trainable weight of the model before any
non-trainable one, Keras 3 goes layer by layer, and functional models may order their
layers differently.

Groups are matched by layer path when both sides have the same set of paths (rewrites keep
layer names), otherwise by position; inside a group, weights are matched by name when the
names are the same set on both sides, otherwise by creation order. Either way every shape is
checked, and a weight left unmatched or matched twice is an error that names the layer.
This module is pure Python: the workers use it and the unit tests check it without a
framework.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class WeightMismatchError(Exception):
    """The reference weights do not fit the rebuilt model; the message names where."""


@dataclass(frozen=True)
class WeightGroup:
    path: str
    class_name: str
    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "class": self.class_name,
            "names": list(self.names),
            "shapes": [list(s) for s in self.shapes],
        }

    @classmethod
    def from_dict(cls, data: dict) -> WeightGroup:
        return cls(
            path=data["path"],
            class_name=data["class"],
            names=tuple(data["names"]),
            shapes=tuple(tuple(int(d) for d in s) for s in data["shapes"]),
        )

    def describe(self) -> str:
        shapes = ", ".join(_shape(s) for s in self.shapes)
        return f"'{self.path}' ({self.class_name}: {shapes})"


def short_weight_name(name: str) -> str:
    """'legacy_dense/kernel:0' (Keras 2) and 'kernel' (Keras 3) both become 'kernel'."""
    return name.rsplit("/", 1)[-1].split(":", 1)[0]


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def match_groups(
    reference: Sequence[WeightGroup], target: Sequence[WeightGroup]
) -> tuple[list[tuple[int, int]], str]:
    """Pair reference groups with target groups: ``([(ref_index, target_index)...], how)``.

    `how` is "path" or "order". Raises WeightMismatchError naming the first layer that does not
    line up (missing, extra, different number of weights, or a different shape).
    """
    ref_paths = [g.path for g in reference]
    target_paths = [g.path for g in target]
    unique = len(set(ref_paths)) == len(ref_paths) and len(set(target_paths)) == len(target_paths)
    if unique and set(ref_paths) == set(target_paths):
        index = {path: i for i, path in enumerate(ref_paths)}
        pairs = [(index[path], j) for j, path in enumerate(target_paths)]
        how = "path"
    elif len(reference) == len(target):
        pairs = [(i, i) for i in range(len(target))]
        how = "order"
    else:
        raise WeightMismatchError(_count_message(reference, target))
    for i, j in pairs:
        _check_group(reference[i], target[j], how)
    _check_once([i for i, _ in pairs], reference, "reference")
    _check_once([j for _, j in pairs], target, "here")
    return pairs, how


def _check_once(used: Sequence[int], groups: Sequence[WeightGroup], side: str) -> None:
    """Every group on each side takes part in exactly one pair."""
    for index, group in enumerate(groups):
        count = used.count(index)
        if count != 1:
            state = "left unmatched" if count == 0 else f"matched {count} times"
            raise WeightMismatchError(f"layer {group.describe()} ({side}) is {state}")


def weight_order(ref: WeightGroup, here: WeightGroup) -> list[tuple[int, int]]:
    """Pairs ``(reference weight index, this side's index)`` inside two matched groups.

    By short name ('kernel', 'gamma') when both sides name the same set of weights once
    each: Keras 2 lists a layer's trainable weights before its non-trainable ones, Keras 3
    keeps creation order, so positions can differ for one layer. Otherwise by position.
    `match_groups` checks the shapes of these pairs.
    """
    ref_names = [short_weight_name(n) for n in ref.names]
    here_names = [short_weight_name(n) for n in here.names]
    unique = len(set(ref_names)) == len(ref_names) and len(set(here_names)) == len(here_names)
    if unique and set(ref_names) == set(here_names) and len(ref_names) == len(ref.shapes):
        where = {name: k for k, name in enumerate(here_names)}
        return [(k, where[name]) for k, name in enumerate(ref_names)]
    return [(k, k) for k in range(len(ref.shapes))]


def _count_message(reference: Sequence[WeightGroup], target: Sequence[WeightGroup]) -> str:
    message = (
        f"the reference model has {len(reference)} layers with weights, this one has {len(target)}"
    )
    for position, (ref, here) in enumerate(zip(reference, target), start=1):
        if ref.shapes != here.shapes:
            return (
                f"{message}; the first that does not line up is layer #{position}: "
                f"reference {ref.describe()} vs here {here.describe()}"
            )
    longer, side = (reference, "reference") if len(reference) > len(target) else (target, "here")
    extra = longer[min(len(reference), len(target))]
    return f"{message}; the first extra layer ({side}) is {extra.describe()}"


def _check_group(ref: WeightGroup, here: WeightGroup, how: str) -> None:
    where = f"layer {here.describe()}"
    if here.path != ref.path:
        where += f", matched by position with reference layer {ref.describe()}"
    if len(ref.shapes) != len(here.shapes):
        raise WeightMismatchError(
            f"{where}: {len(here.shapes)} weights here, {len(ref.shapes)} on the reference"
        )
    for k_ref, k in weight_order(ref, here):
        if tuple(ref.shapes[k_ref]) != tuple(here.shapes[k]):
            name = short_weight_name(here.names[k]) if k < len(here.names) else str(k)
            raise WeightMismatchError(
                f"{where}: weight #{k} '{name}' has shape {_shape(here.shapes[k])} here but "
                f"{_shape(ref.shapes[k_ref])} on the reference (matched by {how})"
            )
