"""Legacy HDF5 model configs Keras 3 cannot rebuild, found before TensorFlow is imported.

Keras 3's legacy loader recurses through ``model_config`` and looks every layer class
up by name. Two kinds of files therefore ended `convert-weights` in a raw traceback:

- a config nested absurdly deep (a broken or hostile file): ``RecursionError``, in
  ``json`` already or in Keras's deserializer;
- a Keras 2 functional model that applied a TensorFlow op to a Keras tensor
  (``tf.math.multiply(hidden, 2.0)``): Keras 2 wrapped it in a ``TFOpLambda`` (or
  ``SlicingOpLambda``) layer, which names the TF function by string and which Keras 3
  does not have. Mapping it onto ``keras.ops`` is not exact in general (dtypes,
  broadcasting, defaults differ; see the ops catalog), so it is refused with the
  layers and ops named and the way out: rebuild the model from its code.

Read with h5py and json only: nothing is deserialized, nothing imported.
"""

from __future__ import annotations

import json
from pathlib import Path

# Far deeper than any real model (a functional model nested in a functional model adds
# about four levels), far shallower than what makes Keras's recursive loader fail.
MAX_CONFIG_DEPTH = 200

# Keras 2 layers that hold a TensorFlow function by name; Keras 3 has no such layer.
TF_OP_LAYERS = ("TFOpLambda", "SlicingOpLambda")

REBUILD_HINT = (
    "rebuild the model from its code in Keras 3 (kmigrate apply rewrites such tf.* calls "
    "into keras.ops where that is exact), save the weights alone from the legacy code "
    "(model.save_weights('w.h5')), then kmigrate convert-weights w.h5 NEW --module "
    "pkg.models:build_model"
)


def config_problems(path: Path) -> list[str]:
    """Why Keras 3 cannot rebuild the model ``path`` stores; empty when nothing is
    known to stop it. Only HDF5 model files have a config to read."""
    import h5py

    raw = None
    with h5py.File(path, "r") as handle:
        raw = handle.attrs.get("model_config")
    if raw is None:
        return []
    try:
        config = json.loads(raw.decode("utf-8") if hasattr(raw, "decode") else raw)
    except RecursionError:
        return [f"its model_config is nested more than {MAX_CONFIG_DEPTH} levels deep"]
    except ValueError as error:
        return [f"its model_config is not JSON ({error})"]
    depth, ops = _walk(config)
    if depth > MAX_CONFIG_DEPTH:
        return [f"its model_config is nested more than {MAX_CONFIG_DEPTH} levels deep"]
    if ops:
        shown = ", ".join(layer if layer == op else f"{layer} ({op})" for layer, op in ops[:5])
        more = f" and {len(ops) - 5} more" if len(ops) > 5 else ""
        return [
            f"it applies TensorFlow ops to Keras tensors, stored as Keras 2 TFOpLambda "
            f"layers that Keras 3 does not have: {shown}{more}; {REBUILD_HINT}"
        ]
    return []


def _walk(config: object) -> tuple[int, list[tuple[str, str]]]:
    """The nesting depth of ``config`` (iteratively: it may be deeper than Python's
    stack) and the (layer name, TF function) of every TF-op layer in it."""
    deepest = 0
    ops: list[tuple[str, str]] = []
    stack: list[tuple[object, int]] = [(config, 1)]
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_CONFIG_DEPTH:
            break
        if isinstance(value, dict):
            inner = value.get("config")
            if value.get("class_name") in TF_OP_LAYERS and isinstance(inner, dict):
                ops.append((str(inner.get("name", "?")), f"tf.{inner.get('function', '?')}"))
            stack += [(item, depth + 1) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, depth + 1) for item in value]
    return deepest, sorted(ops)
