"""What a legacy saved model carries besides arrays: Python code (a ``Lambda`` layer's
marshalled bytecode, a custom object's module), found without running anything, and the
refusal `kmigrate convert-weights` gives unless the user trusts the file (--trust).
Read with h5py and json only: no TensorFlow or Keras import, nothing deserialized."""

from __future__ import annotations

import json
from pathlib import Path

TRUST_HINT = (
    "pass --trust only if you trust where the file comes from (docs/security.md); "
    "otherwise rebuild the model from its code with --module pkg.models:build_model "
    "and convert the weights alone"
)


def carried_code(path: Path, kind: str) -> list[str]:
    """Why loading OLD would run code that came with it; empty when it is data only.

    - an HDF5 model whose config holds a ``Lambda`` with a Python ``lambda``: Keras
      stores its marshalled bytecode, and rebuilds and runs it when the model is
      loaded and called;
    - a SavedModel: its TensorFlow graphs are programs (their ops can read and write
      files) that run when the model is restored and called.

    Weights-only HDF5 files are arrays and names. Read with h5py and json only: no
    TensorFlow or Keras import, nothing deserialized.
    """
    if kind == "savedmodel":
        return [
            f"{path} is a SavedModel: its TensorFlow graphs are programs (their ops can "
            "read and write files) that run when it is loaded and called"
        ]
    if kind != "h5-model":
        return []
    import h5py

    reasons: list[str] = []
    with h5py.File(path, "r") as handle:
        for attribute in ("model_config", "training_config"):
            raw = handle.attrs.get(attribute)
            if raw is None:
                continue
            try:
                config = json.loads(raw.decode("utf-8") if hasattr(raw, "decode") else raw)
            except (ValueError, RecursionError):  # nested absurdly deep: not checkable
                reasons.append(f"its {attribute} is not JSON, so it cannot be checked")
                continue
            reasons += [
                f"layer {name!r} is a Lambda holding serialized Python bytecode"
                for name in _python_lambdas(config)
            ]
    return reasons


def _python_lambdas(config: object) -> list[str]:
    """Names of the layers in a Keras config (at any depth: wrappers, nested models)
    whose function or output shape is stored as Python bytecode, in Keras 2's form
    (``function_type: "lambda"``) or Keras 3's (``class_name: "__lambda__"``)."""
    found: set[str] = set()
    stack: list[tuple[object, str]] = [(config, "?")]
    while stack:
        value, layer = stack.pop()
        if isinstance(value, dict):
            inner = value.get("config")
            if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                layer = inner["name"]
            if (
                value.get("function_type") == "lambda"
                or value.get("output_shape_type") == "lambda"
                or value.get("class_name") == "__lambda__"
            ):
                found.add(layer)
            stack += [(item, layer) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, layer) for item in value]
    return sorted(found)
