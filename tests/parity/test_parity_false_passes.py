"""The five ways `kmigrate parity` used to say PASS on a broken conversion (issue 17).

Each test writes its own small original (Keras 2 code) and converted (Keras 3) model, runs
parity on the real backends and shows the weaker check the old parity relied on passing
while the whole run now FAILs and names the layer; then a correct conversion of the same
model PASSes, so the failure is about the broken code and not about the model.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate.parity.cli import parity_command
from kmigrate.parity.plan import ParityOptions
from kmigrate.parity.report import ParityReport
from kmigrate.parity.runner import run_parity

pytestmark = pytest.mark.backends


def write_tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def before_after(
    tmp_path: Path, original: dict, converted: dict, **options
) -> tuple[ParityReport, dict]:
    orig = write_tree(tmp_path / "orig", original)
    conv = write_tree(tmp_path / "conv", converted)
    report = run_parity(
        str(conv / "models.py"),
        reference=f"{orig / 'models.py'}:build_model",
        options=ParityOptions(**options),
    )
    return report, report.to_dict()


def run_of(report: ParityReport, backend: str):
    return next(r for r in report.runs if r.backend == backend)


def dump(data: dict) -> str:
    return json.dumps(data, indent=1)[:4000]


# -- 1. the reference and the converted model share one process -------------------------

ORIGINAL_MODELS = """\
    from tensorflow import keras
    from mylayers import Scale

    def build_model():
        inputs = keras.Input((6,))
        x = keras.layers.Dense(5, name="proj")(inputs)
        return keras.Model(inputs, Scale(name="scale")(x))
"""
CONVERTED_MODELS = ORIGINAL_MODELS.replace("from tensorflow import keras", "import keras")


def scale_layer(body: str, header: str) -> str:
    return f"""\
{header}

class Scale(keras.layers.Layer):
    def call(self, x):
        return {body}
"""


def test_sibling_modules_of_the_same_name_are_never_mixed(tmp_path):
    # orig/mylayers.py and conv/mylayers.py: in one process the converted models.py would
    # get the original's `mylayers` from sys.modules and compare the original with itself
    original = {
        "models.py": ORIGINAL_MODELS,
        "mylayers.py": scale_layer(
            "tf.nn.gelu(x, approximate=False) * 2.0",
            "import tensorflow as tf\nfrom tensorflow import keras",
        ),
    }
    header = "import keras\nfrom keras import ops"
    wrong = {
        "models.py": CONVERTED_MODELS,
        "mylayers.py": scale_layer("ops.gelu(x) * 2.0", header),  # approximate: wrong
    }
    report, data = before_after(tmp_path / "wrong", original, wrong, backends=["tensorflow"])
    assert not report.passed, dump(data)
    run = run_of(report, "tensorflow")
    assert run.status == "fail"
    assert run.divergence is not None and run.divergence.path == "scale", dump(data)

    right = {
        "models.py": CONVERTED_MODELS,
        "mylayers.py": scale_layer("ops.gelu(x, approximate=False) * 2.0", header),
    }
    report, data = before_after(tmp_path / "right", original, right, backends=["tensorflow"])
    assert report.passed, dump(data)


# -- 2. the model is only called eagerly ---------------------------------------------------

SQUARE_ORIGINAL = """\
    import tensorflow as tf
    from tensorflow import keras

    class Square(keras.layers.Layer):
        def call(self, x):
            return tf.square(x)

    def build_model():
        inputs = keras.Input((6,))
        x = keras.layers.Dense(4, name="proj")(inputs)
        return keras.Model(inputs, Square(name="square")(x))
"""


def square_converted(body: str) -> str:
    return f"""\
    import keras
    import tensorflow as tf
    from keras import ops

    class Square(keras.layers.Layer):
        def call(self, x):
            return {body}

        def compute_output_shape(self, input_shape):
            return input_shape

    def build_model():
        inputs = keras.Input((6,))
        x = keras.layers.Dense(4, name="proj")(inputs)
        return keras.Model(inputs, Square(name="square")(x))
"""


def test_a_layer_that_only_works_eagerly_fails_in_predict(tmp_path):
    # tf.square on a concrete jax array goes through NumPy and works; under jit (predict)
    # it meets a tracer. The eager call, all the old parity ran, agrees.
    original = {"models.py": SQUARE_ORIGINAL}
    wrong = {"models.py": square_converted("tf.square(x)")}
    report, data = before_after(
        tmp_path / "wrong", original, wrong, backends=["jax"], checks=("call", "predict")
    )
    jax = run_of(report, "jax")
    assert jax.check("call").status == "pass", dump(data)  # the old verdict: PASS
    predict = jax.check("predict")
    assert predict.status == "error" and predict.layer == "'square' (Square)", dump(data)
    assert not report.passed
    # the converted file still imports TensorFlow, and the report says where
    assert jax.tensorflow["needs_tensorflow"] is True
    assert jax.tensorflow["importer"]["line"] == 2
    assert jax.tensorflow["importer"]["code"] == "import tensorflow as tf"

    right = {
        "models.py": square_converted("ops.square(x)").replace("    import tensorflow as tf\n", "")
    }
    report, data = before_after(
        tmp_path / "right", original, right, backends=["jax"], checks=("call", "predict")
    )
    assert report.passed, dump(data)
    assert run_of(report, "jax").tensorflow == {"needs_tensorflow": False, "importer": None}


# -- 3. the original ran on Keras 3 -------------------------------------------------------

GELU_ORIGINAL = """\
    import tensorflow as tf
    from tensorflow import keras

    def tanh_gelu(x):
        return 0.5 * x * (1.0 + tf.tanh(0.7978845608 * (x + 0.044715 * tf.pow(x, 3))))

    keras.utils.get_custom_objects()["gelu"] = tanh_gelu  # wins over the built-in in Keras 2

    def build_model():
        inputs = keras.Input((6,))
        x = keras.layers.Dense(16, activation="gelu", name="ffn")(inputs)
        return keras.Model(inputs, keras.layers.Dense(3, name="head")(x))
"""


def gelu_converted(activation: str) -> str:
    return f"""\
    import keras
    from keras import ops

    def tanh_gelu(x):
        return 0.5 * x * (1.0 + ops.tanh(0.7978845608 * (x + 0.044715 * ops.power(x, 3))))

    keras.utils.get_custom_objects()["gelu"] = tanh_gelu  # loses to the built-in in Keras 3

    def build_model():
        inputs = keras.Input((6,))
        x = keras.layers.Dense(16, activation={activation}, name="ffn")(inputs)
        return keras.Model(inputs, keras.layers.Dense(3, name="head")(x))
"""


def test_keras2_code_is_checked_against_keras2(tmp_path):
    original = {"models.py": GELU_ORIGINAL}
    wrong = {"models.py": gelu_converted('"gelu"')}  # the exact built-in gelu on Keras 3
    common = {"backends": ["tensorflow"], "checks": ("call",)}
    report, data = before_after(tmp_path / "k3", original, wrong, reference_keras="3", **common)
    assert report.passed, dump(data)  # the old default: Keras 3 ran the original too
    assert "tf_keras" not in report.reference.keras

    report, data = before_after(tmp_path / "k2", original, wrong, **common)
    assert report.reference.keras.endswith("(tf_keras)"), dump(data)
    assert "Keras 2 code" in data["reference_reason"]
    assert not report.passed, dump(data)
    assert run_of(report, "tensorflow").divergence.path == "ffn"

    right = {"models.py": gelu_converted("tanh_gelu")}
    report, data = before_after(tmp_path / "right", original, right, **common)
    assert report.passed, dump(data)


# -- 4. training is never checked ---------------------------------------------------------

TRAINING_ORIGINAL = """\
    import tensorflow as tf
    from tensorflow import keras

    class Drop(keras.layers.Layer):
        def call(self, x, training=None):
            if training:
                return tf.nn.dropout(x, rate=0.5)
            return x

    class Center(keras.layers.Layer):
        def call(self, x):
            x = tf.nn.relu(x)
            x -= tf.reduce_mean(x, axis=-1, keepdims=True)
            return x

    def build_model():
        inputs = keras.Input((6,))
        x = keras.layers.Dense(8, name="proj")(inputs)
        x = Center(name="center")(Drop(name="drop")(x))
        return keras.Model(inputs, keras.layers.Dense(2, name="head")(x))
"""

CORRECT_DROP = """\
class Drop(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(7)

    def call(self, x, training=None):
        if training:
            return keras.random.dropout(x, 0.5, seed=self.seed_generator)
        return x
"""
CORRECT_CENTER = """\
class Center(keras.layers.Layer):
    def call(self, x):
        x = ops.relu(x)
        return x - ops.mean(x, axis=-1, keepdims=True)
"""
TRAINING_BUILD = """\
def build_model():
    inputs = keras.Input((6,))
    x = keras.layers.Dense(8, name="proj")(inputs)
    x = Center(name="center")(Drop(name="drop")(x))
    return keras.Model(inputs, keras.layers.Dense(2, name="head")(x))
"""


def training_converted(drop: str = CORRECT_DROP, center: str = CORRECT_CENTER) -> dict:
    text = "import keras\nfrom keras import ops\n\n\n" + drop + "\n\n" + center + "\n\n"
    return {"models.py": text + TRAINING_BUILD}


KWARGS_DROP = CORRECT_DROP.replace(
    "    def call(self, x, training=None):\n",
    "    def call(self, x, **kwargs):\n        training = kwargs.get('training')\n",
)
UNSEEDED_DROP = CORRECT_DROP.replace(", seed=self.seed_generator", "")
IN_PLACE_CENTER = """\
class Center(keras.layers.Layer):
    def call(self, x):
        x = ops.relu(x)
        x -= ops.mean(x, axis=-1, keepdims=True)
        return x
"""


@pytest.mark.parametrize(
    ("case", "backend", "converted", "layer", "words"),
    [
        ("training from **kwargs", "tensorflow", {"drop": KWARGS_DROP}, "'drop'", "never sees"),
        ("in-place x -= y", "torch", {"center": IN_PLACE_CENTER}, "'center' (Center)", "inplace"),
        ("unseeded dropout", "jax", {"drop": UNSEEDED_DROP}, "'drop' (Drop)", "seed"),
    ],
)
def test_a_layer_that_breaks_only_in_training_fails(
    tmp_path, case, backend, converted, layer, words
):
    original = {"models.py": TRAINING_ORIGINAL}
    report, data = before_after(
        tmp_path, original, training_converted(**converted), backends=[backend]
    )
    run = run_of(report, backend)
    assert run.check("call").status == "pass", dump(data)  # the old verdict: PASS
    assert run.check("predict").status == "pass", dump(data)
    train = run.check("train")
    assert train.status in ("fail", "error"), dump(data)
    assert train.layer == layer, dump(data)
    text = " ".join(train.detail) + (train.error.message if train.error else "")
    assert words in text.lower() or words in text, dump(data)
    assert not report.passed


def test_a_correct_conversion_passes_the_training_step(tmp_path):
    original = {"models.py": TRAINING_ORIGINAL}
    report, data = before_after(
        tmp_path, original, training_converted(), backends=["tensorflow", "jax", "torch"]
    )
    assert report.passed, dump(data)
    for run in report.runs:
        train = run.check("train")
        assert train.status == "pass"
        assert "random layers called with training=False: drop" in train.detail[-1]
        names = {d.name for d in train.diffs}
        assert "loss" in names and any("proj" in n for n in names)


# -- 5. one integer range for every input --------------------------------------------------

BERT_ORIGINAL = """\
    import tensorflow as tf
    from tensorflow import keras

    def build_model():
        ids = keras.Input((8,), dtype="int32", name="ids")
        segments = keras.Input((8,), dtype="int32", name="segments")
        tokens = keras.layers.Embedding(300, 6, name="tokens")(ids)
        types = keras.layers.Embedding(2, 6, name="types")(segments)
        x = keras.layers.Add(name="sum")([tokens, types])
        x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
        return keras.Model([ids, segments], keras.layers.Dense(3, name="head")(x))
"""
BERT_CONVERTED = BERT_ORIGINAL.replace(
    "    import tensorflow as tf\n    from tensorflow import keras\n", "    import keras\n"
)


def test_each_input_gets_its_own_range(tmp_path):
    original = {"models.py": BERT_ORIGINAL}
    converted = {"models.py": BERT_CONVERTED}
    common = {"backends": ["tensorflow"], "checks": ("call",)}
    # what one --int-high for every input did: segment ids up to 9 crash the reference
    report, data = before_after(
        tmp_path / "one",
        original,
        converted,
        input_specs=[_spec("segments:int32:0:10")],
        **common,
    )
    assert report.reference.status == "error" and not report.passed, dump(data)

    report, data = before_after(tmp_path / "inferred", original, converted, **common)
    assert report.passed, dump(data)
    ranges = {x["name"]: (x["low"], x["high"], x["range_from"]) for x in data["inputs"]}
    assert ranges == {
        "ids": (0, 300, "input_dim of Embedding 'tokens'"),
        "segments": (0, 2, "input_dim of Embedding 'types'"),
    }


def test_input_specs_on_the_command_line(tmp_path):
    orig = write_tree(tmp_path / "orig", {"models.py": BERT_ORIGINAL})
    conv = write_tree(tmp_path / "conv", {"models.py": BERT_CONVERTED})
    result = CliRunner().invoke(
        parity_command,
        [
            str(conv / "models.py"),
            "--reference",
            str(orig / "models.py"),
            "--input",
            "ids:int32:0:50",
            "--input",
            "segments:int32:0:2",
            "--backends",
            "tensorflow,jax",
            "--format",
            "json",
        ],
        catch_exceptions=False,
    )
    data = json.loads(result.output)
    assert result.exit_code == 0, dump(data)
    assert [(x["name"], x["high"], x["range_from"]) for x in data["inputs"]] == [
        ("ids", 50, "--input"),
        ("segments", 2, "--input"),
    ]


def _spec(text: str):
    from kmigrate.parity.inputs import parse_input_spec  # noqa: PLC0415

    return parse_input_spec(text)


# -- OpenVINO: a real, inference-only target ----------------------------------------------


def test_openvino_predicts_the_reference_numbers(tmp_path):
    original = {"models.py": GELU_ORIGINAL.replace('activation="gelu"', 'activation="relu"')}
    converted = {"models.py": gelu_converted('"relu"')}
    report, data = before_after(tmp_path, original, converted, backends=["openvino"])
    assert report.passed, dump(data)
    (run,) = report.runs
    assert [c.name for c in run.checks] == ["predict"]
    assert run.check("predict").diffs[0].max_abs < 1e-5
