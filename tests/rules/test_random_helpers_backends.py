"""KM302 on the real backends for two draws it used to leave manual (keras-efficientnets'
shapes): ``K.random_normal`` / ``K.random_uniform`` in an initializer's ``__call__``
(Keras runs it eagerly, once per weight: now Keras's global SeedGenerator, fresh at each
call as Keras 2's unseeded draw was), and ``K.random_uniform`` in a helper a layer's
``call`` defines and only calls right there (``K.in_train_phase(helper, x)`` becomes
``helper() if training else x``: now the layer's own SeedGenerator).

The converted module comes from ``apply_to_text``; the original runs on tf_keras. On
tensorflow, jax and torch: two calls draw different numbers, and over 100k samples the
mean and standard deviation (the kept fraction for the dropout) agree with the theory and
with the original, within five standard errors."""

from __future__ import annotations

import math
import textwrap

import pytest

from kmigrate.api import apply_to_text, scan_text
from tests.backend_run import keras2_and_converted

pytestmark = pytest.mark.backends

Z = 5.0
LEGACY = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf
    from tensorflow.keras import backend as K


    class ShiftedNormal(tf.keras.initializers.Initializer):
        def __init__(self, stddev=1.5):
            self.stddev = stddev

        def __call__(self, shape, dtype=None):
            return K.random_normal(shape, mean=1.0, stddev=self.stddev, dtype=dtype)


    class WideUniform(tf.keras.initializers.Initializer):
        def __call__(self, shape, dtype=None):
            return K.random_uniform(shape, -3.0, 3.0, dtype=dtype)


    class RowDrop(tf.keras.layers.Layer):
        def __init__(self, rate=0.25, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate

        def call(self, inputs, training=None):
            def drop_rows():
                keep = 1.0 - self.rate
                noise = keep + K.random_uniform((tf.shape(inputs)[0], 1), dtype=inputs.dtype)
                return inputs / keep * tf.floor(noise)

            return K.in_train_phase(drop_rows, inputs, training=training)


    def draws():
        normal, uniform, layer = ShiftedNormal(), WideUniform(), RowDrop(0.25)
        x = np.ones((100000, 1), "float32")
        return {
            "normal": [np.asarray(normal((100000,), dtype="float32")) for _ in range(2)],
            "uniform": [np.asarray(uniform((100000,), dtype="float32")) for _ in range(2)],
            "drop": [np.asarray(layer(x, training=True)) for _ in range(2)],
        }
    """
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    spec.loader.exec_module(subject)
    report = {}
    for name, (first, second) in subject.draws().items():
        first = np.asarray(first, dtype="float64").ravel()
        second = np.asarray(second, dtype="float64").ravel()
        report[name] = {
            "mean": float(first.mean()),
            "std": float(first.std()),
            "kept": float((first != 0).mean()),
            "kept_value": float(first[first != 0].mean()),
            "fresh": bool((first != second).any()),
        }
    print("REPORT" + json.dumps(report))
    """
)
N = 100_000
# (mean, std) of each draw in theory; the dropout keeps 3 rows in 4, scaled by 4/3
THEORY = {"normal": (1.0, 1.5), "uniform": (0.0, math.sqrt(3.0)), "drop": (1.0, math.sqrt(1 / 3))}


def test_both_draws_are_rewritten_with_their_generators() -> None:
    converted = apply_to_text(LEGACY)
    assert "K.random" not in converted and "K.in_train_phase" not in converted
    assert "keras.random.normal(shape, mean=1.0, stddev=self.stddev, dtype=dtype)" in converted
    assert "keras.random.uniform(shape, -3.0, 3.0, dtype=dtype)" in converted
    assert "seed=self.seed_generator" in converted  # the layer's helper: the layer's generator
    assert not [f for f in scan_text(converted) if f["rule"] == "KM302"]


def test_a_helper_passed_on_stays_manual() -> None:
    """`tf.cond(training, drop_rows, ...)` traces the helper on its own: not rewritten."""
    passed_on = LEGACY.replace(
        "return K.in_train_phase(drop_rows, inputs, training=training)",
        "return tf.cond(training, drop_rows, lambda: inputs)",
    )
    line = next(i for i, text in enumerate(passed_on.splitlines(), 1) if "noise =" in text)
    (finding,) = [f for f in scan_text(passed_on) if f["rule"] == "KM302" and f["line"] == line]
    assert not finding["fixable"] and "nested in `call`" in finding["message"]


def test_draws_match_keras2_in_distribution_on_every_backend(tmp_path) -> None:
    reference, targets = keras2_and_converted(WORKER, LEGACY, apply_to_text(LEGACY), tmp_path)
    for backend, got in {"keras2": reference, **targets}.items():
        for name, (mean, std) in THEORY.items():
            row, ref = got[name], reference[name]
            assert row["fresh"], (backend, name)
            error = Z * std / math.sqrt(N)
            assert abs(row["mean"] - mean) < error, (backend, name, row)
            assert abs(row["mean"] - ref["mean"]) < 2 * error, (backend, name, row, ref)
            assert abs(row["std"] - std) < Z * std / math.sqrt(2 * N), (backend, name, row)
        drop = got["drop"]
        assert abs(drop["kept"] - 0.75) < Z * math.sqrt(0.75 * 0.25 / N), (backend, drop)
        assert abs(drop["kept_value"] - 4 / 3) < 1e-5, (backend, drop)
