"""KM521: ``K.is_tensor``, gone from Keras 3's backend module."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule


class BackendIsTensor(Rule):
    id = "KM521"
    name = "backend-is-tensor"
    summary = "`K.is_tensor(x)`: Keras 3's backend module has no `is_tensor`."
    rationale = (
        "`K.is_tensor` is standalone Keras 2's (up to 2.3): `tf.keras.backend` and tf_keras "
        "never had it and Keras 3's `keras.backend` has none, so the call raises "
        "AttributeError on every backend. Its nearest Keras 3 form, "
        "`keras.ops.is_tensor(x)`, answers for the current backend's own tensors: it is "
        "False for the symbolic `keras.KerasTensor` a functional model is built from, "
        "where Keras 2's `K.is_tensor` said True, so a branch on it can take the other way "
        "while the model is built."
    )
    fix_safety = (
        "Reported (no Keras 2 runtime with `K.is_tensor` to prove a helper against): use "
        "`keras.ops.is_tensor(x)` where only real tensors reach the code, and add "
        "`or isinstance(x, keras.KerasTensor)` where symbolic inputs must count too."
    )
    severity = Severity.ERROR
    call_symbols = frozenset({"K.is_tensor"})
    examples = [
        Flagged(
            """
            from tensorflow.keras import backend as K

            def as_tensor(x):
                return x if K.is_tensor(x) else K.constant(x)
            """
        ),
        Clean(
            """
            import keras

            def as_tensor(x):
                return x if keras.ops.is_tensor(x) else keras.ops.convert_to_tensor(x)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        yield Report(
            site,
            "`K.is_tensor` does not exist in Keras 3: use `keras.ops.is_tensor(x)` (True for "
            "the backend's tensors only) and add `or isinstance(x, keras.KerasTensor)` where "
            "symbolic inputs of a functional model must count, as they did in Keras 2",
        )
