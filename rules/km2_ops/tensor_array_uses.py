"""KM207: each use of a ``tf.TensorArray`` that stays, reported at its own line."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.catalog.binding import ManualPortError
from kmigrate.rules.common.catalog.catalog_rule import plan_for
from kmigrate.rules.common.catalog.tensor_array import array_uses


class TensorArrayUses(Rule):
    id = "KM207"
    name = "tensor-array-use"
    summary = "A use (write, read, stack...) of a tf.TensorArray that kmigrate cannot convert."
    rationale = (
        "A TensorArray is TensorFlow's loop state: `.write`, `.read`, `.stack` and "
        "`.unstack` fail on JAX and PyTorch. The constructor alone (KM202) does not show "
        "where the code must change; each use does."
    )
    fix_safety = (
        "Never rewritten here. The static form (a Python `for i in range(n)` loop writing "
        "once per step, then `.stack()`) becomes a list and keras.ops.stack, and a loop of "
        "run-time length (`for i in tf.range(tf.shape(x)[1])`) whose body only assigns "
        "names and writes a state name becomes keras.ops.scan (KM201 at the constructor, "
        "with every use in the same fix); any other form is reported at each use with "
        "what to write instead (keras.ops.fori_loop / keras.ops.scan)."
    )
    severity = Severity.ERROR
    contexts = frozenset({Context.MODEL, Context.UNDECIDED})
    call_symbols = frozenset({"tf.TensorArray"})
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Steps(keras.layers.Layer):
                def call(self, x):
                    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
                    ta = ta.unstack(x)
                    return ta.read(0)
            """
        ),
        Clean(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Steps(keras.layers.Layer):
                def call(self, x):
                    ta = tf.TensorArray(tf.float32, size=3)
                    for i in range(3):
                        step = x[:, i] * 2.0
                        ta = ta.write(i, step)
                    return ta.stack()
            """
        ),
        Clean(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Decay(keras.layers.Layer):
                def call(self, x):
                    steps = tf.shape(x)[1]
                    ta = tf.TensorArray(tf.float32, size=steps)
                    h = tf.zeros_like(x[:, 0])
                    for i in tf.range(steps):
                        h = h * 0.5 + x[:, i]
                        ta = ta.write(i, h)
                    return ta.stack()
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        planned = plan_for(site)
        if planned is None or not isinstance(planned[1], ManualPortError):
            return
        why = planned[1]
        try:
            name, uses = array_uses(site)
        except ManualPortError:
            return  # not bound to a name: KM202 at the constructor says all there is
        for use in uses:
            if use.binds:
                continue
            shown = {"write": f"{name}.write(...)", "stack": f"{name}.stack()"}.get(use.kind)
            what = f"`{shown}`" if shown else f"`{name}` ({use.kind})"
            yield Report(
                site,
                f"{what} uses a tf.TensorArray, which runs only on TensorFlow and stays "
                f"because {why.reason}. Instead: {why.suggestion}",
                span=site.module.span_of(use.node),
                symbol=f"tf.TensorArray.{use.method}" if use.method else "tf.TensorArray",
            )
