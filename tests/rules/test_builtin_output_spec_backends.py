"""KM523 on the real backends: the table of layers with their own ``compute_output_spec``
is what the installed Keras 3 says, and an ``Embedding`` subclass taking ``[segment ids,
memory]`` and returning two tensors (keras-xlnet's ``RelativeSegmentEmbedding``) builds
after `kmigrate apply` and computes what the Keras 2 original did, on tensorflow, jax and
torch; converted without KM523's fix it does not build at all."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kmigrate.api import apply_to_text
from kmigrate.rules.km5_keras2.builtin_output_spec import OWN_OUTPUT_SPEC
from kmigrate.rules.registry import all_rules
from tests.backend_run import (
    migrated_off_tensorflow,
    original_and_migrated,
    run_driver,
    run_on_backend,
)

pytestmark = pytest.mark.backends

TABLE_WORKER = """
import inspect, json
import keras

base = keras.layers.Layer.compute_output_spec
table = {}
for name in dir(keras.layers):
    cls = getattr(keras.layers, name)
    if inspect.isclass(cls) and issubclass(cls, keras.layers.Layer):
        if cls.compute_output_spec is not base:
            owner = next(c for c in cls.__mro__ if "compute_output_spec" in vars(c))
            table[name] = [owner.__name__, ".preprocessing." not in owner.__module__]
print("REPORT" + json.dumps(table))
"""

LAYER = """
from tensorflow import keras
from tensorflow.keras import backend as K


class RelativePairs(keras.layers.Embedding):
    \"\"\"[segment ids, memory] -> which positions share a segment (one-hot), embedded.\"\"\"

    def __init__(self, units, **kwargs):
        super().__init__(input_dim=2, output_dim=units, **kwargs)
        self.units = units

    def compute_output_shape(self, input_shape):
        segment_shape, memory_shape = input_shape
        total = None
        if segment_shape[1] is not None and memory_shape[1] is not None:
            total = segment_shape[1] + memory_shape[1]
        pairs = (segment_shape[0], segment_shape[1], total)
        return [pairs + (2,), pairs + (self.units,)]

    def call(self, inputs):
        segment, memory = inputs
        full = K.concatenate([K.zeros_like(memory[:, :, 0]), segment], axis=1)
        relative = K.not_equal(K.expand_dims(segment, axis=-1), K.expand_dims(full, axis=1))
        relative = K.one_hot(K.cast(relative, "int32"), 2)
        return [relative, K.dot(relative, self.embeddings)]

    def get_config(self):
        config = super().get_config()
        config["units"] = self.units
        return config
"""

# The same script in both folders; `keras` is whatever layer.py binds (tf_keras for the
# Keras 2 original), so the model is built by the Keras the layer belongs to.
DRIVER = """
import json, sys
import numpy as np
sys.path.insert(0, ".")
from layer import RelativePairs, keras

seg = keras.Input((5,), name="seg")
mem = keras.Input((2, 4), name="mem")
relative, embedded = RelativePairs(units=3)([seg, mem])
model = keras.Model([seg, mem], [relative, keras.layers.Dense(2)(embedded)])
model.set_weights([np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(-1, 1, 6).reshape(3, 2),
                   np.array([0.1, -0.2])])
rng = np.random.default_rng(7)
x = [rng.integers(0, 2, (4, 5)).astype("float32"), rng.standard_normal((4, 2, 4)).astype("float32")]
y = [rng.standard_normal((4, 5, 7, 2)).astype("float32") for _ in range(2)]
out = {"keras": keras.layers.Layer.__module__.split(".")[0]}
out["shapes"] = [[None if d is None else int(d) for d in t.shape] for t in model.outputs]
out["predict"] = [p.tolist() for p in model.predict(x, verbose=0)]
model.compile(optimizer=keras.optimizers.SGD(0.1), loss=["mse", "mse"])
model.train_on_batch(x, y)
out["after_step"] = [np.asarray(w).tolist() for w in model.get_weights()]
print("REPORT" + json.dumps(out))
"""


def test_the_table_is_what_the_installed_keras_says(tmp_path: Path) -> None:
    found = run_on_backend([sys.executable, "-c", TABLE_WORKER], "tensorflow", tmp_path)
    assert found == {name: list(row) for name, row in OWN_OUTPUT_SPEC.items()}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    return migrated_off_tensorflow(
        tmp_path_factory, LAYER, DRIVER, "keras.Operation.compute_output_spec(self,"
    )


@pytest.fixture(scope="module")
def reference(folders) -> dict:
    found = run_driver(folders[0], "tensorflow", legacy_keras=True)
    assert found["keras"] == "tf_keras"  # the Keras 2 original
    assert found["shapes"] == [[None, 5, 7, 2], [None, 5, 7, 2]]
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_converted_layer_builds_and_keeps_the_numbers(folders, reference, backend) -> None:
    got = run_driver(folders[1], backend)
    assert got["keras"] == "keras"
    assert got["shapes"] == reference["shapes"]
    for key in ("predict", "after_step"):
        for want, have in zip(reference[key], got[key], strict=True):
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg=key)


def test_without_the_fix_the_converted_model_does_not_build(folders, tmp_path: Path) -> None:
    others = [rule.id for rule in all_rules() if rule.id != "KM523"]
    (tmp_path / "layer.py").write_text(apply_to_text(textwrap.dedent(LAYER), select=others))
    (tmp_path / "driver.py").write_text(DRIVER)
    with pytest.raises(AssertionError, match="'list' object has no attribute 'shape'"):
        run_driver(tmp_path, "tensorflow")


# -- every shape of subclass KM523 fixes, and the one it refuses ----------------------

SHAPES = """
from tensorflow import keras


class TakesList(keras.layers.Embedding):
    def call(self, inputs):
        ids, memory = inputs
        return super().call(ids) + memory


class ReturnsList(keras.layers.Embedding):
    def call(self, inputs):
        out = super().call(inputs)
        return [out, out * 2.0]


class ReturnsTuple(keras.layers.Embedding):
    def call(self, inputs):
        out = super().call(inputs)
        return out, keras.backend.sum(out, axis=-1)


class OtherShape(keras.layers.Embedding):
    def call(self, inputs):
        return keras.backend.sum(super().call(inputs), axis=1)


class ReturnsWeight(keras.layers.Embedding):
    def call(self, inputs):
        return [super().call(inputs), self.embeddings]
"""

SHAPES_DRIVER = """
import json, os, sys
import numpy as np
sys.path.insert(0, ".")
from layer import keras
import layer

skip = set(os.environ.get("SKIP", "").split(",")) - {""}
ids = np.arange(10).reshape(2, 5) % 10
memory = np.linspace(-1, 1, 40).reshape(2, 5, 4).astype("float32")
out = {}
for name in ("TakesList", "ReturnsList", "ReturnsTuple", "OtherShape", "ReturnsWeight"):
    if name in skip:
        continue
    try:
        made = getattr(layer, name)(10, 4, embeddings_initializer="glorot_uniform")
        inputs = [keras.Input((5,), dtype="int32")]
        if name == "TakesList":
            inputs.append(keras.Input((5, 4)))
        result = made(inputs if name == "TakesList" else inputs[0])
        model = keras.Model(inputs, result)
        model.set_weights([np.linspace(-1, 1, 40).reshape(10, 4)])
        y = model.predict([ids, memory] if name == "TakesList" else ids, verbose=0)
        out[name] = [np.asarray(t).tolist() for t in (y if isinstance(y, (list, tuple)) else [y])]
    except Exception as error:
        out[name] = f"{type(error).__name__}: {str(error)[:200]}"
print("REPORT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def shape_folders(tmp_path_factory) -> tuple[Path, Path, dict]:
    original, migrated = original_and_migrated(
        tmp_path_factory, textwrap.dedent(SHAPES), driver=SHAPES_DRIVER
    )
    reference = run_driver(original, "tensorflow", legacy_keras=True)
    return original, migrated, reference


def test_km523_refuses_a_call_returning_a_weight() -> None:
    from kmigrate.api import scan_text

    found = {f["line"]: f for f in scan_text(textwrap.dedent(SHAPES)) if f["rule"] == "KM523"}
    assert len(found) == 5
    refused = [f for f in found.values() if not f["fixable"]]
    assert len(refused) == 1 and "returns `self.embeddings`" in refused[0]["message"]


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_every_fixed_km523_shape_builds_and_predicts_what_keras2_did(shape_folders, backend):
    _, migrated, reference = shape_folders
    got = run_on_backend([sys.executable, "driver.py"], backend, migrated, timeout=300)
    for name in ("TakesList", "ReturnsList", "ReturnsTuple", "OtherShape"):
        assert not isinstance(got[name], str), f"{name} on {backend}: {got[name]}"
        for want, have in zip(reference[name], got[name], strict=True):
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_the_refused_shape_does_not_build_on_jax_with_the_method(tmp_path: Path) -> None:
    """Why KM523 refuses `[output, self.embeddings]`: with the tracing method added by
    hand, the converted model cannot be built on jax."""
    text = apply_to_text(textwrap.dedent(SHAPES))
    text = text.replace(
        "        return [super().call(inputs), self.embeddings]\n",
        "        return [super().call(inputs), self.embeddings]\n\n"
        "    def compute_output_spec(self, *args, **kwargs):\n"
        "        return keras.Operation.compute_output_spec(self, *args, **kwargs)\n",
    )
    (tmp_path / "layer.py").write_text(text)
    (tmp_path / "driver.py").write_text(SHAPES_DRIVER)
    got = run_on_backend([sys.executable, "driver.py"], "jax", tmp_path, timeout=300)
    assert (
        isinstance(got["ReturnsWeight"], str) and "infer the output shape" in got["ReturnsWeight"]
    )
