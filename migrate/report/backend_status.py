"""What the report says about how the project picks its Keras backend: the pins the
project's files hold (:class:`~kmigrate.engine.run_data.BackendPin`, found by
:mod:`kmigrate.project.backend_pins`), read as a headline and advice."""

from __future__ import annotations

from dataclasses import dataclass

from kmigrate.engine.run_data import BACKEND_VARIABLE, LEGACY_VARIABLE, BackendPin


def sets_backend(pin: BackendPin) -> bool:
    """Whether the pin chooses a backend (rather than forcing Keras 2)."""
    return pin.variable in (BACKEND_VARIABLE, "keras.json")


@dataclass(frozen=True)
class BackendStatus:
    """What the report says about backend selection."""

    pins: tuple[BackendPin, ...]

    @property
    def backends(self) -> list[str]:
        return sorted({p.value for p in self.pins if sets_backend(p) and p.value})

    @property
    def pinned(self) -> bool:
        return any(sets_backend(p) for p in self.pins)

    @property
    def legacy_keras(self) -> bool:
        return any(
            p.variable == LEGACY_VARIABLE and p.value.lower() in ("1", "true", "yes")
            for p in self.pins
        )

    @property
    def headline(self) -> str:
        if not self.pinned:
            return "not pinned: set KERAS_BACKEND explicitly"
        values = ", ".join(self.backends) or "a value computed at run time"
        return f"pinned ({values})"

    def advice(self) -> list[str]:
        notes: list[str] = []
        if not self.pinned:
            notes.append(
                "No KERAS_BACKEND found. Keras 3 then uses ~/.keras/keras.json or falls back "
                "to TensorFlow, so every machine may run a different backend. Set KERAS_BACKEND "
                "explicitly in CI and Dockerfiles, and test each backend you support (a CI "
                "matrix over tensorflow, jax and torch)."
            )
        else:
            if len(self.backends) == 1:
                notes.append(
                    f"Only the {self.backends[0]} backend is pinned. Add a CI job per backend "
                    "you mean to support, so the code stays portable."
                )
            if any(p.kind in ("code", "notebook") and sets_backend(p) for p in self.pins):
                notes.append(
                    "KERAS_BACKEND is set from code: it only works before the first "
                    "`import keras`. Prefer setting it in the environment (CI, Dockerfile), so "
                    "the same code runs on every backend."
                )
        if self.legacy_keras:
            notes.append(
                "TF_USE_LEGACY_KERAS=1 makes tf.keras Keras 2 (tf_keras): remove it once the "
                "code is migrated, or the migration is never tested."
            )
        return notes

    def to_json(self) -> dict[str, object]:
        return {
            "pinned": self.pinned,
            "backends": self.backends,
            "legacy_keras": self.legacy_keras,
            "pins": [p.to_json() for p in self.pins],
            "advice": self.advice(),
        }
