"""KM303: `np.random.*` inside a layer's `call`, constant once the layer is traced."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kmigrate.engine import CallSite, Context, Severity, code_walk
from kmigrate.rules.base import Clean, Flagged, Report, Rule

if TYPE_CHECKING:
    from kmigrate.engine import ModuleInfo
from kmigrate.rules.km3_random._seed_generator import layer_report
from kmigrate.rules.km3_random._table import NUMPY_RANDOM

# Calls that only host-side code makes: it builds a functional model or drives one. A
# function making them is a script or test that feeds NumPy data to a model, not code a
# model traces, even when building from `Input` makes its context `model`.
_DRIVER_METHODS = frozenset(
    {
        "fit",
        "fit_generator",
        "compile",
        "predict",
        "predict_on_batch",
        "evaluate",
        "train_on_batch",
        "test_on_batch",
    }
)
_DRIVER_SYMBOL_SUFFIXES = (".Input", ".Model", ".Sequential")


def _drives_a_model(site: CallSite) -> bool:
    """Whether the outermost function around ``site`` builds or drives a model."""
    outer = next(
        (
            n
            for n in site.module.walk_path
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        ),
        None,
    )
    if outer is None:
        return True  # module-level code runs once, on the host
    return site.module.memo(("KM303-driver", outer), lambda: _calls_drivers(site.module, outer))


def _calls_drivers(module: ModuleInfo, function: ast.AST) -> bool:
    for node in code_walk(function):
        if node.__class__ is not ast.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if isinstance(func, ast.Attribute) and func.attr in _DRIVER_METHODS:
            return True
        symbol = module.resolve(func) or ""
        if symbol.endswith(_DRIVER_SYMBOL_SUFFIXES) or symbol in ("Input", "Model"):
            return True
    return False


class NumpyRandomInCall(Rule):
    id = "KM303"
    name = "numpy-random-in-call"
    summary = "`np.random.*` inside a layer's `call`: constant once the layer is traced."
    rationale = (
        "NumPy draws on the host when `call` runs as Python. Under `tf.function` (Keras 2 "
        "`fit`), `jax.jit` or `torch.compile` that happens once, at tracing, so every batch "
        "sees the same 'random' numbers. `keras.random.*` with the layer's SeedGenerator draws "
        "anew inside the compiled graph on every backend."
    )
    fix_safety = (
        "Changes behaviour on purpose: traced code gets a fresh draw per call, as eager code "
        "did. normal(loc, scale, size), uniform(low, high, size), standard_normal, random, "
        "rand(*dims) and randn(*dims) map to random.normal/uniform with the same parameters; "
        "the result is floatx() (float32) instead of NumPy's float64 (in a layer it met "
        "float32 tensors anyway). Without `size`, only literal loc/scale/low/high are "
        "rewritten (NumPy takes the shape from array parameters). Other np.random functions "
        "are reported for a manual port. NumPy in __init__/build (initial values) is left "
        "alone, and so is NumPy in a function that builds or drives a model (`Input`, "
        "`Model`, `fit`, `predict`...): a test or script making host-side data."
    )
    severity = Severity.WARNING
    contexts = frozenset({Context.MODEL})
    call_prefixes = ("np.random.",)
    examples = [
        Flagged(
            """
            import keras
            import numpy as np


            class Jitter(keras.layers.Layer):
                def __init__(self, scale, **kwargs):
                    super().__init__(**kwargs)
                    self.scale = scale

                def call(self, x):
                    return x + np.random.normal(0.0, self.scale, size=(4,))
            """,
            """
            import keras


            class Jitter(keras.layers.Layer):
                def __init__(self, scale, seed=None, **kwargs):
                    super().__init__(**kwargs)
                    self.seed = seed
                    self.seed_generator = keras.random.SeedGenerator(seed)
                    self.scale = scale

                def call(self, x):
                    return x + keras.random.normal(shape=(4,), mean=0.0, stddev=self.scale, seed=self.seed_generator)
            """,  # noqa: E501
        ),
        Flagged(
            """
            import keras
            import numpy as np


            class Mixer(keras.layers.Layer):
                def call(self, x):
                    return x[np.random.permutation(4)]
            """
        ),
        Clean(
            """
            import keras
            import numpy as np


            def test_model():
                x = np.random.uniform(0, 255, (2, 10))  # host-side test data, not model code
                inputs = keras.Input((10,))
                model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
                model.predict(x)
            """
        ),
        Clean(
            """
            import keras
            import numpy as np


            class Fixed(keras.layers.Layer):
                def build(self, input_shape):
                    self.w = self.add_weight(shape=(4,), initializer="zeros")
                    self.w.assign(np.random.normal(size=(4,)))

                def call(self, x):
                    return x * self.w
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        method = (site.scope.function_name or "").split(".")[0]
        if site.scope.class_node is not None and method != "call":
            return
        if site.scope.class_node is None and _drives_a_model(site):
            return  # host-side: builds inputs for a model it builds or trains, never traced
        why = "draws on the host, once per trace (the same numbers for every batch when compiled)"
        mapping = NUMPY_RANDOM.get(site.symbol)
        if mapping is None:
            yield Report(
                site,
                f"`{site.symbol}` {why} and was not rewritten: it has no direct keras.random "
                "counterpart; use keras.random.* with seed=self.seed_generator",
            )
            return
        yield layer_report(site, mapping, why)
