"""How much a person's time a manual finding costs, as data: the report's effort estimate.

The numbers are a migration consultant's rough per-occurrence minutes (read the code,
make the change, run the tests once), not a measurement. They are deliberately coarse:
the estimate is meant to tell "an afternoon" from "a sprint", not to plan hours.

Lookup order for a rule id: an ``effort_minutes`` class attribute on the rule itself
(rule authors may set one), then :data:`RULE_MINUTES`, then the family default in
:data:`FAMILY_MINUTES`, then :data:`DEFAULT_MINUTES`. The result is multiplied by the
finding's context and severity factors. Fixable findings cost nothing here: ``kmigrate
apply`` rewrites them. ``info`` findings (a hand-written GradientTape loop outside model
code, ``@tf.function`` on a training step) do not stop the model from being portable,
but someone has to decide about them, so they count at a reduced rate.
"""

from __future__ import annotations

# The ids of KM901/KM902 from the engine, which emits them, rather than from their rule
# classes: the report reads this table on every run, and a warm one imports no rule.
from kmigrate.engine import RULE_CRASHED, UNPARSEABLE

# Per family (the first three characters of the id: "KM2" covers KM2xx).
FAMILY_MINUTES: dict[str, float] = {
    "KM1": 3,  # an import or namespace the rewriter could not map: look up the Keras 3 name
    "KM2": 10,  # a TF op with no exact keras.ops form: rewrite it, check shapes and dtypes
    "KM3": 15,  # stateful randomness: thread a SeedGenerator through the layer, re-check seeds
    "KM4": 15,  # saving/loading: change formats, convert files on disk, update consumers
    "KM5": 5,  # a Keras 2 API change: mostly mechanical once understood
    "KM6": 60,  # backend-specific structure: GradientTape loops, tf.function, distribution
    "KM9": 30,  # a file kmigrate could not read: port to Python 3 / fix it first
}

# Rules whose typical manual case differs from their family's.
RULE_MINUTES: dict[str, float] = {
    "KM101": 3,  # tf.keras.X with no Keras 3 counterpart
    "KM102": 2,  # an import the rewriter had to leave
    "KM103": 5,  # a Keras 2 module path that Keras 3 removed
    "KM104": 20,  # code pinned to Keras 2 (tf_keras / TF_USE_LEGACY_KERAS): a decision, then work
    UNPARSEABLE: 30,
    RULE_CRASHED: 5,  # a rule crashed: report it, look at the file by hand
}

DEFAULT_MINUTES: float = 10

# Where the code is changes what a manual change costs. Model code must be exact and is
# checked with `kmigrate parity`; a hand-written training loop is restructured (to
# `model.fit` / `train_step`), which costs more; data-pipeline code is portable input
# (tf.data feeds every backend), so a finding there is usually a small adjustment.
CONTEXT_FACTOR: dict[str, float] = {
    "model": 1.0,
    "training-loop": 1.5,
    "data": 0.5,
    "serving": 1.0,
    "distribution": 1.0,
    "undecided": 1.5,  # a helper shared by a model and a data pipeline: split by hand
    "other": 1.0,
}

# A note (info) is a decision, often "keep it on TensorFlow for now"; errors and warnings
# are work.
SEVERITY_FACTOR: dict[str, float] = {"error": 1.0, "warning": 1.0, "info": 0.5}

# Top-level modules whose use makes a statement "framework code" for the portability
# score's denominator (see docs/report.md).
FRAMEWORK_MODULES: tuple[str, ...] = ("tensorflow", "keras", "tf_keras")


def minutes_for(
    rule_id: str, context: str = "other", rule: type | None = None, severity: str = "warning"
) -> float:
    """Estimated minutes of a person's time for one non-fixable finding of ``rule_id``."""
    declared = getattr(rule, "effort_minutes", None) if rule is not None else None
    if isinstance(declared, (int, float)) and not isinstance(declared, bool):
        base = float(declared)
    elif rule_id in RULE_MINUTES:
        base = RULE_MINUTES[rule_id]
    else:
        base = FAMILY_MINUTES.get(rule_id[:3], DEFAULT_MINUTES)
    return base * CONTEXT_FACTOR.get(context, 1.0) * SEVERITY_FACTOR.get(severity, 1.0)
