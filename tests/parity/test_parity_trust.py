"""Parity is right both ways (issue 31): no false PASS, and no FAIL on models that match.

Each test writes a small Keras 2 original and its Keras 3 conversion and runs parity on the
real backends: a compiled factory and a model with twelve ``Dropout`` layers PASS, a
deliberately different conversion still FAILs, a Keras 2 original that applies a ``tf.*``
op to a Keras tensor (a ``TFOpLambda`` layer, whose own ``call`` the layer hooks used to
delete) meets a conversion ten times wrong in training and FAILs, an all-zero-output model
is perturbed before it is compared, and the verdicts do not change between runs.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kmigrate.parity.plan import ParityOptions
from kmigrate.parity.report import ParityReport
from kmigrate.parity.runner import run_parity

pytestmark = pytest.mark.backends

THREE = ["tensorflow", "jax", "torch"]


def before_after(tmp_path: Path, original: str, converted: str, **options) -> ParityReport:
    for side, text in (("orig", original), ("conv", converted)):
        (tmp_path / side).mkdir(parents=True, exist_ok=True)
        (tmp_path / side / "models.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return run_parity(
        str(tmp_path / "conv" / "models.py"),
        reference=f"{tmp_path / 'orig' / 'models.py'}:build_model",
        options=ParityOptions(**options),
    )


def dump(report: ParityReport) -> str:
    return json.dumps(report.to_dict(), indent=1)[:6000]


def verdicts(report: ParityReport) -> list[tuple[str, str, tuple]]:
    return [(r.backend, r.status, tuple((c.name, c.status) for c in r.checks)) for r in report.runs]


# -- a factory that returns a compiled model ------------------------------------------------

COMPILED = """\
    {header}

    def build_model():
        inputs = keras.Input((6,))
        x = keras.layers.Dense(8, activation="relu", name="hidden")(inputs)
        outputs = keras.layers.Dense(3, activation="softmax", name="probs")(x)
        model = keras.Model(inputs, outputs)
        model.compile(
            optimizer="adam",
            loss="sparse_categorical_crossentropy",
            metrics=["sparse_categorical_accuracy"],
        )
        return model
"""


def test_a_compiled_factory_passes_every_check(tmp_path):
    # Keras 3 kept the factory's metric when parity recompiled with a loss only; the metric
    # rejected parity's float targets on the reference and the targets alike
    report = before_after(
        tmp_path,
        COMPILED.format(header="from tensorflow import keras"),
        COMPILED.format(header="import keras"),
        backends=THREE,
    )
    assert report.passed, dump(report)
    for run in report.runs:
        assert [(c.name, c.status) for c in run.checks] == [
            ("call", "pass"),
            ("predict", "pass"),
            ("train", "pass"),
        ], dump(report)


# -- twelve Dropout layers -------------------------------------------------------------------

DROPOUTS = """\
    {header}

    {extra}

    def build_model():
        inputs = keras.Input((8,))
        x = inputs
        for i in range(12):
            x = keras.layers.Dense(8, activation="tanh", name=f"dense_{{i}}")(x)
            x = {dropout}(0.1, name=f"drop_{{i}}")(x)
        return keras.Model(inputs, keras.layers.Dense(2, name="head")(x))
"""

# reads `training` from **kwargs: Keras 3 passes it only to a call() that names it
KWARGS_DROPOUT = """\
class KwargsDropout(keras.layers.Layer):
        def __init__(self, rate, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate

        def call(self, x, **kwargs):
            if kwargs.get("training"):
                return keras.random.dropout(x, self.rate)
            return x
"""


def dropouts(header: str, last_dropout: str | None = None, extra: str = "") -> str:
    text = DROPOUTS.format(header=header, extra=extra, dropout="keras.layers.Dropout")
    if last_dropout:
        text = text.replace(
            'x = keras.layers.Dropout(0.1, name=f"drop_{i}")(x)',
            f'x = (keras.layers.Dropout if i < 11 else {last_dropout})(0.1, name=f"drop_{{i}}")(x)',
        )
    return text


def test_twelve_dropouts_pass_and_a_different_one_fails(tmp_path):
    # the random-layer search stopped at 8 layers, so this model FAILed on every backend
    original = dropouts("from tensorflow import keras")
    report = before_after(tmp_path / "same", original, dropouts("import keras"), backends=THREE)
    assert report.passed, dump(report)
    for run in report.runs:
        assert run.check("train").status == "pass", dump(report)
    assert any("drop_11" in line for line in report.runs[0].check("train").detail), dump(report)

    different = dropouts("import keras", "KwargsDropout", textwrap.dedent(KWARGS_DROPOUT))
    report = before_after(tmp_path / "different", original, different, backends=["jax"])
    assert not report.passed, dump(report)
    train = report.runs[0].check("train")
    assert train.status == "fail" and train.layer == "'drop_11'", dump(report)


# -- a tf.* op on a Keras tensor in the original (TFOpLambda) --------------------------------

RESHAPE_ORIGINAL = """\
    import tensorflow as tf
    from tensorflow import keras

    def build_model():
        inputs = keras.Input((8,))
        x = keras.layers.Dense(8, name="proj")(inputs)
        x = tf.reshape(x, (-1, 2, 4))  # a TFOpLambda layer in Keras 2
        return keras.Model(inputs, keras.layers.Dense(3, name="head")(x))
"""

RESHAPE_CONVERTED = """\
    import keras
    from keras import ops

    class Boost(keras.layers.Layer):
        # the same forward value, {factor}x the gradient
        def call(self, x):
            return {factor} * x - ops.stop_gradient(({factor} - 1.0) * x)

    def build_model():
        inputs = keras.Input((8,))
        x = keras.layers.Dense(8, name="proj")(inputs)
        x = keras.layers.Reshape((2, 4), name="reshape")(x)
        x = Boost(name="boost")(x)
        return keras.Model(inputs, keras.layers.Dense(3, name="head")(x))
"""


def test_a_keras2_tf_op_original_meets_a_10x_wrong_training_step(tmp_path):
    # the hooks deleted TFOpLambda's own `call`: the Keras 2 reference raised in training,
    # the train check was skipped, and the verdict was PASS
    wrong = RESHAPE_CONVERTED.format(factor="10.0")
    report = before_after(tmp_path / "wrong", RESHAPE_ORIGINAL, wrong, backends=["tensorflow"])
    assert not report.passed, dump(report)
    assert not [c for c in report.reference.notes if "not compared" in c], dump(report)
    run = report.runs[0]
    assert run.check("call").status == "pass", dump(report)  # the forward pass agrees
    train = run.check("train")
    assert train.status == "fail", dump(report)
    assert any(d.name == "loss" for d in train.diffs), dump(report)

    right = RESHAPE_CONVERTED.format(factor="1.0")
    report = before_after(tmp_path / "right", RESHAPE_ORIGINAL, right, backends=["tensorflow"])
    assert report.passed, dump(report)
    assert report.runs[0].check("train").status == "pass", dump(report)


# -- outputs that are all zeros --------------------------------------------------------------

ZEROS = """\
    {header}

    def build_model():
        inputs = keras.Input((6,))
        x = keras.layers.Dense(5, activation="{activation}", name="proj")(inputs)
        x = keras.layers.LayerNormalization(
            gamma_initializer="zeros", beta_initializer="zeros", name="norm"
        )(x)
        return keras.Model(inputs, x)
"""


def test_all_zero_outputs_are_perturbed_before_they_are_compared(tmp_path):
    original = ZEROS.format(header="from tensorflow import keras", activation="tanh")
    right = ZEROS.format(header="import keras", activation="tanh")
    report = before_after(tmp_path / "right", original, right, backends=THREE)
    assert report.passed, dump(report)
    assert any("degenerate" in note for note in report.reference.notes), dump(report)
    assert all(r.max_abs is not None for r in report.runs)

    # relu instead of tanh: every output is 0.0 on both sides before the perturbation
    wrong = ZEROS.format(header="import keras", activation="relu")
    report = before_after(tmp_path / "wrong", original, wrong, backends=["jax"])
    assert not report.passed, dump(report)
    assert report.runs[0].check("call").status == "fail", dump(report)


# -- the same verdicts on every run ----------------------------------------------------------


def test_verdicts_are_identical_over_five_runs(tmp_path):
    original = dropouts("from tensorflow import keras")
    converted = dropouts("import keras")
    seen = {
        tuple(verdicts(before_after(tmp_path / str(n), original, converted, backends=THREE)))
        for n in range(5)
    }
    assert len(seen) == 1, seen
    assert all(status == "pass" for _, status, _ in next(iter(seen))), seen


# -- a weight Keras 2 lists under another layer ----------------------------------------------

# tensorflow_addons' WeightNormalization: `self.v = self.layer.kernel` and, in call,
# `self.layer.kernel = <normalised kernel>`. Keras 2 then lists the kernel among the
# wrapper's own weights (reassigning the Dense's attribute untracks it there), Keras 3
# keeps it under the Dense; parity said "the reference weights do not fit this model".
WEIGHT_NORM_KERAS2 = """\
    import tensorflow as tf

    class WeightNorm(tf.keras.layers.Wrapper):
        def build(self, input_shape):
            if not self.layer.built:
                self.layer.build(input_shape)
            kernel = self.layer.kernel
            self.g = self.add_weight(name="g", shape=(kernel.shape[-1],), initializer="ones")
            self.v = kernel
            self.built = True

        def call(self, inputs):
            self.layer.kernel = tf.nn.l2_normalize(self.v, axis=0) * self.g
            return self.layer(inputs)

        def compute_output_shape(self, input_shape):
            return self.layer.compute_output_shape(input_shape)

    def build_model():
        inputs = tf.keras.Input((6,))
        x = WeightNorm(tf.keras.layers.Dense(5, name="dense"), name="wn")(inputs)
        return tf.keras.Model(inputs, tf.keras.layers.Dense(3, name="head")(x))
"""

WEIGHT_NORM_KERAS3 = """\
    import keras
    from keras import ops

    class WeightNorm(keras.layers.Wrapper):
        def build(self, input_shape):
            if not self.layer.built:
                self.layer.build(input_shape)
            kernel = self.layer.kernel
            self.g = self.add_weight(name="g", shape=(kernel.shape[-1],), initializer="ones")
            self.v = kernel
            self.built = True

        def call(self, inputs):
            kernel = ops.normalize(self.v, axis={axis}, epsilon=1e-12) * self.g
            return ops.matmul(inputs, kernel) + self.layer.bias

        def compute_output_shape(self, input_shape):
            return self.layer.compute_output_shape(input_shape)

    def build_model():
        inputs = keras.Input((6,))
        x = WeightNorm(keras.layers.Dense(5, name="dense"), name="wn")(inputs)
        return keras.Model(inputs, keras.layers.Dense(3, name="head")(x))
"""


def test_a_kernel_keras2_lists_under_the_wrapper_is_matched_and_said(tmp_path):
    report = before_after(
        tmp_path / "right", WEIGHT_NORM_KERAS2, WEIGHT_NORM_KERAS3.format(axis=0), backends=THREE
    )
    assert report.passed, dump(report)
    for run in report.runs:
        assert [c.status for c in run.checks] == ["pass", "pass", "pass"], dump(report)
        assert any(
            "'kernel' (6, 5) is a weight of 'wn' on the reference and of 'wn/dense' here" in note
            for note in run.notes
        ), dump(report)
    # the same weights, normalised along the wrong axis: the numbers differ
    wrong = WEIGHT_NORM_KERAS3.format(axis=1)
    report = before_after(tmp_path / "wrong", WEIGHT_NORM_KERAS2, wrong, backends=["jax"])
    assert not report.passed, dump(report)
    assert report.runs[0].check("call").status == "fail", dump(report)
