"""KM528 on the real backends: why a wrapper's ``trainable_weights`` override is an error.

A Keras 2 multi-head wrapper copies its template layer into 4 heads and lists only the
heads' weights: tf_keras counts 8 weights. Under Keras 3 (the imports ported, nothing
else) the model has 10 on TensorFlow, JAX and PyTorch: Keras 3 never reads the override
and the template, built by ``Wrapper.build``, joins. What the finding tells the user to
do (end ``build`` with ``self.built = True``) brings it back to 8 on every backend.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kmigrate.run.runner import scan_text
from tests.backend_run import run_module_worker

pytestmark = pytest.mark.backends

LEGACY = textwrap.dedent(
    """
    from tensorflow import keras


    class MultiHead(keras.layers.Wrapper):
        def __init__(self, layer, heads=4, **kwargs):
            super().__init__(layer, **kwargs)
            self.heads = heads

        def build(self, input_shape):
            config = self.layer.get_config()
            self.copies = [
                self.layer.__class__.from_config(dict(config, name=f"head_{i}"))
                for i in range(self.heads)
            ]
            for copy in self.copies:
                copy.build(input_shape)
            super().build(input_shape)

        def call(self, x):
            return self.copies[0](x)

        @property
        def trainable_weights(self):
            return [w for copy in self.copies for w in copy.trainable_weights]


    def build():
        inputs = keras.Input((5,))
        return keras.Model(inputs, MultiHead(keras.layers.Dense(3))(inputs))
    """
).lstrip("\n")

WORKER = textwrap.dedent(
    """
    spec.loader.exec_module(subject)
    model = subject.build()
    print("REPORT" + json.dumps({"weights": len(model.weights)}))
    """
)


def _weights(source: str, backend: str, tmp_path: Path) -> int:
    subject = tmp_path / f"subject_{backend}.py"
    subject.write_text(source)
    return run_module_worker(WORKER, subject, backend, tmp_path)["weights"]


def test_keras3_counts_the_template_the_override_hid(tmp_path) -> None:
    (finding,) = [f for f in scan_text(LEGACY, select=["KM528"]) if f.rule == "KM528"]
    assert finding.severity.value == "error" and "`self.layer`" in finding.message
    assert _weights(LEGACY, "keras2", tmp_path) == 8
    ported = LEGACY.replace("from tensorflow import keras", "import keras")
    fixed = ported.replace("super().build(input_shape)", "self.built = True")
    for backend in ("tensorflow", "jax", "torch"):
        assert _weights(ported, backend, tmp_path) == 10, backend
        assert _weights(fixed, backend, tmp_path) == 8, backend
