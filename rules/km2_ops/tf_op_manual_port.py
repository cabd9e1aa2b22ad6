"""KM202: a TensorFlow op in model code with no exact ``keras.ops`` rewrite at this call."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, ReferenceSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report
from kmigrate.rules.common.catalog.binding import ManualPortError
from kmigrate.rules.common.catalog.catalog_rule import (
    OUTSIDE,
    CatalogRule,
    passed_function,
    plan_for,
)
from kmigrate.rules.common.keras2_backend import removed_backend_function


class TfOpManualPort(CatalogRule):
    id = "KM202"
    name = "tf-op-manual-port"
    summary = "A TensorFlow op in model code with no exact keras.ops rewrite at this call."
    rationale = (
        "The op (or this use of it) has no keras.ops equivalent with the same numbers on "
        "every backend: a different convention (complex tensors, sizes versus indices, "
        "int64 index matrices), a data-dependent shape JAX cannot trace, or an argument "
        "whose value decides the rewrite but is not a literal."
    )
    fix_safety = (
        "Never rewritten automatically: the finding says why and suggests the portable "
        "code to write. `kmigrate explain <symbol>` shows the catalog entry."
    )
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Positions(keras.layers.Layer):
                def call(self, mask):
                    return tf.where(mask)
            """
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Split(keras.layers.Layer):
                def call(self, x, sizes):
                    return tf.split(x, tf.cast(sizes, "int32"), axis=-1)
            """
        ),
        Flagged(  # a shape stacked into a tensor, read as one too: under jit on JAX it
            # cannot shape (read only as a shape, the stack becomes a tuple: KM201)
            """
            import tensorflow as tf
            from tensorflow import keras


            class Groups(keras.layers.Layer):
                def call(self, x):
                    dims = tf.shape(x)
                    group_shape = [dims[i] for i in range(len(x.shape))]
                    group_shape[-1] = x.shape[-1] // 2
                    group_shape.insert(-1, 2)
                    group_shape = tf.stack(group_shape)
                    size = tf.cast(tf.reduce_prod(group_shape), tf.float32)
                    return tf.reshape(tf.reshape(x, group_shape) / size, dims)
            """
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Spectrum(keras.layers.Layer):
                def call(self, x):
                    return tf.abs(tf.signal.rfft(x))
            """
        ),
        Clean(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Split(keras.layers.Layer):
                def call(self, x):
                    return tf.split(x, 2, axis=-1)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        found = plan_for(site)
        if found is None or not isinstance(found[1], ManualPortError):
            return
        entry, manual = found
        message = f"`{site.symbol}` has no exact Keras 3 rewrite here: "
        message += manual.reason.rstrip(".")
        if manual.suggestion:
            message += f". Instead: {manual.suggestion.rstrip('.')}"
        if site.context is Context.MODEL:
            yield Report(site, message)
        elif removed_backend_function(site) is not None:
            return  # KM108's: it fails on Keras 3 wherever it is
        elif site.context is Context.UNDECIDED:  # the analysis says why (both callers)
            yield Report(site, message, severity=Severity.WARNING)
        else:
            yield Report(site, message + OUTSIDE, severity=Severity.INFO)

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        entry = passed_function(site)
        if entry is None or entry.renames_only:
            return
        if entry.automatic:
            why = (
                "called with one argument, its keras.ops form needs other arguments or "
                "defaults (see `kmigrate explain " + site.symbol + "`)"
            )
            instead = "pass a small function, e.g. `lambda t: ...` calling the rewritten op"
        else:
            why, instead = entry.reason.rstrip("."), entry.suggestion.rstrip(".")
        yield Report(
            site,
            f"`{site.symbol}` is used as a value (passed as a function or type) and works "
            f"only with TensorFlow tensors; it has no drop-in keras.ops replacement: {why}. "
            f"Instead: {instead}",
        )
