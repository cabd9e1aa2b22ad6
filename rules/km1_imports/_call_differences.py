"""Keras 2 names that Keras 3 keeps with a call that means something else.

Found by comparing ``inspect.signature`` of every class and function of
``tf_keras.{losses,metrics,initializers,optimizers}`` (Keras 2.21) with Keras 3.15's:
apart from keywords Keras 3 rejects loudly (``jit_compile=``: KM502), two differences
change numbers silently when only the name is rewritten.
"""

from __future__ import annotations

import ast

from kmigrate.engine import ReferenceSite

_LION = (
    "Keras 2's Lion defaults to learning_rate=1e-4 and Keras 3's to 1e-3: write "
    "`learning_rate=1e-4` (the rate this code trained with) and use `keras.optimizers.Lion`"
)
_SPARSE_CCE = (
    "its fourth parameter is `axis` in Keras 2 and `ignore_class` in Keras 3: pass "
    "`axis=` by keyword"
)


def _arguments_unknown(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def call_difference(site: ReferenceSite, legacy: str) -> str | None:
    """Why the call of the Keras 2 name ``legacy`` at ``site`` would compute something
    else under its Keras 3 name, or None."""
    call = site.module.parent_of(site.node)
    if not (isinstance(call, ast.Call) and call.func is site.node):
        return None
    keywords = {k.arg for k in call.keywords}
    if legacy == "optimizers.Lion":
        if _arguments_unknown(call) or (not call.args and "learning_rate" not in keywords):
            return _LION
    elif legacy in (
        "losses.sparse_categorical_crossentropy",
        "metrics.sparse_categorical_crossentropy",
    ):
        if _arguments_unknown(call) or len(call.args) > 3:
            return _SPARSE_CCE
    return None
