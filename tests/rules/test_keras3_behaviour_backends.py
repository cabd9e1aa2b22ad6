"""KM515 and KM519 rewrites on the real backends (issue 18): the converted code does on
TensorFlow, JAX and PyTorch what the Keras 2 code did, and the unconverted code does not.

The converted code comes from the engine (``apply_to_text``), never from a hand-written
copy. Each backend runs in its own subprocess (``KERAS_BACKEND`` is read once, at import).

- KM515: a layer reading ``kwargs.get("training")`` applies its dropout in ``fit`` after
  the rewrite (fit's loss with a zero learning rate differs from ``evaluate``'s, and
  ``model(x, training=True)`` zeroes about half of the values), where the original
  silently never does (fit's loss equals evaluate's).
- KM519: ``activation="gelu"`` with a custom ``gelu`` registered computes the custom
  function after the rewrite, where Keras 3 gives the built-in to the original.
"""

from __future__ import annotations

import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

BACKENDS = ("tensorflow", "jax", "torch")

LEGACY = textwrap.dedent(
    '''
    import keras


    def gelu(x):
        """The custom activation the model was trained with: not Keras's gelu."""
        return 2.0 * x


    keras.utils.get_custom_objects()["gelu"] = gelu


    class TrainingDropout(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = keras.random.SeedGenerator(7)

        def call(self, x, **kwargs):
            if kwargs.get("training"):
                return keras.random.dropout(x, 0.5, seed=self.seed_generator)
            return x


    def build():
        inputs = keras.Input((64,))
        hidden = keras.layers.Dense(64, activation="gelu", kernel_initializer="identity")(inputs)
        return keras.Model(inputs, TrainingDropout()(hidden))
    '''
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    import importlib.util, json, sys
    import numpy as np
    import keras

    spec = importlib.util.spec_from_file_location("subject", sys.argv[1])
    subject = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(subject)
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).uniform(0.5, 1.0, (32, 64)).astype("float32")
    model = subject.build()
    inference = keras.ops.convert_to_numpy(model(x, training=False))
    training = keras.ops.convert_to_numpy(model(x, training=True))
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    fit_loss = model.fit(x, x, batch_size=32, epochs=1, verbose=0).history["loss"][0]
    eval_loss = model.evaluate(x, x, batch_size=32, verbose=0)
    result = {
        "backend": keras.backend.backend(),
        "custom_activation": bool(np.allclose(inference, 2.0 * x, atol=1e-5)),
        "zero_share_training": float(np.mean(training == 0.0)),
        "zero_share_inference": float(np.mean(inference == 0.0)),
        "fit_loss": float(fit_loss),
        "eval_loss": float(eval_loss),
    }
    print("RESULT " + json.dumps(result))
    """
)


def _run(module: Path, backend: str) -> dict:
    argv = [sys.executable, str(module.parent / "worker.py"), str(module)]
    result = run_on_backend(argv, backend, module.parent, tag="RESULT ")
    assert result["backend"] == backend
    return result


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[tuple[str, str], dict]:
    root = tmp_path_factory.mktemp("keras3_behaviour")
    (root / "worker.py").write_text(WORKER)
    converted = apply_to_text(LEGACY, select=["KM515", "KM519"])
    assert "def call(self, x, training=None, **kwargs):" in converted
    assert 'activation=gelu, kernel_initializer="identity"' in converted
    (root / "legacy.py").write_text(LEGACY)
    (root / "converted.py").write_text(converted)
    jobs = [(name, b) for name in ("legacy", "converted") for b in BACKENDS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        outs = pool.map(lambda job: _run(root / f"{job[0]}.py", job[1]), jobs)
    return dict(zip(jobs, outs))


@pytest.mark.parametrize("backend", BACKENDS)
def test_converted_dropout_is_active_in_training(results, backend) -> None:
    got = results[("converted", backend)]
    assert 0.35 < got["zero_share_training"] < 0.65
    assert got["zero_share_inference"] == 0.0
    assert abs(got["fit_loss"] - got["eval_loss"]) > 0.1 * got["eval_loss"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_unconverted_dropout_is_silently_off(results, backend) -> None:
    got = results[("legacy", backend)]
    assert got["zero_share_training"] == 0.0
    assert got["fit_loss"] == pytest.approx(got["eval_loss"], rel=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_activation_survives_only_after_the_rewrite(results, backend) -> None:
    assert results[("converted", backend)]["custom_activation"] is True
    assert results[("legacy", backend)]["custom_activation"] is False
