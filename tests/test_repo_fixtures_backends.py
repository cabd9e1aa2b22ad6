"""The fixture repositories after ``apply`` compute what the originals compute, on the
tensorflow, jax and torch backends.

Each fixture with a ``run_model.py`` builds a tiny model from the repository's own layers
(base layers, helpers and backends in other modules) and returns its output on a fixed
input. The original runs where it can: on the TensorFlow backend (``tf.keras`` is Keras
3 there). The converted copy runs on each backend in a fresh process. ``keras2_engine``
(standalone Keras 2, not installed) is covered by scan/apply tests only; the
``keras_core`` project (``keras_core`` is not installed either) is compared with the
formula its layer computes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.repo_fixtures import FAKE_SITE, REPO_NAMES, REPOS, apply_repo, copy_repo

pytestmark = pytest.mark.backends

# pipe/ops.py keeps `import tensorflow`: its `standardize` also serves a tf.data map, so
# it is reported, not rewritten; nets/backend.py keeps its `tf.keras` backend `K`, which
# nets/__init__.py re-exports (changing it would rebind `K` where its uses go unchecked).
# Run last: TensorFlow stays imported after them.
# patched_backend/pkg/backend.py keeps its conditionally bound `K` too: the project
# assigns its own functions onto it. injected_modules/builders/__init__.py keeps the
# `tensorflow.keras` it injects into its builders (KM102: the modules escape into
# `kwargs`); the builders' calls through them are converted.
KEEPS_TENSORFLOW = ("backend_reexport", "injected_modules", "patched_backend", "shared_helper")
# Originals that only run on Keras 2 (tf_keras): registry_helpers applies `K.*` helpers
# to `keras.Input` tensors while building a functional model, which Keras 3 refuses
# ("A KerasTensor cannot be used as input to a TensorFlow function").
KERAS2_ORIGINALS = ("registry_helpers",)
RUNNABLE = sorted(
    (n for n in REPO_NAMES if (REPOS / n / "run_model.py").is_file()),
    key=lambda n: (n in KEEPS_TENSORFLOW, n),
)

# Runs every repository's run_model.outputs() in one process; prints name -> output.
_RUNNER = """
import importlib.util, json, os, sys
results = {}
for root in sys.argv[1:]:
    os.chdir(root)
    sys.path.insert(0, root)
    name = os.path.basename(root)
    spec = importlib.util.spec_from_file_location(f"run_{name}", os.path.join(root, "run_model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results[name] = [module.outputs().tolist(), "tensorflow" in sys.modules]
print(json.dumps(results))
"""


def _outputs(roots: list[Path], backend: str, legacy: bool = False) -> dict[str, np.ndarray]:
    env = dict(os.environ, KERAS_BACKEND=backend, CUDA_VISIBLE_DEVICES="")
    env.pop("TF_USE_LEGACY_KERAS", None)
    if legacy:
        env["TF_USE_LEGACY_KERAS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FAKE_SITE), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, *map(str, roots)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    if backend != "tensorflow" and not legacy:  # the converted models need no TensorFlow
        assert [n for n, (_, tf) in results.items() if tf] in ([], list(KEEPS_TENSORFLOW))
    return {k: np.asarray(v, dtype="float32") for k, (v, _) in results.items()}


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], list[Path]]:
    originals = [copy_repo(n, tmp_path_factory.mktemp("original")) for n in RUNNABLE]
    rewritten = [copy_repo(n, tmp_path_factory.mktemp("converted")) for n in RUNNABLE]
    for root in rewritten:
        assert apply_repo(root) > 0
    return originals, rewritten


@pytest.fixture(scope="module")
def reference(converted) -> dict[str, np.ndarray]:
    keras2 = [r for r in converted[0] if r.name in KERAS2_ORIGINALS]
    keras3 = [r for r in converted[0] if r.name not in KERAS2_ORIGINALS]
    return {**_outputs(keras3, "tensorflow"), **_outputs(keras2, "tensorflow", legacy=True)}


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_converted_fixture_models_match_the_originals(converted, reference, backend) -> None:
    got = _outputs(converted[1], backend)
    assert sorted(got) == sorted(reference) == sorted(RUNNABLE)
    for name in RUNNABLE:
        np.testing.assert_allclose(got[name], reference[name], rtol=1e-5, atol=1e-6, err_msg=name)


_KERAS_CORE_RUNNER = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from kcp.blocks import build
x = np.linspace(-3.0, 3.0, 8, dtype="float32").reshape(2, 4)
print(json.dumps(np.asarray(build(4)(x)).tolist()))
"""


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_converted_keras_core_project_runs_on_keras(tmp_path: Path, backend: str) -> None:
    root = copy_repo("keras_core_project", tmp_path)
    apply_repo(root)
    assert "keras_core" not in (root / "kcp" / "blocks.py").read_text()
    env = dict(os.environ, KERAS_BACKEND=backend, CUDA_VISIBLE_DEVICES="")
    done = subprocess.run(
        [sys.executable, "-c", _KERAS_CORE_RUNNER, str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = np.asarray(json.loads(done.stdout.strip().splitlines()[-1]), dtype="float32")
    x = np.linspace(-3.0, 3.0, 8, dtype="float32").reshape(2, 4)
    np.testing.assert_allclose(got, x / (1.0 + np.exp(-x)), rtol=1e-5, atol=1e-6)


_INTERNAL_BASE_RUN = """
import numpy as np

from aug.layers import Shift


def outputs():
    x = np.linspace(-3.0, 3.0, 12, dtype="float32").reshape(3, 4)
    return np.asarray(Shift()(x))
"""


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_a_layer_on_an_internal_base_matches_once_the_base_is_swapped_as_reported(
    tmp_path: Path, backend: str
) -> None:
    """`apply` converts the inside of a `BaseRandomLayer` subclass and reports the base
    (KM101/KM102: "use keras.layers.Layer as the base ..."); with the base swapped by
    hand as the finding says, the layer computes what the Keras 2 original computes."""
    original = copy_repo("internal_bases", tmp_path / "original")
    converted = copy_repo("internal_bases", tmp_path / "converted")
    assert apply_repo(converted) > 0
    layers = converted / "aug" / "layers.py"
    text = layers.read_text()
    assert "tf." not in text and "ops.mean" in text
    base = "from tensorflow.keras.__internal__.layers import BaseRandomLayer\n"
    assert base in text  # reported, not rewritten
    text = text.replace(base, "import keras\n").replace("(BaseRandomLayer)", "(keras.layers.Layer)")
    layers.write_text(text)
    (converted / "aug" / "image.py").unlink()  # its base has no public Keras 3 form
    for root in (original, converted):
        (root / "run_model.py").write_text(_INTERNAL_BASE_RUN)
    want = _outputs([original], "tensorflow", legacy=True)["internal_bases"]
    got = _outputs([converted], backend)["internal_bases"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
