"""What to tell the user when the original could not run as the reference.

A before/after reference runs the original as it is written, on Keras 2 (tf_keras) or
Keras 3 on TensorFlow 2.x; nothing is compared when it fails. Legacy originals fail there
for reasons of their era, not of the conversion: a TensorFlow 1.x name (``tf.
depth_to_space``), a TensorFlow 1.x argument (``keep_dims``), a tensor compared with ``!=``
(TensorFlow 1 compared tensors as objects, so ``alpha != 0.0`` was True; TensorFlow 2
compares values, and a traced ``call()`` cannot turn that into a Python ``bool``), a
Keras 2.x module tf_keras dropped. The report says which attempt (Keras 3, Keras 2) failed
and why, names such a cause when the error shows it, and what the user can do: the
other Keras, or a copy of the original with that one line brought to TensorFlow 2 (the
reference must keep the original's numbers, so parity never edits it itself).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kmigrate.parity import backends as registry
from kmigrate.parity.report import STAGE_WORDS, ErrorInfo

# (pattern on "Type: message", what it means for a legacy original), first match wins
LEGACY_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"^Keras2ModuleNotFoundError"),
        "the original imports a Keras 2.x module that tf_keras does not have",
    ),
    (
        re.compile(r"symbolic `tf\.Tensor` as a Python `bool`"),
        "the original (or a Keras 2 function it calls, e.g. K.relu with a tensor alpha) uses "
        "a tensor as a Python bool: TensorFlow 1 compared tensors as objects (`alpha != 0.0` "
        "was simply True), TensorFlow 2 compares their values, which a traced call() cannot "
        "turn into a bool",
    ),
    (
        re.compile(r"Iterating over a symbolic `tf\.Tensor`"),
        "the original unpacks or loops over a tensor in call(), which a traced call() cannot "
        "do: check the layer is given the list of inputs it expects",
    ),
    (
        re.compile(r"module 'tensorflow(\.[\w.]+)?' has no attribute '(\w+)'"),
        "the original calls TensorFlow 1.x API that TensorFlow 2 removed (tf.compat.v1 "
        "still has most of it)",
    ),
    (
        re.compile(r"unexpected keyword argument '(keep_dims|reduction_indices|dim)'"),
        "the original passes a TensorFlow 1.x argument that TensorFlow 2 renamed "
        "(keep_dims is keepdims, reduction_indices is axis)",
    ),
    (
        re.compile(r"module 'keras\.backend' has no attribute '(\w+)'"),
        "the original calls a Keras 2 backend function (K.*) that this Keras version lacks",
    ),
)


def legacy_cause(error: ErrorInfo) -> str | None:
    """The era-specific reason behind `error`, when its text shows one."""
    text = f"{error.type}: {error.message}\n{error.cause or ''}\n{error.traceback}"
    for pattern, meaning in LEGACY_CAUSES:
        if pattern.search(text):
            return meaning
    return None


@dataclass(frozen=True)
class Attempt:
    """One try at running the original: with which Keras, and how it ended."""

    keras: int  # 2 (tf_keras) or 3
    backend: str
    error: ErrorInfo | None  # None: it ran

    @property
    def title(self) -> str:
        keras = "Keras 2 (tf_keras)" if self.keras == 2 else "Keras 3"
        return f"{keras} on {self.backend}"

    def failure(self) -> str:
        if self.error is None:
            return "ran"
        stage = STAGE_WORDS.get(self.error.stage, self.error.stage)
        return f"failed while {stage}: {self.error.headline}"


def attempt_notes(attempts: list[Attempt]) -> list[str]:
    """One line per attempt before the last (the last one's error is printed in full)."""
    if len(attempts) < 2:
        return []
    total = len(attempts)
    lines = [
        f"attempt {n} of {total}, {a.title}: {a.failure()}"
        for n, a in enumerate(attempts[:-1], start=1)
    ]
    final = attempts[-1]
    lines.append(
        f"attempt {total} of {total}, {final.title}: "
        + ("ran" if final.error is None else "failed (below)")
    )
    return lines


def reference_hint(attempts: list[Attempt], *, keras_choice: str, tf_keras: bool) -> str:
    """What the user can do when no attempt ran the original: the cause when the errors
    show one, and the choices left (the Keras not tried yet; a fixed copy of the original)."""
    final = attempts[-1]
    tried = {a.keras for a in attempts}
    causes = []
    for attempt in attempts:
        cause = legacy_cause(attempt.error) if attempt.error else None
        if cause and cause not in causes:
            causes.append(f"{attempt.title}: {cause}" if len(attempts) > 1 else cause)
    parts = ["the original must run as the reference before anything can be compared"]
    if causes:
        parts.append("Cause: " + "; ".join(causes))
    choices = []
    if 3 not in tried:
        choices.append("--reference-keras 3 runs it on Keras 3")
    if 2 not in tried and tf_keras and keras_choice != "3":
        choices.append("--reference-keras 2 runs it on Keras 2 (tf_keras)")
    elif 2 not in tried and not tf_keras:
        choices.append("pip install tf-keras gives a Keras 2 reference")
    others = [
        p.name for p in registry.profiles() if p.name != final.backend and not p.inference_only
    ]
    home = registry.by_name(final.backend)
    if final.keras == 3 and home is not None and home.runs_keras2 and not causes and others:
        choices.append(f"--reference-backend {' or '.join(others)} runs Keras 3 on another backend")
    choices.append(
        "bring the failing line of a copy of the original to TensorFlow 2 without "
        "changing what it computes (e.g. tf.compat.v1.X for a removed tf.X) and give that "
        "copy as --reference"
    )
    if len(choices) > 1:
        choices[-1] = f"or {choices[-1]}"
    parts.append("What to do: " + "; ".join(choices))
    return ". ".join(parts)
