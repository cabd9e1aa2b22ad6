"""KM302: `K.random_*` / `K.dropout`, the Keras 2 backend's random functions."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, EditPlan, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.km3_random._rewrite import (
    NotExactError,
    bind_arguments,
    plan_rewrite,
    short_symbol,
)
from kmigrate.rules.km3_random._seed_generator import layer_report, non_layer_base
from kmigrate.rules.km3_random._table import BACKEND_RANDOM


class BackendRandom(Rule):
    id = "KM302"
    name = "keras2-backend-random"
    summary = "`K.random_*` / `K.dropout` (Keras 2 backend functions), which Keras 3 removed."
    rationale = (
        "`keras.backend.random_normal` and friends do not exist in Keras 3. In a layer they "
        "become `keras.random.*` with the layer's SeedGenerator; elsewhere `keras.random.*` "
        "without a seed, which draws from Keras's global SeedGenerator (seeded by "
        "`keras.utils.set_random_seed`)."
    )
    fix_safety = (
        "Exact in distribution (different generator, so different numbers). dtype=None means "
        "floatx() on both sides. K.random_bernoulli(shape, p) (where(uniform <= p, 1, 0)) "
        "becomes random.binomial(shape, counts=1, probabilities=p), the same Bernoulli "
        "distribution. K.dropout's `level` is random.dropout's `rate` (both scale by "
        "1/(1-rate)). In layers the rules of KM301 apply. An initializer's `__call__` (run "
        "eagerly, once per weight it creates) draws like code outside layers. Outside layers "
        "an int seed is not "
        "rewritten (K gives a fresh draw per call from a seeded op, keras.random.normal(seed=1) "
        "returns the same numbers every call). In tf.data pipelines use tf.random.*: "
        "keras.random would return backend tensors there."
    )
    severity = Severity.ERROR
    call_symbols = frozenset(BACKEND_RANDOM) | {
        "K.random_normal_variable",
        "K.random_uniform_variable",
    }
    examples = [
        Flagged(
            """
            import keras
            from tensorflow.keras import backend as K


            class Dropper(keras.layers.Layer):
                def call(self, x):
                    mask = K.random_bernoulli(K.shape(x), p=0.9)
                    return K.dropout(x * mask, 0.5)
            """,
            """
            import keras
            from tensorflow.keras import backend as K


            class Dropper(keras.layers.Layer):
                def __init__(self, seed=None, **kwargs):
                    super().__init__(**kwargs)
                    self.seed = seed
                    self.seed_generator = keras.random.SeedGenerator(seed)

                def call(self, x):
                    mask = keras.random.binomial(K.shape(x), counts=1, probabilities=0.9, seed=self.seed_generator)
                    return keras.random.dropout(x * mask, 0.5, seed=self.seed_generator)
            """,  # noqa: E501
        ),
        Flagged(
            """
            from tensorflow.keras import backend as K

            noise = K.random_normal((16, 4), stddev=0.5)
            """,
            """
            import keras

            noise = keras.random.normal((16, 4), stddev=0.5)
            """,
        ),
        Flagged(
            """
            from tensorflow.keras import backend as K

            noise = K.random_uniform((16, 4), seed=1)
            """
        ),
        Flagged(
            """
            from keras import backend as K

            class Unrecognised(SomeBase):
                def call(self, x):
                    return K.dropout(x, 0.5)  # no layer-owned SeedGenerator: left manual
            """
        ),
        Clean(
            """
            import keras

            noise = keras.random.normal((16, 4))
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        mapping = BACKEND_RANDOM.get(site.symbol)
        if mapping is None:
            yield Report(
                site,
                f"`{site.symbol}` does not exist in Keras 3: create the weight with "
                "self.add_weight(shape, initializer=keras.initializers.RandomNormal(...) / "
                "RandomUniform(...)) or keras.Variable(keras.random.normal(...))",
            )
            return
        why = "does not exist in Keras 3"
        initializer = _initializer_draw(site)
        if site.context == Context.MODEL and _in_model_class(site) and not initializer:
            yield layer_report(site, mapping, why)  # a layer's draw: its own SeedGenerator
            return
        if site.context == Context.DATA:
            yield Report(
                site,
                f"`{site.symbol}` {why}; in a tf.data pipeline use tf.random.* (keras.random "
                "would return backend tensors inside the TensorFlow graph)",
            )
            return
        try:
            if site.scope.class_node is not None and not initializer:
                # Not recognised as a layer, yet in a class: a draw there must be owned by
                # a layer's SeedGenerator (jax refuses unseeded draws in traced code).
                raise NotExactError(
                    f"it is in the class `{site.scope.class_name}`, which kmigrate does not "
                    "recognise as a Keras layer, so no SeedGenerator can be given to it: "
                    "if it is a layer, draw with seed=self.seed_generator, a "
                    "keras.random.SeedGenerator created in __init__"
                )
            if "seed" in bind_arguments(site, mapping.params):
                raise NotExactError(
                    "an int seed gives keras.random the same numbers at every call; pass a "
                    "keras.random.SeedGenerator(seed) kept across calls instead"
                )
            edit = plan_rewrite(site, mapping, None)
        except NotExactError as manual:
            yield Report(site, f"`{site.symbol}` {why} and was not rewritten: {manual}")
            return
        yield Report(
            site,
            f"`{site.symbol}` {why}: use `keras.{short_symbol(mapping.target)}` (Keras's global "
            "SeedGenerator, seeded by keras.utils.set_random_seed)",
            fix=EditPlan((edit,), f"use {mapping.target}"),
        )


def _initializer_draw(site: CallSite) -> bool:
    """Whether the draw is in the ``__call__`` of an initializer class: Keras runs it
    eagerly, once per weight it creates, where an unseeded ``keras.random`` draw (Keras's
    global SeedGenerator) is fresh at each call, as Keras 2's unseeded ``K.random_*`` was."""
    scope = site.scope
    base = non_layer_base(scope.class_bases) if scope.class_node is not None else None
    return (
        scope.function_name == "__call__"
        and base is not None
        and base.rpartition(".")[0].endswith("initializers")
    )


def _in_model_class(site: CallSite) -> bool:
    """Whether the draw is in a class the project resolved as a Keras layer/model (one
    that can own a SeedGenerator); a plain class of model code cannot."""
    facts = site.module.project_facts
    name = site.scope.class_name
    return name is not None and facts is not None and name in facts.model_classes
