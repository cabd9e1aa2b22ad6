"""KM208: a Keras 2 library's backend package that imports one module per backend,
chosen by ``K.backend()``: the TensorFlow branch is the one Keras 2 ran."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, Node, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.backend_dispatch import kept_imports


class BackendDispatchImports(Rule):
    id = "KM208"
    name = "backend-dispatch-imports"
    summary = (
        "Module-level imports chosen by `K.backend()` (`if K.backend() == 'tensorflow': "
        "from .tensorflow_backend import *`): Keras 3 takes no branch on JAX or PyTorch."
    )
    rationale = (
        "Keras 2 libraries (keras-contrib's `keras_contrib.backend`) kept one module of "
        "backend functions per backend and star-imported the one `K.backend()` named. "
        "Keras 2 on TensorFlow (tf.keras, tf_keras, Keras 2.4 and later) always answered "
        "'tensorflow'; Keras 3 answers 'jax' or 'torch' there, no branch is taken, and "
        "every function of the package is missing (AttributeError in the layer that "
        "calls it). kmigrate rewrites the TensorFlow module to keras.ops like any other "
        "model code, so that branch serves every backend."
    )
    fix_safety = (
        "Exact: the chain becomes the imports of its 'tensorflow' branch, the only one "
        "Keras 2 on TensorFlow ran. Only a module-level chain whose every test compares "
        "`K.backend()` with a string and whose branches hold nothing but imports; what "
        "the kept module still needs from TensorFlow is reported there."
    )
    severity = Severity.ERROR
    visit_types = (ast.If,)
    examples = [
        Flagged(
            """
            from keras import backend as K

            if K.backend() == 'theano':
                from .theano_backend import *
            elif K.backend() == 'tensorflow':
                from .tensorflow_backend import *
            """,
            """
            from .tensorflow_backend import *
            """,
        ),
        Clean(
            """
            import os

            if os.environ.get("NETS_BACKEND") == "numpy":
                from .numpy_backend import *
            else:
                from .tensorflow_backend import *
            """
        ),
        Clean(
            """
            from keras import backend as K

            if K.backend() == 'tensorflow':
                import tensorflow as tf
                SESSION = tf.compat.v1.Session()  # not only imports: left as it is
            """
        ),
    ]

    def check_node(self, site: Node) -> Iterable[Report]:
        chain = site.node
        if not isinstance(chain, ast.If):
            return
        kept = kept_imports(site.module, chain)
        if kept is None:
            return
        text = "\n".join(site.module.node_text(statement) for statement in kept)
        yield Report(
            site,
            "these imports depend on `K.backend()`, which Keras 2 on TensorFlow always "
            "answered 'tensorflow' and Keras 3 answers 'jax' or 'torch' there (no branch, "
            "so the imported names are missing): keep the 'tensorflow' branch's imports",
            fix=EditPlan((ReplaceNode(site.span, text, kind="compound"),), "tensorflow branch"),
        )
