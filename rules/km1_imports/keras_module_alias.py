"""KM110: ``sys.modules['keras'] = tf.keras``, Keras 2 code's switch to tf.keras.

Projects that ran on standalone Keras and on tf.keras (bert4keras: ``if TF_KERAS:
sys.modules['keras'] = tf.keras``) made every later ``import keras`` load tf.keras. Under
Keras 3 (TensorFlow 2.16+) ``tf.keras`` is a lazy alias that loads ``keras`` itself, so
the next ``import keras`` resolves the alias through the alias and recurses until
``RecursionError``, on every backend, before any model code runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import EditPlan, ModuleInfo, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import module_site

_BLOCKS = ("body", "orelse", "finalbody")


def _aliases(module: ModuleInfo) -> Iterable[ast.Assign]:
    """``sys.modules["keras"] = tf.keras`` statements (any spelling of both names)."""
    if "modules" not in module.text:
        return
    for node in module.nodes(ast.Assign):
        if len(node.targets) != 1:  # type: ignore[attr-defined]
            continue
        target = node.targets[0]  # type: ignore[attr-defined]
        if (
            isinstance(target, ast.Subscript)
            and module.resolver.resolve(target.value) == "sys.modules"
            and isinstance(target.slice, ast.Constant)
            and target.slice.value == "keras"
            and module.resolve(node.value) == "tf.keras"  # type: ignore[attr-defined]
        ):
            yield node  # type: ignore[misc]


def _only_statement(module: ModuleInfo, statement: ast.stmt) -> bool:
    """Whether ``statement`` is the whole body of its block (removing it needs a ``pass``)."""
    parent = module.parent_of(statement)
    return any(getattr(parent, field, None) == [statement] for field in _BLOCKS)


class KerasModuleAlias(Rule):
    id = "KM110"
    name = "keras-module-alias"
    summary = "`sys.modules['keras'] = tf.keras` makes `import keras` recurse under Keras 3."
    rationale = (
        "Code written for standalone Keras and tf.keras switched with "
        "`sys.modules['keras'] = tf.keras`, so that `import keras` loaded tf.keras. With "
        "Keras 3 `tf.keras` is a lazy alias that imports `keras`: the next `import keras` "
        "finds the alias, which looks `keras` up again, until RecursionError, on every "
        "backend. After the migration `import keras` is Keras 3, the library tf.keras "
        "stands for, so the switch has nothing left to do."
    )
    fix_safety = (
        "The statement is removed (`pass` where it was a block's only statement): "
        "`import keras` then loads Keras 3. The one difference from tf.keras under Keras 3 "
        "is `keras.backend`, whose Keras 2 functions (`K.mean`) tf.keras kept: kmigrate "
        "rewrites or reports every call of them."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import os
            import sys

            import tensorflow as tf

            if os.environ.get("TF_KERAS") == "1":
                sys.modules["keras"] = tf.keras

            import keras
            """,
            """
            import os

            if os.environ.get("TF_KERAS") == "1":
                pass

            import keras
            """,
        ),
        Clean(
            """
            import sys

            import keras

            sys.modules["my_keras"] = keras
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        for statement in _aliases(module):
            span = module.span_of(statement)
            text = "pass" if _only_statement(module, statement) else ""
            yield Report(
                module_site(module, statement),
                f"`{module.node_text(statement)}` makes `import keras` load tf.keras; under "
                "Keras 3 `tf.keras` is a lazy alias that imports `keras` itself, so the next "
                "`import keras` recurses until RecursionError, on every backend. After the "
                "migration `import keras` is Keras 3: the line is removed",
                fix=EditPlan((ReplaceNode(span, text, kind="stmt"),), "remove the alias"),
            )
