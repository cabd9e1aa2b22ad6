"""KM532 on the real backends: the flagged layer (a sub-layer made in ``build``, an own
``compute_output_shape``) leaves the model without the sub-layer's weights under Keras 3
on tensorflow, jax and torch, where tf_keras has them; the form the finding asks for
(build the sub-layer in ``build``) has them on all three, and predicts what tf_keras
predicts with the same weights."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kmigrate.rules.km5_keras2.unbuilt_sub_layer import UnbuiltSubLayer
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

FLAGGED, BUILT = (textwrap.dedent(e.before) for e in UnbuiltSubLayer.examples[:2])
WORKER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    legacy = sys.argv[2] == "keras2"
    if legacy:
        from tensorflow import keras
    else:
        import keras
    source = open(sys.argv[1]).read()
    if legacy:
        source = source.replace("import keras", "from tensorflow import keras")
    namespace = {}
    exec(source, namespace)
    inputs = keras.Input((3,))
    model = keras.Model(inputs, namespace["Block"]()(inputs))
    weights_when_made = len(model.weights)
    if weights_when_made:
        model.set_weights([np.full(w.shape, 0.25, "float32") for w in model.weights])
    out = model.predict(np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3), verbose=0)
    print("REPORT" + json.dumps({"weights": weights_when_made, "out": out.tolist()}))
    """
)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_sub_layer_has_weights_only_once_built_in_build(backend: str, tmp_path: Path) -> None:
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    found = {}
    for name, text in {"flagged": FLAGGED, "built": BUILT}.items():
        (tmp_path / f"{name}.py").write_text(text)
        argv = [sys.executable, str(worker), str(tmp_path / f"{name}.py")]
        found[name] = run_on_backend([*argv, "keras3"], backend, tmp_path)
        found[f"{name}_keras2"] = run_on_backend(
            [*argv, "keras2"], "tensorflow", tmp_path, legacy_keras=True
        )
    assert found["flagged_keras2"]["weights"] == 2, json.dumps(found)
    assert found["flagged"]["weights"] == 0, json.dumps(found)  # what KM532 warns of
    assert found["built"]["weights"] == 2, json.dumps(found)
    same = np.allclose(found["built"]["out"], found["flagged_keras2"]["out"], atol=1e-6)
    assert same, json.dumps(found)
