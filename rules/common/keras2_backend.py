"""Keras 2 backend functions that are gone once Keras 3 is installed, wherever they run.

Keras 3's ``keras.backend`` keeps only configuration functions (``floatx``, ``epsilon``,
``image_data_format``, ``clear_session``...); the Keras 2 math (``K.cast``, ``K.sum``,
``K.shape``...) is not there. Outside model code, the ops rules leave a TensorFlow call
alone because TensorFlow still runs it after the migration; a ``K.*`` function is not a
TensorFlow call: it raises ``AttributeError`` as soon as the import gives Keras 3, in a
``tf.data`` pipeline as in a model. Two imports keep Keras 2's backend while they stay:
the ``tf_keras`` package and TensorFlow's private copy ``tensorflow.python.keras`` (the
import rules change those only once every use exists in Keras 3).
"""

from __future__ import annotations

import ast

from kmigrate.engine import CallSite, ReferenceSite
from kmigrate.rules.common.keras_api import keras3_reference

# Imports under which Keras 2's backend stays Keras 2 after the migration.
_KERAS2_KEPT = ("tf_keras.", "tensorflow.python.keras.")


def removed_backend_function(site: CallSite | ReferenceSite) -> str | None:
    """The name (``"cast"``) when ``site`` reads a Keras 2 backend function that Keras 3's
    ``keras.backend`` lacks, through an import that gives Keras 3 once migrated
    (``keras``, ``tf.keras``); None otherwise."""
    symbol = site.symbol or ""
    if not symbol.startswith("K."):
        return None
    name = symbol[2:].partition(".")[0]
    if keras3_reference("backend." + name) is not None:
        return None
    node: ast.AST = site.node.func if isinstance(site, CallSite) else site.node  # type: ignore[attr-defined]
    written = site.module.resolver.resolve(node) or ""  # type: ignore[arg-type]
    if not written or written.startswith(_KERAS2_KEPT):
        return None
    return name
