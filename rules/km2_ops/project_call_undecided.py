"""KM206: model code calls a project function that resolution cannot pin to one
definition (one version per backend, chosen by star imports when a module runs)."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity, dotted_parts
from kmigrate.rules.base import Clean, Flagged, Report, Rule

# A Keras 2 library's own backend package: one module per backend, star-imported by the
# package when it is imported (keras-contrib's `keras_contrib.backend` has this shape).
_BACKENDS = {
    "nets/__init__.py": "",
    "nets/backend/__init__.py": """
        import os

        if os.environ.get("NETS_BACKEND") == "numpy":
            from .numpy_backend import *
        else:
            from .tensorflow_backend import *
        """,
    "nets/backend/tensorflow_backend.py": """
        import tensorflow as tf


        def fold(x, block):
            return tf.nn.space_to_depth(x, block)
        """,
    "nets/backend/numpy_backend.py": """
        import numpy as np


        def fold(x, block):
            n, h, w, c = x.shape
            x = x.reshape(n, h // block, block, w // block, block, c)
            return x.transpose(0, 1, 3, 2, 4, 5).reshape(n, h // block, w // block, -1)
        """,
}


class ProjectCallUndecided(Rule):
    id = "KM206"
    name = "project-call-undecided"
    summary = (
        "Model code calls a project function defined once per backend (star imports "
        "chosen when a module runs), so which one runs cannot be told from the code."
    )
    rationale = (
        "Keras 2 libraries kept one module of backend functions per backend and let "
        "their backend package star-import the right one at import time (`if "
        "K.backend() == 'tensorflow': from .tensorflow_backend import *`). Keras 3 has "
        "no Theano or CNTK and picks JAX or PyTorch the same way, so such a choice can "
        "leave the name unbound or run the TensorFlow version on another backend. "
        "kmigrate analyses every candidate as model code, but the call itself needs a "
        "person: without a finding the layer would look portable."
    )
    fix_safety = (
        "Never rewritten: the choice between definitions is made when the program runs. "
        "Keep one version written with keras.ops (it serves every backend) and import "
        "it directly."
    )
    severity = Severity.WARNING
    contexts = frozenset({Context.MODEL})
    wants_undecided_calls = True
    examples = [
        Flagged(
            """
            from tensorflow import keras

            from nets import backend as NB


            class Fold(keras.layers.Layer):
                def call(self, x):
                    return NB.fold(x, 2)
            """,
            project=_BACKENDS,
        ),
        Clean(
            """
            from nets import backend as NB


            def preview(images):
                return NB.fold(images, 2)  # not model code
            """,
            project=_BACKENDS,
        ),
        Clean(
            """
            from tensorflow import keras

            from nets.backend.tensorflow_backend import fold


            class Fold(keras.layers.Layer):
                def call(self, x):
                    return fold(x, 2)  # one definition: its own findings say what to port
            """,
            project=_BACKENDS,
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        callee = ".".join(dotted_parts(site.node.func) or ())  # type: ignore[attr-defined]
        facts = site.module.project_facts
        why = dict(facts.undecided_calls).get(callee) if facts is not None else None
        if why is None:
            return
        yield Report(
            site,
            f"`{callee}` is not one function kmigrate can follow: {why}. Each "
            "definition is analysed as model code (see its findings), but the choice "
            "between them is made at run time and must work on every Keras 3 backend: "
            "keep one version written with keras.ops and import it directly",
            symbol=callee,
        )
