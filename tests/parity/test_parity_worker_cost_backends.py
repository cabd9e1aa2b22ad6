"""What a batched worker no longer does twice (issue 34), on the real frameworks.

The Keras 2 reference's training step traces its train function once: its optimizer is
built before the step, not inside the first trace (which made TensorFlow trace the step
twice), and the step gives the same loss and the same updated weights as the step Keras
builds itself; a step that raises with the optimizer built first is run again Keras's own
way, from the same weights. And a worker of several models hides the framework's heap from
the garbage collector, so the full collection after each model walks only the models' own
objects."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

DRIVER = textwrap.dedent(
    """
    import json
    from types import SimpleNamespace

    import numpy as np
    import tf_keras as keras

    from kmigrate.parity.model_layers import ModelLayers
    from kmigrate.parity.runtime import KerasRuntime
    from kmigrate.parity.train_step import TrainingCheck

    def model():
        keras.utils.set_random_seed(0)
        inputs = keras.Input((6,))
        x = keras.layers.Dense(8, activation="relu", name="hidden")(inputs)
        x = keras.layers.Dropout(0.5, name="drop")(x)
        return keras.Model(inputs, keras.layers.Dense(3, name="out")(x))

    def check(built):
        runtime = KerasRuntime({"backend": "tensorflow", "keras": 2})
        runtime.import_keras({"notes": []})
        worker = SimpleNamespace(
            task={"role": "reference"}, runtime=runtime, model=built, keras=keras,
            layers=ModelLayers(built, runtime.to_numpy), to_numpy=runtime.to_numpy,
        )
        worker.snapshot_state = lambda: [(v, np.array(v.numpy())) for v in built.variables]
        worker.restore_state = lambda snap: [v.assign(a) for v, a in snap]
        x = np.random.default_rng(1).standard_normal((4, 6)).astype("float32")
        worker.model_args = lambda inputs=None: x
        return TrainingCheck(worker), worker

    y = np.random.default_rng(2).standard_normal((4, 3)).astype("float32")
    report = {}
    for name, state in (("keras", False), ("prebuilt", True)):
        built = model()
        training, worker = check(built)
        snapshot = worker.snapshot_state()
        loss = training.step(y, {"drop"}, snapshot if state else None)
        report[name] = {
            "loss": loss,
            "traces": built.train_function.experimental_get_tracing_count(),
            "weights": [w.numpy().tolist() for w in built.trainable_weights],
        }
    # a step that raises with the optimizer built first: run again the Keras way
    built = model()
    training, worker = check(built)
    snapshot = worker.snapshot_state()
    calls = []
    real = built.train_on_batch

    def flaky(*args, **kwargs):
        calls.append(getattr(built.optimizer, "_built", False))
        if len(calls) == 1:
            for v in built.trainable_weights:
                v.assign(v + 1.0)  # as if half a step ran
            raise ValueError("refused with the optimizer built first")
        return real(*args, **kwargs)

    built.train_on_batch = flaky
    loss = training.step(y, {"drop"}, snapshot)
    report["retried"] = {
        "loss": loss,
        "built_before": calls,
        "weights": [w.numpy().tolist() for w in built.trainable_weights],
    }
    print("REPORT" + json.dumps(report))
    """
)


def test_the_keras2_step_traces_once_with_the_same_numbers(tmp_path):
    (tmp_path / "driver.py").write_text(DRIVER, encoding="utf-8")
    report = run_on_backend(
        [sys.executable, "driver.py"], "tensorflow", tmp_path, legacy_keras=True
    )
    keras_way, prebuilt, retried = report["keras"], report["prebuilt"], report["retried"]
    assert keras_way["traces"] == 2  # variables made in the first trace: traced again
    assert prebuilt["traces"] == 1
    assert prebuilt["loss"] == keras_way["loss"]  # bit for bit
    assert prebuilt["weights"] == keras_way["weights"]
    # the retry starts from the snapshot (the +1.0 is undone) with a fresh optimizer
    assert retried["built_before"] == [True, False]
    assert retried["loss"] == keras_way["loss"]
    assert retried["weights"] == keras_way["weights"]


FREEZE = textwrap.dedent(
    """
    import gc
    import json
    import sys

    from kmigrate.parity.isolation import prepare_process

    tasks = [{"keras": 3}] * int(sys.argv[1])
    prepare_process(tasks)
    print("REPORT" + json.dumps({
        "frozen": gc.get_freeze_count(),
        "tracked": len(gc.get_objects()),
        "keras": "keras" in sys.modules,
    }))
    """
)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_a_batched_worker_hides_the_framework_from_the_collector(tmp_path, backend):
    """After the framework's import, a batched worker freezes what is alive: the full
    collection Keras's ``clear_session`` runs after every model walks only what the models
    made since (not the framework's heap); a worker of one model changes nothing."""
    (tmp_path / "freeze.py").write_text(FREEZE, encoding="utf-8")
    batched = run_on_backend([sys.executable, "freeze.py", "2"], backend, tmp_path)
    assert batched["keras"]
    assert batched["frozen"] > 100_000  # the framework's objects
    assert batched["tracked"] < batched["frozen"] / 10  # what the collector still walks
    alone = run_on_backend([sys.executable, "freeze.py", "1"], backend, tmp_path)
    assert alone == {"frozen": 0, "tracked": alone["tracked"], "keras": False}
