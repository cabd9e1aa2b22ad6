"""What several KM6xx rules share: the portable alternative to a TensorFlow training loop."""

from __future__ import annotations

TRAINING_LOOP_ALTERNATIVE = (
    "use `model.fit` (override `train_step` for custom logic), or keep this loop in a "
    "TensorFlow-only module"
)
