"""KM510 on the real backends: `compute_output_shape` written for `tf.TensorShape`
answers the same after the rewrite on TensorFlow, JAX and PyTorch as the Keras 2 original
did, including the `tf.TensorShape(input_shape).as_list()` idiom (tensorflow/addons'
Maxout), which an earlier rewrite turned into `tuple(input_shape).as_list()`."""

from __future__ import annotations

import sys
import textwrap

import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    import tensorflow as tf


    class Maxout(tf.keras.layers.Layer):
        def __init__(self, num_units, **kwargs):
            super().__init__(**kwargs)
            self.num_units = num_units

        def compute_output_shape(self, input_shape):
            input_shape = tf.TensorShape(input_shape).as_list()
            input_shape[-1] = self.num_units
            return tf.TensorShape(input_shape)


    class Project(tf.keras.layers.Layer):
        def compute_output_shape(self, input_shape):
            shape = tf.TensorShape([input_shape[0], 4])
            return shape
    """
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    import importlib.util, json, sys
    spec = importlib.util.spec_from_file_location("subject", sys.argv[1])
    subject = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(subject)

    def plain(shape):
        dims = shape.as_list() if hasattr(shape, "as_list") else shape
        return [None if d is None else int(d) for d in dims]

    maxout = subject.Maxout(3).compute_output_shape((None, 12))
    project = subject.Project().compute_output_shape((5, 7))
    print("RESULT " + json.dumps({
        "maxout": plain(maxout), "project": plain(project),
        "types": [type(maxout).__name__, type(project).__name__],
    }))
    """
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("km510")
    converted = apply_to_text(LEGACY, select=["KM510"])
    assert "input_shape = list(input_shape)" in converted
    assert "return tuple(input_shape)" in converted
    (root / "legacy.py").write_text(LEGACY)
    (root / "converted.py").write_text(converted)
    (root / "worker.py").write_text(WORKER)
    return root


def _run(folder, name: str, backend: str, legacy_keras: bool = False) -> dict:
    argv = [sys.executable, str(folder / "worker.py"), str(folder / name)]
    return run_on_backend(argv, backend, folder, legacy_keras=legacy_keras, tag="RESULT ")


@pytest.fixture(scope="module")
def original(folder) -> dict:
    found = _run(folder, "legacy.py", "tensorflow", legacy_keras=True)
    assert found["maxout"] == [None, 3] and found["project"] == [5, 4]
    return found


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_converted_shapes_match_the_keras2_original(folder, original, backend) -> None:
    converted = _run(folder, "converted.py", backend)
    assert (converted["maxout"], converted["project"]) == (original["maxout"], original["project"])
    assert converted["types"] == ["tuple", "tuple"]  # what Keras 3 expects back
