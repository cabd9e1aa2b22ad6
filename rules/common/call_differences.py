"""Keras names that Keras 3 keeps with a call that means something else.

Found by comparing ``inspect.signature`` of every class and function of
``tf_keras.{losses,metrics,initializers,optimizers}`` (Keras 2.21) with Keras 3.15's:
apart from keywords Keras 3 rejects loudly (``jit_compile=``: KM502), two differences
change numbers silently when only the name is rewritten. ``keras_core``, Keras 3's
preview, shares one of them: before 0.1.6 its ``sparse_categorical_crossentropy`` took
``axis`` fourth too (its Lion, from 0.1.4, already defaulted to 1e-3).

Every rewrite that moves such a name to Keras 3 asks here first: KM101 renaming
``tf.keras.optimizers.Lion``, and the import swaps (KM102, KM103, KM104, KM106) for each
use of the name they bind (``rules/common/module_escapes.py``). The table is keyed by the Keras 3
name, so every legacy spelling of it is covered (``optimizers.experimental.Lion``).
Strings are not: Keras 2's ``optimizers.get`` knows no ``"lion"`` (it raises), and Keras
calls a loss named by a string with two arguments only.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from kmigrate.engine import ModuleInfo

KERAS_2 = "Keras 2"
KERAS_CORE = "keras_core"

_LION = (
    "Keras 2's Lion defaults to learning_rate=1e-4 and Keras 3's to 1e-3: write "
    "`learning_rate=1e-4` (the rate this code trained with) and use `keras.optimizers.Lion`"
)
_SPARSE_CCE = (
    "its fourth parameter is `axis` in Keras 2 (and in keras_core before 0.1.6) and "
    "`ignore_class` in Keras 3: pass `axis=` by keyword (Keras 3's TensorFlow backend "
    "takes only axis=-1 and its JAX backend checks shapes as if the classes were last: "
    "with the classes last it runs everywhere)"
)
_UNCALLED = "it is used here without a call whose arguments can be read, and "
# Uses that only look at the class: they compute the same whichever Keras it comes from.
_INSPECTING = frozenset({"isinstance", "issubclass"})
# Keywords whose functions Keras 2 and 3 call as `fn(y_true, y_pred)` (`compile(loss=f)`,
# `metrics=[f]`, in a list or a dict by output too): no fourth argument ever reaches them.
_CALLED_BY_KERAS = frozenset({"loss", "metrics", "weighted_metrics"})


# What the rules that rename or re-import such names say in their fix safety.
SAFETY_NOTE = (
    "A use whose call means something else in Keras 3 stops the rewrite and is reported: "
    "`optimizers.Lion()` without a learning rate (Keras 2 defaults to 1e-4, Keras 3 to "
    "1e-3), `sparse_categorical_crossentropy` with a fourth positional argument (`axis` "
    "in Keras 2, `ignore_class` in Keras 3), or either name used without a call (a loss "
    "or metric handed to `compile` excepted: Keras calls it with two arguments)."
)


def _arguments_unknown(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _rate_unset(call: ast.Call) -> bool:
    keywords = {k.arg for k in call.keywords}
    return _arguments_unknown(call) or (not call.args and "learning_rate" not in keywords)


def _fourth_positional(call: ast.Call) -> bool:
    return _arguments_unknown(call) or len(call.args) > 3


@dataclass(frozen=True)
class _Difference:
    legacies: frozenset[str]  # the Kerases whose call means something else in Keras 3
    differs: Callable[[ast.Call], bool]  # whether a call's arguments meet the difference
    why: str
    keras_calls_it_alike: bool = False  # handed to Keras as a loss or metric, it is exact


_SPARSE_CCE_DIFFERENCE = _Difference(
    frozenset({KERAS_2, KERAS_CORE}), _fourth_positional, _SPARSE_CCE, True
)
_DIFFERENCES = {
    "optimizers.Lion": _Difference(frozenset({KERAS_2}), _rate_unset, _LION),
    "losses.sparse_categorical_crossentropy": _SPARSE_CCE_DIFFERENCE,
    "metrics.sparse_categorical_crossentropy": _SPARSE_CCE_DIFFERENCE,
}


def call_difference(
    module: ModuleInfo, node: ast.expr, target: str, legacy: str = KERAS_2
) -> str | None:
    """Why ``node``, a ``legacy`` Keras name whose Keras 3 name is ``keras.<target>``,
    would compute something else once renamed, or None. A use that is not called right
    there (``cls = Lion``, a base class) hides the arguments of its call, so it differs
    whenever some call could, unless Keras itself calls it (``loss=``)."""
    difference = _DIFFERENCES.get(target)
    if difference is None or legacy not in difference.legacies:
        return None
    parent = module.parent_of(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        return difference.why if difference.differs(parent) else None
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in _INSPECTING
        and node in parent.args[1:]
    ):
        return None
    if difference.keras_calls_it_alike and _handed_to_keras(module, node):
        return None
    return _UNCALLED + difference.why


def _handed_to_keras(module: ModuleInfo, node: ast.expr) -> bool:
    """Whether ``node`` is the value of ``loss=`` or ``metrics=`` (or an element of a
    list, tuple or dict that is)."""
    parent = module.parent_of(node)
    while isinstance(parent, (ast.List, ast.Tuple, ast.Dict)):
        parent = module.parent_of(parent)
    return isinstance(parent, ast.keyword) and parent.arg in _CALLED_BY_KERAS
