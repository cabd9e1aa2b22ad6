"""`kmigrate parity`: run one model on several Keras backends and compare the numbers.

The parent process (this package, minus `worker`) never imports TensorFlow, Keras, JAX or
PyTorch; each backend runs in its own subprocess (`kmigrate.parity.worker`). Use
`run_parity(...)` from Python; the names below are imported lazily so that importing the
package stays cheap.
"""

from __future__ import annotations

__all__ = ["ParityOptions", "ParityReport", "ParityUsageError", "run_parity"]

_HOMES = {
    "ParityOptions": "kmigrate.parity.plan",
    "ParityUsageError": "kmigrate.parity.plan",
    "ParityReport": "kmigrate.parity.report",
    "run_parity": "kmigrate.parity.runner",
}


def __getattr__(name: str):
    if name in _HOMES:
        import importlib  # noqa: PLC0415

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'kmigrate.parity' has no attribute '{name}'")
