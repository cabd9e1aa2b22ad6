"""KM208: a Keras 2 library's backend package that imports one module per backend,
chosen by ``K.backend()``: the TensorFlow branch is the one Keras 2 ran."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, Node, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule

# The backend Keras 2 code ran on: tf.keras, tf_keras and Keras 2.4+ are TensorFlow-only.
_KERAS2_BACKEND = "tensorflow"


def _backend_compared(site: Node, test: ast.expr) -> str | None:
    """The name in ``K.backend() == "name"`` (either side), else None."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
    ):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    is_backend_call = (
        isinstance(left, ast.Call)
        and not left.args + left.keywords
        and site.module.resolve(left.func) == "K.backend"
    )
    if is_backend_call and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return right.value
    return None


def _branches(site: Node, chain: ast.If) -> list[tuple[str | None, list[ast.stmt]]] | None:
    """The chain's branches as (backend name, body); None for a final ``else``. None when a
    test is something other than a ``K.backend()`` comparison."""
    branches: list[tuple[str | None, list[ast.stmt]]] = []
    node: ast.If = chain
    while True:
        name = _backend_compared(site, node.test)
        if name is None:
            return None
        branches.append((name, node.body))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if node.orelse:
            branches.append((None, node.orelse))
        return branches


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
        if not isinstance(chain, ast.If) or site.module.parent_of(chain) is not site.module.tree:
            return
        branches = _branches(site, chain)
        if branches is None:
            return
        kept = [body for name, body in branches if name == _KERAS2_BACKEND]
        only_imports = all(
            isinstance(statement, (ast.Import, ast.ImportFrom))
            for _, body in branches
            for statement in body
        )
        if len(kept) != 1 or not only_imports:
            return
        text = "\n".join(site.module.node_text(statement) for statement in kept[0])
        yield Report(
            site,
            "these imports depend on `K.backend()`, which Keras 2 on TensorFlow always "
            "answered 'tensorflow' and Keras 3 answers 'jax' or 'torch' there (no branch, "
            "so the imported names are missing): keep the 'tensorflow' branch's imports",
            fix=EditPlan((ReplaceNode(site.span, text, kind="compound"),), "tensorflow branch"),
        )
