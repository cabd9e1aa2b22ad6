"""The random-layer search finds a layer that drops whole rows rarely (keras-efficientnets'
DropConnect: rate 0.1 per row). On the 4 rows of the parity batch such a layer kept every
row in all three search calls about one time in four, on one side and not on another: the
reference's compared step then ran it active while the targets' did not, and a correct
conversion FAILed in training ("random in training here but not on the reference"). The
search now calls the model on the batch repeated 16 times."""

from __future__ import annotations

import pytest

from tests.parity.test_parity_trust import THREE, before_after, dump

pytestmark = pytest.mark.backends

MODEL = """\
    {header}

    class RowDrop(keras.layers.Layer):
        def __init__(self, rate, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate
            {init}

        def call(self, x, training=None):
            if not training:
                return x
            keep = 1.0 - self.rate
            noise = keep + {uniform}
            return x / keep * {floor}(noise)

    def build_model():
        inputs = keras.Input((6,))
        x = inputs
        for i in range(4):
            x = keras.layers.Dense(6, activation="tanh", name=f"dense_{{i}}")(x)
            x = RowDrop(0.05, name=f"rows_{{i}}")(x)
        return keras.Model(inputs, keras.layers.Dense(2, name="head")(x))
"""
ORIGINAL = MODEL.format(
    header="import tensorflow as tf\n    from tensorflow import keras",
    init="",
    uniform="tf.random.uniform((tf.shape(x)[0], 1), dtype=x.dtype)",
    floor="tf.floor",
)
CONVERTED = MODEL.format(
    header="import keras\n    from keras import ops",
    init="self.seed_generator = keras.random.SeedGenerator(None)",
    uniform="keras.random.uniform((ops.shape(x)[0], 1), dtype=x.dtype, seed=self.seed_generator)",
    floor="ops.floor",
)


def test_rare_row_drops_are_found_random_on_every_side(tmp_path):
    report = before_after(tmp_path, ORIGINAL, CONVERTED, backends=THREE)
    assert report.passed, dump(report)
    for run in report.runs:
        assert run.check("train").status == "pass", dump(report)
