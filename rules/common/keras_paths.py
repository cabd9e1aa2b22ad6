"""What several KM1xx rules share: Keras path arithmetic and the porting advice."""

from __future__ import annotations

from kmigrate.rules.common.keras_api import keras3_reference

TF_KERAS = "tensorflow.keras"
# Left to KM5xx, which knows the argument changes of the legacy optimizers.
LEFT_TO_OTHER_RULES = ("optimizers.legacy",)


def legacy_path(qualified: str, root: str) -> str | None:
    """``tensorflow.keras.layers.Dense`` -> ``layers.Dense`` (relative to the keras root)."""
    if qualified == root:
        return ""
    if qualified.startswith(root + "."):
        return qualified[len(root) + 1 :]
    return None


def keras_name(path: str) -> str:
    return f"keras.{path}" if path else "keras"


def format_alias(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname else name


def path_is_portable(path: str) -> bool:
    """Whether ``keras.<path>`` exists in Keras 3 (or is an attribute of a public class)."""
    return keras3_reference(path) is not None


PORT_CALLS = (
    "Port the calls made through it (for example `backend.sigmoid(x)` becomes "
    "`keras.activations.sigmoid(x)`, `backend.mean` becomes `keras.ops.mean`)"
)
PORT_ADVICE = PORT_CALLS + ", then change the import to `keras` by hand"
