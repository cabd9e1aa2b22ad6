"""KM108's claim about ``from tensorflow.keras import backend as K`` on TensorFlow 2.16+,
checked against the installed Keras 3: the list KM108 reads
(``rules/data/tf_keras3_backend.txt``) is what ``tf.keras.backend`` holds, and the Keras 2
functions it keeps there run (so KM108 must not say the line fails, only that the
import cannot move to ``keras`` while they are called)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kmigrate.api import scan_text
from kmigrate.rules.common.keras_api import tf_keras3_backend
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

WORKER = r"""
import json
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K
import keras

x = tf.constant(np.arange(24, dtype="float32").reshape(2, 3, 4))
ran = {
    "int_shape": list(K.int_shape(x)),
    "batch_dot": list(K.batch_dot(x, x, axes=[2, 2]).shape),
    "tile": list(K.tile(x, [1, 2, 1]).shape),
    "mean": float(K.mean(x)),
}
names = sorted(n for n in dir(K) if not n.startswith("_"))
print("REPORT" + json.dumps({"keras": keras.__version__, "module": K.__name__,
                             "names": names, "ran": ran}))
"""


@pytest.fixture(scope="module")
def tf_keras_backend(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("tfkeras")
    (work / "worker.py").write_text(WORKER)
    return run_on_backend([sys.executable, "worker.py"], "tensorflow", work)


def test_the_list_is_the_installed_namespace(tf_keras_backend: dict) -> None:
    assert tf_keras_backend["module"].startswith("keras._tf_keras")  # Keras 3's tf.keras
    assert frozenset(tf_keras_backend["names"]) == tf_keras3_backend(), (
        "rules/data/tf_keras3_backend.txt is stale: run scripts/gen_keras_api.py"
    )


def test_the_kept_functions_run(tf_keras_backend: dict) -> None:
    assert tf_keras_backend["ran"] == {
        "int_shape": [2, 3, 4],
        "batch_dot": [2, 3, 3],
        "tile": [2, 6, 4],
        "mean": 11.5,
    }


@pytest.mark.parametrize("call", ["K.tile(x, [1, 2])", "K.batch_dot(x, x)", "K.mean(x)"])
def test_km108_no_longer_says_the_line_fails_through_tf_keras(call: str) -> None:
    # data code (a tf.data map): there KM108 speaks; in model code KM201 rewrites the call
    code = (
        "import tensorflow as tf\nfrom tensorflow.keras import backend as K\n\n\n"
        f"def stats(x):\n    return {call}\n\n\ntf.data.Dataset.range(2).map(stats)\n"
    )
    (found,) = [f for f in scan_text(code) if f["rule"] == "KM108"]
    assert found["severity"] == "info" and "fails" not in found["message"], found
    assert "still has" in found["message"]
    code = code.replace("from tensorflow.keras import backend as K", "import keras.backend as K")
    (found,) = [f for f in scan_text(code) if f["rule"] == "KM108"]
    assert found["severity"] == "warning" and "fails once Keras 3 is installed" in found["message"]


def test_the_data_file_is_the_generated_one() -> None:
    text = (Path(__file__).parents[2] / "rules" / "data" / "tf_keras3_backend.txt").read_text()
    assert text.startswith("# tf.keras.backend under keras ")
