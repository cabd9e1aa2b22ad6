"""KM511: `Lambda` layers without `output_shape`, whose shape Keras 3 infers; and an
`output_shape` Keras 2 never used that Keras 3 takes as it is written.

Keras 2 (tf.keras, tf_keras) built a functional model by running a `Lambda`'s function on
symbolic tensors: the output's shape is the traced one, and `output_shape` is not read
there. Keras 3 reads `output_shape` when it is given: a `None` written where the traced
shape has a size becomes an unknown dimension (a `Dense` after it cannot build: "Shapes
used to initialize variables must be fully-defined"), and a list raises TypeError ("can
only concatenate tuple (not "TrackedList") to tuple"), on every backend. Without the
argument Keras 3 traces the function, as Keras 2 did.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.namespaces import in_keras_namespaces

# Keras 2 and Keras 3: Lambda(function, output_shape=None, mask=None, arguments=None)
_POSITIONAL = ("function", "output_shape", "mask", "arguments")


class LambdaOutputShape(Rule):
    id = "KM511"
    name = "lambda-output-shape"
    summary = "`Lambda` layer without `output_shape`; it is inferred and hard to reload."
    rationale = (
        "Keras 3 infers a `Lambda`'s output shape by tracing the function on a symbolic "
        "tensor, which fails if it calls TensorFlow ops (use `keras.ops`). A `.keras` file "
        "with a `Lambda` only reloads with `load_model(..., safe_mode=False)` because the "
        "function is stored as bytecode; a small custom layer avoids both issues."
    )
    fix_safety = (
        "A missing `output_shape` is informational. An `output_shape` written as a list, "
        "or as a tuple (or a lambda returning one) with `None` in it, is removed: Keras 2 "
        "never read it in a functional model (the traced shape won), and without it Keras 3 "
        "traces the function the same way. Other `output_shape` values are left as written."
    )
    severity = Severity.INFO
    call_symbols = in_keras_namespaces("layers.Lambda", "layers.core.Lambda")
    examples = [
        Flagged(
            """
            from tensorflow import keras

            double = keras.layers.Lambda(lambda t: t * 2)
            """
        ),
        Flagged(
            """
            from tensorflow import keras

            first = keras.layers.Lambda(lambda t: t[:, 0], output_shape=(None,))
            pairs = keras.layers.Lambda(lambda t: t[:, :2], lambda s: (s[0], 2, None))
            """,
            """
            from tensorflow import keras

            first = keras.layers.Lambda(lambda t: t[:, 0])
            pairs = keras.layers.Lambda(lambda t: t[:, :2])
            """,
        ),
        Clean(
            """
            import keras

            double = keras.layers.Lambda(lambda t: t * 2, output_shape=(8,))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.has_star_args:
            return
        given = site.arg(1, "output_shape")
        if given is not None:
            if _ignored_by_keras2_misread_by_keras3(given):
                yield _drop_output_shape(site, given)
            return
        yield Report(
            site,
            "`Lambda` without `output_shape`: Keras 3 infers it by tracing the function "
            "(use `keras.ops` inside); reloading a `.keras` file with it needs "
            "`safe_mode=False`, a custom layer does not",
        )


def _has_none(node: ast.expr) -> bool:
    """A `None` among the entries of a literal tuple/list (one level of nesting: the
    shapes of a multi-output function)."""
    if not isinstance(node, (ast.Tuple, ast.List)):
        return False
    return any((isinstance(e, ast.Constant) and e.value is None) or _has_none(e) for e in node.elts)


def _ignored_by_keras2_misread_by_keras3(node: ast.expr) -> bool:
    """A list, or a tuple with `None` in it, written or returned by a lambda."""
    if isinstance(node, ast.Lambda):
        node = node.body
    return isinstance(node, ast.List) or _has_none(node)


def _drop_output_shape(site: CallSite, given: ast.expr) -> Report:
    args = [
        ArgOut(i, keyword=None if i == 0 else _POSITIONAL[i] if i < 4 else None)
        for i in range(len(site.args))
        if site.args[i] is not given
    ]
    args += [ArgOut(k, keyword=k) for k in site.keywords if k != "output_shape"]
    written = site.module.node_text(given)
    return Report(
        site,
        f"`output_shape={written}`: Keras 2 traced the function and never read it in a "
        "functional model; Keras 3 takes it as written, so a `None` becomes an unknown "
        "dimension where the traced shape has a size (a Dense after it cannot build) and a "
        "list raises TypeError; remove it and Keras 3 traces the function as Keras 2 did "
        "(or write the real sizes as a tuple)",
        fix=EditPlan((CallEdit(site.span, None, tuple(args)),)),
        severity=Severity.ERROR,
    )
