"""Where a Keras 2 / ``tf.keras`` name lives in Keras 3, from a generated list of the
public Keras 3 API (``rules/data/keras3_api.txt``), so a scan never imports Keras.
"""

from __future__ import annotations

import functools
from pathlib import Path

_API_FILE = Path(__file__).parent.parent / "data" / "keras3_api.txt"

# Keras 2 module paths that moved; first matching prefix wins. A target of None
# means the namespace is gone in Keras 3 (the note says what replaces it).
MOVED_NAMESPACES: tuple[tuple[str, str | None], ...] = (
    ("layers.experimental.preprocessing.", "layers."),
    ("layers.experimental.", "layers."),
    ("engine.base_layer.", ""),
    ("engine.training.", ""),
    ("engine.sequential.", ""),
    ("engine.functional.", ""),
    ("engine.input_layer.", ""),
    ("engine.input_spec.", ""),
    ("engine.topology.", ""),
    ("engine.", ""),
    ("wrappers.scikit_learn.", None),
    ("feature_column.", None),
    ("estimator.", None),
)

# Names that are gone with no automatic replacement, and what to do instead.
REMOVED_NOTES: dict[str, str] = {
    "layers.CuDNNLSTM": "use keras.layers.LSTM; it picks the cuDNN kernel itself where it can",
    "layers.CuDNNGRU": "use keras.layers.GRU; it picks the cuDNN kernel itself where it can",
    "layers.experimental.SyncBatchNormalization": (
        "use keras.layers.BatchNormalization(synchronized=True)"
    ),
    "layers.DenseFeatures": "feature columns are gone; use preprocessing layers or tf.data",
    "wrappers.scikit_learn": "the scikit-learn wrappers moved to the scikeras package",
    "feature_column": "feature columns are gone; use preprocessing layers or tf.data",
    "estimator": "tf.estimator is gone; use keras.Model with fit()",
}


@functools.lru_cache(maxsize=1)
def keras3_api() -> frozenset[str]:
    """Public names of Keras 3 (``keras.layers.Dense``...), modules included."""
    lines = _API_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


@functools.lru_cache(maxsize=1)
def top_level_modules() -> frozenset[str]:
    """Keras 3's own top-level modules (``activations``, ``backend``, ``layers``...)."""
    api = keras3_api()
    return frozenset(
        name.split(".")[1] for name in api if name.count(".") >= 2 and name.rsplit(".", 1)[0] in api
    )


@functools.lru_cache(maxsize=1)
def _modules() -> frozenset[str]:
    """Every dotted prefix that has public names under it (``keras``, ``keras.layers``)."""
    found = set()
    for name in keras3_api():
        parts = name.split(".")
        found.update(".".join(parts[:end]) for end in range(1, len(parts)))
    return frozenset(found)


def is_module(path: str) -> bool:
    """Whether ``keras.<path>`` is a Keras 3 module (it has public names under it)."""
    return (f"keras.{path}" if path else "keras") in _modules()


def exists(path: str) -> bool:
    """Whether ``keras.<path>`` is public Keras 3 API (``path=""`` is ``keras``)."""
    return path == "" or f"keras.{path}" in keras3_api()


def keras3_path(path: str) -> str | None:
    """The Keras 3 path (relative to ``keras.``) of a legacy one, or None if there is none.

    ``layers.experimental.preprocessing.Rescaling`` -> ``layers.Rescaling``;
    ``layers.core.Dense`` -> ``layers.Dense``; ``utils.np_utils.to_categorical`` ->
    ``utils.to_categorical``.
    """
    if exists(path):
        return path
    for old, new in MOVED_NAMESPACES:
        if path.startswith(old):
            if new is None:
                return None
            candidate = new + path[len(old) :]
            if exists(candidate):
                return candidate
            break
    parts = path.split(".")
    if parts[0] == "src":
        return None  # Keras 3's own private modules: not a Keras 2 path to move
    for cut in range(1, len(parts)):
        # `layers.activations.serialize`: Keras 2 re-exported the `activations` module
        # inside `layers`; the function is `activations.serialize`, never the layer
        # serializer `layers.serialize` that the rule below would pick.
        if parts[cut] in top_level_modules() and exists(".".join(parts[cut:])):
            return ".".join(parts[cut:])
    inner_module = any(p in top_level_modules() for p in parts[1:-1])
    if inner_module and not parts[-1][:1].isupper():
        return None  # a function of that inner module, absent from Keras 3
    if len(parts) >= 3:  # keras.layers.core.Dense -> keras.layers.Dense
        candidate = f"{parts[0]}.{parts[-1]}"
        if exists(candidate):
            return candidate
    if len(parts) >= 2 and exists(parts[-1]) and parts[0] in ("engine", "models"):
        return parts[-1]
    return None


def keras3_reference(path: str) -> str | None:
    """Like :func:`keras3_path`, but also maps attribute access on a public class:
    ``Model.__module__`` -> ``Model.__module__``, ``layers.Layer.__init__`` ..."""
    target = keras3_path(path)
    if target is not None:
        return target
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if not parts[cut - 1][:1].isupper():
            continue  # only classes have attributes we cannot list
        head = keras3_path(".".join(parts[:cut]))
        if head is not None:
            return ".".join([head, *parts[cut:]])
    return None


def removal_note(path: str) -> str:
    """Advice for a legacy path with no Keras 3 equivalent."""
    for prefix, note in REMOVED_NOTES.items():
        if path == prefix or path.startswith(prefix + "."):
            return note
    return "it has no equivalent in Keras 3; see the Keras 3 migration guide"
