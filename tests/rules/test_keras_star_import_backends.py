"""KM109 on Keras 3: what the finding says is true. A name a Keras 2 star import gave a
module (`K` from ``from keras.models import *``) is undefined under Keras 3, and the
import the finding asks for makes the module run (after ``apply`` converts its calls)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from kmigrate.rules.km1_imports.keras_star_import import KerasStarImport
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

FLAGGED, FIXED = (textwrap.dedent(e.before) for e in KerasStarImport.examples[:2])
WORKER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    namespace = {}
    try:
        exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), namespace)
        y = np.array([[1.0, 2.0]], "float32")
        value = float(np.asarray(namespace["mean_loss"](y, y * 3.0)))
        print("REPORT" + json.dumps({"value": value}))
    except NameError as error:
        print("REPORT" + json.dumps({"name_error": str(error)}))
    """
)


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_the_star_imported_name_is_undefined_on_keras3_and_the_advised_import_runs(
    backend: str, tmp_path: Path
) -> None:
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    results = {}
    for name, text in {"flagged": FLAGGED, "fixed": apply_to_text(FIXED)}.items():
        (tmp_path / f"{name}.py").write_text(text)
        argv = [sys.executable, str(worker), str(tmp_path / f"{name}.py")]
        results[name] = run_on_backend(argv, backend, tmp_path)
    assert results["flagged"] == {"name_error": "name 'K' is not defined"}, results
    assert results["fixed"]["value"] == pytest.approx(10.0), json.dumps(results)
    assert "K.mean" not in apply_to_text(FIXED)  # the calls became keras.ops
