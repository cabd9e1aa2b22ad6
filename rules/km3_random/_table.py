"""The KM3xx mapping table: each TensorFlow, Keras 2 backend and NumPy random function, its
signature and its ``keras.random`` target; the symbol lists the rules match on.
"""

from __future__ import annotations

from dataclasses import dataclass

# keras.random signatures, positional order (keras/src/random/random.py, Keras 3.15).
KERAS_RANDOM: dict[str, tuple[str, ...]] = {
    "keras.random.normal": ("shape", "mean", "stddev", "dtype", "seed"),
    "keras.random.uniform": ("shape", "minval", "maxval", "dtype", "seed"),
    "keras.random.randint": ("shape", "minval", "maxval", "dtype", "seed"),
    "keras.random.truncated_normal": ("shape", "mean", "stddev", "dtype", "seed"),
    "keras.random.categorical": ("logits", "num_samples", "dtype", "seed"),
    "keras.random.dropout": ("inputs", "rate", "noise_shape", "seed"),
    "keras.random.shuffle": ("x", "axis", "seed"),
    "keras.random.gamma": ("shape", "alpha", "dtype", "seed"),
    "keras.random.binomial": ("shape", "counts", "probabilities", "dtype", "seed"),
}


@dataclass(frozen=True)
class RandomMapping:
    """How one source random function maps onto ``keras.random``.

    ``params`` is the source signature in positional order; ``renames`` maps a
    source parameter to its ``keras.random`` name; ``implied`` gives the value a
    ``keras.random`` argument must get when the source omits it (or passes None),
    because the two defaults differ; ``special`` names an extra check below.
    """

    target: str
    params: tuple[str, ...]
    renames: tuple[tuple[str, str], ...] = ()
    implied: tuple[tuple[str, str], ...] = ()
    special: str = ""


def _table(*rows: tuple[tuple[str, ...], RandomMapping]) -> dict[str, RandomMapping]:
    return {symbol: mapping for symbols, mapping in rows for symbol in symbols}


_NORMAL = ("shape", "mean", "stddev", "dtype", "seed", "name")
_UNIFORM = ("shape", "minval", "maxval", "dtype", "seed", "name")
_INT64 = (("dtype", '"int64"'),)  # TF samples categories as int64, Keras as int32
_SIZE_IS_SHAPE = (("size", "shape"),)
_SCALAR = (("shape", "()"),)  # numpy's size=None draws one number

# Signatures from the installed TensorFlow 2.21 (inspect.signature).
TF_RANDOM = _table(
    (
        ("tf.random.normal", "tf.compat.v1.random.normal", "tf.compat.v1.random_normal"),
        RandomMapping("keras.random.normal", _NORMAL),
    ),
    (
        ("tf.random.uniform", "tf.compat.v1.random.uniform", "tf.compat.v1.random_uniform"),
        RandomMapping("keras.random.uniform", _UNIFORM, special="uniform"),
    ),
    (
        (
            "tf.random.truncated_normal",
            "tf.compat.v1.random.truncated_normal",
            "tf.compat.v1.truncated_normal",
        ),
        RandomMapping("keras.random.truncated_normal", _NORMAL),
    ),
    (
        ("tf.random.categorical", "tf.compat.v1.random.categorical"),
        RandomMapping(
            "keras.random.categorical",
            ("logits", "num_samples", "dtype", "seed", "name"),
            implied=_INT64,
        ),
    ),
    (
        ("tf.compat.v1.multinomial", "tf.compat.v1.random.multinomial"),
        RandomMapping(
            "keras.random.categorical",
            ("logits", "num_samples", "seed", "name", "output_dtype"),
            renames=(("output_dtype", "dtype"),),
            implied=_INT64,
        ),
    ),
    (
        ("tf.random.shuffle", "tf.compat.v1.random.shuffle", "tf.compat.v1.random_shuffle"),
        RandomMapping(
            "keras.random.shuffle",
            ("value", "seed", "name"),
            renames=(("value", "x"),),
            special="shuffle",
        ),
    ),
    (
        ("tf.random.gamma", "tf.compat.v1.random.gamma", "tf.compat.v1.random_gamma"),
        RandomMapping(
            "keras.random.gamma",
            ("shape", "alpha", "beta", "dtype", "seed", "name"),
            special="gamma",
        ),
    ),
    (
        ("tf.nn.dropout",),
        RandomMapping(
            "keras.random.dropout",
            ("x", "rate", "noise_shape", "seed", "name"),
            renames=(("x", "inputs"),),
        ),
    ),
    (
        ("tf.compat.v1.nn.dropout",),
        RandomMapping(
            "keras.random.dropout",
            ("x", "keep_prob", "noise_shape", "seed", "name", "rate"),
            renames=(("x", "inputs"),),
            special="keep_prob",
        ),
    ),
)

# tf_keras/src/backend.py: dtype=None means floatx(), as in keras.random.
BACKEND_RANDOM = _table(
    (
        ("K.random_normal",),
        RandomMapping("keras.random.normal", ("shape", "mean", "stddev", "dtype", "seed")),
    ),
    (
        ("K.random_uniform",),
        RandomMapping("keras.random.uniform", ("shape", "minval", "maxval", "dtype", "seed")),
    ),
    (
        ("K.truncated_normal",),
        RandomMapping(
            "keras.random.truncated_normal", ("shape", "mean", "stddev", "dtype", "seed")
        ),
    ),
    (
        # where(uniform <= p, 1, 0) is a Bernoulli(p) draw: a binomial with one trial.
        ("K.random_bernoulli", "K.random_binomial"),
        RandomMapping(
            "keras.random.binomial",
            ("shape", "p", "dtype", "seed"),
            renames=(("p", "probabilities"),),
            implied=(("counts", "1"), ("probabilities", "0.0")),
        ),
    ),
    (
        ("K.dropout",),
        RandomMapping(
            "keras.random.dropout",
            ("x", "level", "noise_shape", "seed"),
            renames=(("x", "inputs"), ("level", "rate")),
        ),
    ),
)

NUMPY_RANDOM = _table(
    (
        ("np.random.normal",),
        RandomMapping(
            "keras.random.normal",
            ("loc", "scale", "size"),
            renames=(("loc", "mean"), ("scale", "stddev"), *_SIZE_IS_SHAPE),
            implied=_SCALAR,
            special="numpy",
        ),
    ),
    (
        ("np.random.uniform",),
        RandomMapping(
            "keras.random.uniform",
            ("low", "high", "size"),
            renames=(("low", "minval"), ("high", "maxval"), *_SIZE_IS_SHAPE),
            implied=_SCALAR,
            special="numpy",
        ),
    ),
    (
        ("np.random.standard_normal",),
        RandomMapping("keras.random.normal", ("size",), _SIZE_IS_SHAPE, _SCALAR),
    ),
    (
        ("np.random.random", "np.random.random_sample", "np.random.ranf", "np.random.sample"),
        RandomMapping("keras.random.uniform", ("size",), _SIZE_IS_SHAPE, _SCALAR),
    ),
    (("np.random.rand",), RandomMapping("keras.random.uniform", (), special="dims")),
    (("np.random.randn",), RandomMapping("keras.random.normal", (), special="dims")),
)

SET_SEED = frozenset(
    {"tf.random.set_seed", "tf.compat.v1.set_random_seed", "tf.compat.v1.random.set_random_seed"}
)
GENERATOR_PREFIXES = (
    "tf.random.Generator",
    "tf.random.experimental.Generator",
    "tf.compat.v1.random.Generator",
    "tf.compat.v1.random.experimental.Generator",
    "tf.random.get_global_generator",
    "tf.random.experimental.get_global_generator",
    "tf.random.set_global_generator",
    "tf.random.experimental.set_global_generator",
)
TF_RANDOM_PREFIXES = ("tf.random.", "tf.compat.v1.random.", "tf.compat.v1.random_")
NOT_A_DRAW = frozenset({"tf.random.get_seed", "tf.compat.v1.random.get_seed"})

NON_LAYER_FAMILIES = (
    "losses.",
    "metrics.",
    "regularizers.",
    "constraints.",
    "initializers.",
    "optimizers.",
    "callbacks.",
)
SEED_GENERATOR = ("keras.random.SeedGenerator", "tf.keras.random.SeedGenerator")
GENERATOR_ATTR = "seed_generator"

SEEDED = {**TF_RANDOM, **BACKEND_RANDOM}
