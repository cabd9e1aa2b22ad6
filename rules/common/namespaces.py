"""The three prefixes under which legacy code reaches the Keras 2 API.

``tf.keras`` (TensorFlow's bundled Keras), ``keras`` (standalone Keras 2, and Keras 3 for
code already moved) and ``tf_keras`` (the Keras 2 package TensorFlow 2.16+ points to). A
rule that matches one spelling must match all three, so the list lives in one place.
"""

from __future__ import annotations

KERAS_NAMESPACES = ("tf.keras.", "keras.", "tf_keras.")


def in_keras_namespaces(*paths: str) -> frozenset[str]:
    """Each dotted ``path`` (``"optimizers.Adam"``) under every Keras namespace."""
    return frozenset(ns + path for ns in KERAS_NAMESPACES for path in paths)
