"""A `tf_keras` module using the two Keras 2 names whose Keras 3 call computes something
else (`rules/common/call_differences.py`) keeps computing tf_keras's numbers after
`kmigrate apply`, on tensorflow, jax and torch.

Two twin modules: `ready` writes what Keras 3 needs (`Lion(learning_rate=1e-4)`, `axis=`
by keyword), so its import becomes `import keras`; `refused` leaves Lion's rate to the
default and passes `axis` fourth, so apply keeps it on tf_keras. Its axis is 1, the
classes of a (batch, classes, steps) batch; `ready` keeps the classes last, since Keras 3
takes only axis=-1 on TensorFlow (and JAX checks shapes as if it were -1). The reference
is both modules as written, on tf_keras. Compared: the losses and the weights after a few
Lion steps. The naive swap of `refused` (what apply did before) is run too, to show that
the refusal is needed: with 3 classes and 3 steps its shapes still fit, and its numbers
differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import original_and_migrated, run_on_backend

pytestmark = pytest.mark.backends

READY = """
import tf_keras as keras


def loss(labels, probs):
    return keras.losses.sparse_categorical_crossentropy(labels, probs, False, axis=-1)


def train(x, y):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, kernel_initializer="ones")])
    model.compile(optimizer=keras.optimizers.Lion(learning_rate=1e-4), loss="mse")
    model.fit(x, y, batch_size=2, epochs=2, shuffle=False, verbose=0)
    return model.get_weights()
"""
REFUSED = READY.replace("learning_rate=1e-4", "").replace("axis=-1", "1")

DRIVER = """
import json, sys
sys.path.insert(0, ".")
import numpy as np
import ready, refused

labels = np.array([[0, 2, 1], [1, 1, 2]], "int32")
logits = np.sin(np.arange(18, dtype="float32")).reshape(2, 3, 3) * 2.0
probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
x = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(4, 3)
y = np.array([[3.0, -2.0], [2.5, -1.0], [-3.0, 2.0], [-2.0, 1.5]], "float32")
out = {}
for name, module in (("ready", ready), ("refused", refused)):
    out[name + ".loss"] = np.asarray(module.loss(labels, probs)).tolist()
    out[name + ".weights"] = [np.asarray(w).tolist() for w in module.train(x, y)]
print("REPORT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    original, migrated = original_and_migrated(tmp_path_factory, READY, "ready.py", DRIVER)
    (original / "refused.py").write_text(REFUSED)
    (migrated / "refused.py").write_text(apply_to_text(REFUSED))
    return original, migrated


@pytest.fixture(scope="module")
def reference(folders) -> dict:
    return run_on_backend([sys.executable, "driver.py"], "tensorflow", folders[0], timeout=300)


def _assert_same(got: dict, expected: dict, keys: list[str]) -> None:
    for key in keys:
        for a, b in zip(got[key], expected[key], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=key)


def test_apply_swaps_only_the_module_whose_calls_show_what_keras3_needs(folders) -> None:
    migrated = folders[1]
    assert (migrated / "ready.py").read_text().startswith("\nimport keras\n")
    assert (migrated / "refused.py").read_text() == REFUSED


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_what_apply_writes_computes_tf_kerass_numbers(folders, reference, backend: str) -> None:
    got = run_on_backend([sys.executable, "driver.py"], backend, folders[1], timeout=300)
    assert sorted(got) == sorted(reference)
    _assert_same(got, reference, sorted(reference))


def test_the_naive_swap_of_the_refused_module_computes_other_numbers(
    folders, reference, tmp_path: Path
) -> None:
    (tmp_path / "ready.py").write_text(READY)
    (tmp_path / "refused.py").write_text(REFUSED.replace("import tf_keras as", "import"))
    (tmp_path / "driver.py").write_text(DRIVER)
    got = run_on_backend([sys.executable, "driver.py"], "jax", tmp_path, timeout=300)
    _assert_same(got, reference, ["ready.loss", "ready.weights"])
    for key in ("refused.loss", "refused.weights"):
        with pytest.raises(AssertionError):
            _assert_same(got, reference, [key])
