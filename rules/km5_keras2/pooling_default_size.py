"""KM531: average-pooling layers built without `pool_size`, which Keras 3 requires."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import ArgOut, CallEdit, CallSite, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import keywords_in_order
from kmigrate.rules.common.namespaces import in_keras_namespaces

# Keras 2's default `pool_size` (tf_keras/src/layers/pooling/average_pooling{1,2,3}d.py)
# by rank; Keras 3.15's AveragePooling{1,2,3}D (and the AvgPool aliases) have none, while
# its MaxPooling layers kept theirs.
KERAS2_POOL_SIZE = {"1D": "2", "2D": "(2, 2)", "3D": "(2, 2, 2)"}
_CLASSES = {
    f"{prefix}{rank}": size
    for rank, size in KERAS2_POOL_SIZE.items()
    for prefix in ("AveragePooling", "AvgPool")
}
# Where Keras 2 code imports them from: the public path and Keras 2's module of its own.
_SYMBOLS = {
    symbol: size
    for name, size in _CLASSES.items()
    for symbol in in_keras_namespaces(f"layers.{name}", f"layers.pooling.{name}")
}


class PoolingDefaultSize(Rule):
    id = "KM531"
    name = "pooling-default-size"
    summary = "`AveragePooling2D()` without `pool_size`: Keras 3 has no default for it."
    rationale = (
        "Keras 2's average-pooling layers pool 2 (1D), (2, 2) (2D) or (2, 2, 2) (3D) when "
        "`pool_size` is not given. Keras 3's `AveragePooling1D/2D/3D` (and `AvgPool*`) "
        "require it: `AveragePooling2D()` raises TypeError (missing 'pool_size') while the "
        "model is built, on every backend. Its `MaxPooling` layers kept the default."
    )
    fix_safety = (
        "Exact: writes Keras 2's default, `pool_size=(2, 2)` for 2D, `2` for 1D, "
        "`(2, 2, 2)` for 3D, which both Keras versions then use. A call with `**kwargs` "
        "may pass it there: reported, not rewritten. A subclass that leaves `pool_size` "
        "to its base is not seen."
    )
    severity = Severity.ERROR
    call_symbols = frozenset(_SYMBOLS)
    examples = [
        Flagged(
            """
            from keras.layers import AveragePooling2D

            def down(x):
                return AveragePooling2D(padding="same")(x)
            """,
            """
            from keras.layers import AveragePooling2D

            def down(x):
                return AveragePooling2D(pool_size=(2, 2), padding="same")(x)
            """,
        ),
        Flagged(
            """
            from tensorflow import keras

            def pool(options, x):
                return keras.layers.AveragePooling1D(**options)(x)
            """
        ),
        Clean(
            """
            from tensorflow import keras

            def pools(x):
                x = keras.layers.AveragePooling2D((3, 3))(x)
                x = keras.layers.AveragePooling1D(pool_size=4)(x)
                return keras.layers.MaxPooling2D()(x)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.arg(0, "pool_size") is not None:
            return
        name = site.symbol.rpartition(".")[2]
        size = _SYMBOLS[site.symbol]
        if site.has_star_args:
            yield Report(
                site,
                f"`{name}` without `pool_size` raises TypeError in Keras 3 unless the "
                f"`*args`/`**kwargs` give it (Keras 2 pooled {size}): write "
                f"`pool_size={size}` where it is missing",
            )
            return
        # no positional argument here: the first one would be `pool_size`
        args = [ArgOut(None, keyword="pool_size", value=size)]
        args.extend(ArgOut(keyword, keyword=keyword) for keyword in keywords_in_order(site))
        plan = EditPlan((CallEdit(site.span, args=tuple(args)),), f"pool_size={size}")
        yield Report(
            site,
            f"`{name}` has no default `pool_size` in Keras 3 (TypeError when the model is "
            f"built): Keras 2 pooled {size}, written out",
            fix=plan,
        )
