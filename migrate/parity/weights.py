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
A weight one side lists under a layer and the other under that layer's sub-layer (or
parent) is matched across the two groups when its short name and shape single it out on
both sides: Keras 2 moves a variable to the layer that assigns it to an attribute
(tensorflow_addons' ``WeightNormalization`` sets ``self.v = self.layer.kernel``), Keras 3
keeps it where it was created. Such a match is listed (``WeightMatch.moved``), never silent.
This module is pure Python: the workers use it and the unit tests check it without a
framework.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


class WeightMismatchError(Exception):
    """The reference weights do not fit the rebuilt model; the message names where."""


@dataclass(frozen=True)
class WeightGroup:
    path: str
    class_name: str
    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    trainable: tuple[bool, ...] = ()  # per weight; unknown (empty) counts as trainable

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "class": self.class_name,
            "names": list(self.names),
            "shapes": [list(s) for s in self.shapes],
            "trainable": list(self.trainable),
        }

    @classmethod
    def from_dict(cls, data: dict) -> WeightGroup:
        return cls(
            path=data["path"],
            class_name=data["class"],
            names=tuple(data["names"]),
            shapes=tuple(tuple(int(d) for d in s) for s in data["shapes"]),
            trainable=tuple(bool(t) for t in data.get("trainable", ())),
        )

    def is_constant(self, k: int) -> bool:
        """Weight `k` is known not to train (a mask, an index table, a moving statistic)."""
        return k < len(self.trainable) and not self.trainable[k]

    def weight_name(self, k: int) -> str:
        return short_weight_name(self.names[k]) if k < len(self.names) else f"#{k}"

    def describe(self) -> str:
        shapes = ", ".join(_shape(s) for s in self.shapes)
        return f"'{self.path}' ({self.class_name}: {shapes})"


def short_weight_name(name: str) -> str:
    """'legacy_dense/kernel:0' (Keras 2) and 'kernel' (Keras 3) both become 'kernel'."""
    return name.rsplit("/", 1)[-1].split(":", 1)[0]


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


@dataclass(frozen=True)
class UnmatchedWeight:
    """A weight one side tracks and the other does not; allowed only for constants."""

    side: str  # "reference" | "here"
    group: int  # the group's index on its own side
    index: int  # the weight's index inside the group
    path: str
    name: str
    shape: tuple[int, ...]

    def describe(self) -> str:
        where = "the reference" if self.side == "reference" else "this model"
        other = "this model" if self.side == "reference" else "the reference"
        return (
            f"'{self.path}' weight '{self.name}' {_shape(self.shape)}, a constant (not "
            f"trainable), is tracked by {where} only ({other} has no such weight)"
        )

    def to_dict(self) -> dict:
        return {
            "side": self.side,
            "group": self.group,
            "index": self.index,
            "path": self.path,
            "name": self.name,
            "shape": list(self.shape),
            "constant": True,
        }


@dataclass(frozen=True)
class MovedWeight:
    """A weight the two sides list under different layers, one inside the other, matched
    by its short name and shape (unique among the weights left over on both sides)."""

    ref_group: int
    ref_index: int
    group: int  # the group here
    index: int
    ref_path: str
    path: str
    name: str
    shape: tuple[int, ...]

    def describe(self) -> str:
        return (
            f"'{self.name}' {_shape(self.shape)} is a weight of '{self.ref_path}' on the "
            f"reference and of '{self.path}' here (Keras 2 moves a variable to the layer "
            "that assigns it to an attribute); matched by name and shape"
        )

    def to_dict(self) -> dict:
        return {
            "reference": [self.ref_group, self.ref_index],
            "here": [self.group, self.index],
            "reference_path": self.ref_path,
            "path": self.path,
            "name": self.name,
            "shape": list(self.shape),
        }


@dataclass
class WeightMatch:
    """How the reference's weights map onto this model's."""

    pairs: list[tuple[int, int]]  # (reference group, group here)
    how: str  # "path" | "order"
    unmatched: list[UnmatchedWeight]
    moved: list[MovedWeight] = field(default_factory=list)

    def order(
        self, reference: Sequence[WeightGroup], target: Sequence[WeightGroup]
    ) -> list[tuple[int, int, list[tuple[int, int]]]]:
        """``(reference group, group here, [(reference weight, weight here)...])`` for every
        transferred weight: each pair of groups, then each moved weight on its own."""
        found = [(i, j, weight_order(reference[i], target[j])) for i, j in self.pairs]
        found += [(m.ref_group, m.group, [(m.ref_index, m.index)]) for m in self.moved]
        return found


def match_groups(
    reference: Sequence[WeightGroup], target: Sequence[WeightGroup]
) -> tuple[list[tuple[int, int]], str]:
    """Pair reference groups with target groups: ``([(ref_index, target_index)...], how)``.

    `how` is "path" or "order". Raises WeightMismatchError naming the first layer that does not
    line up (missing, extra, different number of weights, or a different shape).
    """
    match = match_weights(reference, target)
    return match.pairs, match.how


def match_weights(reference: Sequence[WeightGroup], target: Sequence[WeightGroup]) -> WeightMatch:
    """`match_groups` that also lets constants go unmatched: where one side tracks a
    non-trainable variable (a constant mask, an index table) the other computes without,
    the rest is matched and the unmatched ones are listed. A trainable weight (or one whose
    trainability is unknown) left unmatched is still an error: training would differ."""
    ref_paths = [g.path for g in reference]
    target_paths = [g.path for g in target]
    unique = len(set(ref_paths)) == len(ref_paths) and len(set(target_paths)) == len(target_paths)
    common = set(ref_paths) & set(target_paths)
    lonely = [("reference", i, g) for i, g in enumerate(reference) if g.path not in common]
    lonely += [("here", j, g) for j, g in enumerate(target) if g.path not in common]
    constant_only = all(all(g.is_constant(k) for k in range(len(g.shapes))) for _, _, g in lonely)
    if unique and common and constant_only:
        index = {path: i for i, path in enumerate(ref_paths)}
        pairs = [(index[path], j) for j, path in enumerate(target_paths) if path in common]
        how = "path"
    elif len(reference) == len(target):
        pairs = [(i, i) for i in range(len(target))]
        how = "order"
        lonely = []
    else:
        raise WeightMismatchError(_count_message(reference, target))
    unmatched = [
        UnmatchedWeight(side, n, k, g.path, g.weight_name(k), tuple(g.shapes[k]))
        for side, n, g in lonely
        for k in range(len(g.shapes))
    ]
    left = [(i, j, _check_group(reference[i], target[j], how, (i, j))) for i, j in pairs]
    moved = _moved_weights(reference, target, [u for _, _, group in left for u in group])
    taken = {("reference", m.ref_group, m.ref_index) for m in moved}
    taken |= {("here", m.group, m.index) for m in moved}
    for i, j, group in left:
        rest = [u for u in group if (u.side, u.group, u.index) not in taken]
        _check_leftovers(reference[i], target[j], rest, reference, target)
        unmatched.extend(rest)
    _check_once(
        [i for i, _ in pairs],
        reference,
        "reference",
        {u.group for u in unmatched if u.side == "reference" and u.path not in common},
    )
    _check_once(
        [j for _, j in pairs],
        target,
        "here",
        {u.group for u in unmatched if u.side == "here" and u.path not in common},
    )
    return WeightMatch(pairs, how, unmatched, moved)


def _check_once(
    used: Sequence[int], groups: Sequence[WeightGroup], side: str, lonely: set[int]
) -> None:
    """Every group on each side takes part in exactly one pair (or holds only constants
    the other side lacks)."""
    for index, group in enumerate(groups):
        count = used.count(index)
        if count != 1 and not (count == 0 and index in lonely):
            state = "left unmatched" if count == 0 else f"matched {count} times"
            raise WeightMismatchError(f"layer {group.describe()} ({side}) is {state}")


def weight_order(ref: WeightGroup, here: WeightGroup) -> list[tuple[int, int]]:
    """Pairs ``(reference weight index, this side's index)`` inside two matched groups.

    By short name ('kernel', 'gamma') when both sides name their weights once each and the
    names are the same set: Keras 2 lists a layer's trainable weights before its
    non-trainable ones, Keras 3 keeps creation order, so positions can differ for one layer.
    When the counts differ, the names both sides share (`_check_group` decides whether the
    rest may stay unmatched). Otherwise by position. `match_groups` checks the shapes.
    """
    ref_names = [short_weight_name(n) for n in ref.names]
    here_names = [short_weight_name(n) for n in here.names]
    unique = len(set(ref_names)) == len(ref_names) and len(set(here_names)) == len(here_names)
    named = unique and len(ref_names) == len(ref.shapes) and len(here_names) == len(here.shapes)
    if named and set(ref_names) == set(here_names):
        where = {name: k for k, name in enumerate(here_names)}
        return [(k, where[name]) for k, name in enumerate(ref_names)]
    if named and len(ref.shapes) != len(here.shapes) and set(ref_names) & set(here_names):
        where = {name: k for k, name in enumerate(here_names)}
        return [(k, where[name]) for k, name in enumerate(ref_names) if name in where]
    return [(k, k) for k in range(min(len(ref.shapes), len(here.shapes)))]


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


def _check_group(
    ref: WeightGroup, here: WeightGroup, how: str, indices: tuple[int, int]
) -> list[UnmatchedWeight]:
    """Shapes of the paired weights; the weights left over (`_moved_weights` may still
    match trainable ones in another group, `_check_leftovers` refuses the rest)."""
    where = _where(ref, here)
    order = weight_order(ref, here)
    left = [
        ("reference", indices[0], ref, k)
        for k in range(len(ref.shapes))
        if k not in {a for a, _ in order}
    ]
    left += [
        ("here", indices[1], here, k)
        for k in range(len(here.shapes))
        if k not in {b for _, b in order}
    ]
    for k_ref, k in order:
        if tuple(ref.shapes[k_ref]) != tuple(here.shapes[k]):
            name = short_weight_name(here.names[k]) if k < len(here.names) else str(k)
            raise WeightMismatchError(
                f"{where}: weight #{k} '{name}' has shape {_shape(here.shapes[k])} here but "
                f"{_shape(ref.shapes[k_ref])} on the reference (matched by {how})"
            )
    return [
        UnmatchedWeight(side, n, k, group.path, group.weight_name(k), tuple(group.shapes[k]))
        for side, n, group, k in left
    ]


def _where(ref: WeightGroup, here: WeightGroup) -> str:
    where = f"layer {here.describe()}"
    if here.path != ref.path:
        where += f", matched by position with reference layer {ref.describe()}"
    return where


def _check_leftovers(
    ref: WeightGroup,
    here: WeightGroup,
    rest: list[UnmatchedWeight],
    reference: Sequence[WeightGroup],
    target: Sequence[WeightGroup],
) -> None:
    """The weights of a pair of groups that nothing matched must be constants."""
    left = [
        (u.side, u.group, (reference if u.side == "reference" else target)[u.group], u.index)
        for u in rest
    ]
    if any(not group.is_constant(k) for _, _, group, k in left):
        raise WeightMismatchError(
            f"{_where(ref, here)}: {len(here.shapes)} weights here, {len(ref.shapes)} on the "
            "reference" + _leftover_names(left)
        )


def _related(a: str, b: str) -> bool:
    """One layer path is the other or lies inside it ("wrapper" and "wrapper/dense")."""
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _moved_weights(
    reference: Sequence[WeightGroup],
    target: Sequence[WeightGroup],
    left: list[UnmatchedWeight],
) -> list[MovedWeight]:
    """Left-over weights of one side matched with left-over weights of the other in a
    related layer: same short name, shape and trainability, and no other left-over weight
    on either side that could be the same one (ambiguity leaves both unmatched)."""

    def key(u: UnmatchedWeight) -> tuple:
        groups = reference if u.side == "reference" else target
        return (u.name, tuple(u.shape), not groups[u.group].is_constant(u.index))

    refs = [u for u in left if u.side == "reference"]
    heres = [u for u in left if u.side == "here"]
    moved = []
    for r in refs:
        candidates = [h for h in heres if key(h) == key(r) and _related(r.path, h.path)]
        rivals = [o for o in refs if key(o) == key(r) and _related(o.path, r.path)]
        if len(candidates) != 1 or len(rivals) != 1:
            continue
        (h,) = candidates
        if sum(key(o) == key(h) and _related(o.path, h.path) for o in refs) != 1:
            continue
        moved.append(
            MovedWeight(r.group, r.index, h.group, h.index, r.path, h.path, r.name, r.shape)
        )
    return moved


def _leftover_names(left: list) -> str:
    if not left:
        return ""
    parts = []
    for side, _, group, k in left:
        kind = "a constant" if group.is_constant(k) else "trainable"
        parts.append(f"'{group.weight_name(k)}' ({kind}, {side} only)")
    return "; unmatched: " + ", ".join(parts)
