"""KM507: TF1 session APIs of the Keras 2 backend."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule

# What each TF1-era backend function becomes in Keras 3.
SESSION_APIS = {
    "K.eval": "read values with `keras.ops.convert_to_numpy(x)` outside traced code",
    "K.function": "build `keras.Model(inputs, outputs)` and call it (or `predict`)",
    "K.placeholder": "use `keras.Input(shape=...)` for symbolic inputs",
    "K.get_session": "there are no sessions in Keras 3; remove it",
    "K.set_session": "there are no sessions in Keras 3; configure devices with `tf.config`",
    "K.get_graph": "there are no graphs to fetch in Keras 3; remove it",
    "K.learning_phase": "pass `training=True/False` to the layer or model call instead",
    "K.set_learning_phase": "pass `training=True/False` to the layer or model call instead",
    "K.learning_phase_scope": "pass `training=True/False` to the layer or model call instead",
    "K.symbolic_learning_phase": "pass `training=True/False` to the call instead",
    "K.manual_variable_initialization": "Keras 3 initializes variables on creation; remove it",
    "tf.compat.v1.keras.backend.get_session": "there are no sessions in Keras 3; remove it",
    "tf.compat.v1.keras.backend.set_session": "there are no sessions in Keras 3; remove it",
}


class BackendSessionApi(Rule):
    id = "KM507"
    name = "backend-session-api"
    summary = "TF1-style backend API (`K.eval`, `K.function`, sessions, learning phase)."
    rationale = (
        "Keras 3 has no sessions, placeholders, backend functions or global learning "
        "phase: code runs eagerly or inside the backend's compiled train step, and "
        "`training=` is an argument of every call."
    )
    fix_safety = "Never rewritten: each use needs a small redesign; the message says which."
    severity = Severity.ERROR
    call_symbols = frozenset(SESSION_APIS)
    examples = [
        Flagged(
            """
            from tensorflow.keras import backend as K

            def features(model, x):
                K.set_learning_phase(0)
                extract = K.function([model.input], [model.layers[-2].output])
                return extract([x])[0]
            """
        ),
        Clean(
            """
            import keras

            def features(model, x):
                extract = keras.Model(model.inputs, model.layers[-2].output)
                return extract(x, training=False)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        yield Report(
            site, f"`{site.symbol}` does not exist in Keras 3: {SESSION_APIS[site.symbol]}"
        )
