"""Why calls through an optional TensorFlow import are not rewritten, on real backends.

A multi-backend project (keras-hub's tokenizers and preprocessors have this shape) keeps
TensorFlow for the layers its tf.data pipelines run and imports it as optional. Such a
layer works in a tf.data map on tensorflow, jax and torch. `kmigrate apply` leaves it as
it is; the same layer with a plain (legacy) import is rewritten to keras.ops, which is
right for model code but fails inside tf.data on jax and torch: the break the optional
import tells kmigrate to avoid.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import run_on_backend
from tests.engine.test_optional_imports import LAYER, OPTIONAL

pytestmark = pytest.mark.backends

REQUIRED = """
import keras
import tensorflow as tf
"""

DRIVER = """
import json, sys
sys.path.insert(0, ".")
import tensorflow as tf
from layer import Packer

data = tf.data.Dataset.from_tensor_slices(tf.constant([[[1.5, 2.5]], [[3.5, 4.5]]]))
packer = Packer()
try:
    out = {"rows": [row.numpy().tolist() for row in data.map(packer.call)]}
except Exception as error:  # the failure is the answer for the rewritten layer
    out = {"error": type(error).__name__}
print("REPORT" + json.dumps(out))
"""

ROWS = [[1, 2], [3, 4]]


def _run(folder: Path, source: str, backend: str) -> dict:
    (folder / "layer.py").write_text(source)
    return run_on_backend([sys.executable, "-c", DRIVER], backend, folder, timeout=300)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_optional_import_layer_is_left_working_in_tf_data(tmp_path: Path, backend: str) -> None:
    source = OPTIONAL + LAYER
    migrated = apply_to_text(source)
    assert migrated == source  # reported, not rewritten
    assert _run(tmp_path, migrated, backend) == {"rows": ROWS}


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_the_rewrite_it_avoids_breaks_tf_data_off_tensorflow(tmp_path: Path, backend: str) -> None:
    legacy = REQUIRED + LAYER
    rewritten = apply_to_text(legacy)
    assert "ops.cast(inputs" in rewritten  # legacy code is rewritten
    assert _run(tmp_path, legacy, backend) == {"rows": ROWS}
    assert "error" in _run(tmp_path, rewritten, backend)
