"""The sample training script, after `kmigrate apply`, saves `.keras` files that reload on
TensorFlow, JAX and PyTorch and predict exactly what the saved model predicted.

The migrated script runs on TensorFlow (its custom loop and tf.data pipeline are
TensorFlow by design: KM601/KM602 say so). A small driver wraps `keras.Model.save` to
record, at the moment of every `.keras` save (ModelCheckpoint's included), the saved
model's predictions on a fixed batch. Each backend then reloads every `.keras` file in
its own process and predicts the same batch.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "training_script"
ARCHITECTURES = ("simple", "residual")
NOISE = ("I0000", "WARNING: All log", "cpu_feature_guard", "To enable the following", "E0000")

DRIVER = """
import runpy
import sys

import numpy as np
import keras

sys.path.insert(0, ".")
from models import IMG_SIZE

batch = np.random.default_rng(7).random((8, IMG_SIZE, IMG_SIZE, 3), dtype=np.float32)
np.save("batch.npy", batch)
original_save = keras.Model.save


def recording_save(self, filepath, *args, **kwargs):
    original_save(self, filepath, *args, **kwargs)
    if str(filepath).endswith(".keras"):
        np.save(str(filepath) + ".saved.npy", self.predict(batch, verbose=0))


keras.Model.save = recording_save
for arch in sys.argv[1:]:
    sys.argv = ["train.py", "--out", "out_" + arch, "--epochs", "1", "--arch", arch]
    runpy.run_path("train.py", run_name="__main__")
"""

RELOAD = """
import glob

import numpy as np
import keras

batch = np.load("batch.npy")
for path in sorted(glob.glob("out_*/**/*.keras", recursive=True)):
    model = keras.saving.load_model(path)
    np.save(f"{path}.{keras.backend.backend()}.npy", model.predict(batch, verbose=0))
"""


def _run(code: str, cwd: Path, backend: str, *args: str) -> str:
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_USE_LEGACY_KERAS", None)
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if result.returncode != 0:
        errors = [line for line in result.stderr.splitlines() if not line.startswith(NOISE)]
        pytest.fail(f"{backend} run failed:\n{result.stdout[-3000:]}\n" + "\n".join(errors[-40:]))
    return result.stdout


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    """A copy of samples/training_script rewritten by kmigrate (all rules)."""
    from kmigrate.api import apply_to_text
    from kmigrate.run.runner import scan_text

    work = tmp_path_factory.mktemp("training_script")
    for source in SAMPLE.glob("*.py"):
        (work / source.name).write_text(apply_to_text(source.read_text(), path=source.name))
    leftover = [
        f
        for source in work.glob("*.py")
        for f in scan_text(source.read_text(), path=source.name)
        if f.fixable and f.rule.startswith(("KM4", "KM5"))
    ]
    assert leftover == [], [f"{f.rule} {f.path}:{f.span.line} {f.message}" for f in leftover]
    return work


def test_migrated_sample_keeps_no_fixable_saving_call(migrated: Path) -> None:
    """Needs no backend: the conversion alone (the fixture asserts nothing fixable is left),
    so the fast run catches an editor that stops replacing statements."""
    text = (migrated / "train.py").read_text()
    assert 'os.makedirs(os.path.join(out, "ckpt"), exist_ok=True)' in text


@pytest.fixture(scope="module")
def saved_and_reloaded(migrated: Path) -> tuple[Path, str]:
    log = _run(DRIVER, migrated, "tensorflow", *ARCHITECTURES)
    for backend in ("tensorflow", "jax", "torch"):
        _run(RELOAD, migrated, backend)
    return migrated, log


@pytest.mark.backends
def test_migrated_script_saves_keras3_formats(saved_and_reloaded) -> None:
    work, log = saved_and_reloaded
    text = (work / "train.py").read_text()
    legacy = [p for p in re.findall(r'"([^"]*\.h(?:df)?5)"', text) if ".weights." not in p]
    assert legacy == [] and "tf.saved_model.save" not in text
    assert "reset_state()" in text and ".export(" in text
    for arch in ARCHITECTURES:
        out = work / f"out_{arch}"
        names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
        assert {"best.keras", "model.keras", "saved_model_dir.keras"} <= names
        assert "ckpt/weights.weights.h5" in names
        assert "export_dir/saved_model.pb" in names
    diffs = [float(d) for d in re.findall(r"reload max abs diff: (\S+)", log)]
    assert len(diffs) == len(ARCHITECTURES) and max(diffs) <= 1e-5


@pytest.mark.backends
@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_reload_predicts_what_was_saved(saved_and_reloaded, backend: str, arch: str) -> None:
    import numpy as np

    work, _ = saved_and_reloaded
    files = sorted((work / f"out_{arch}").rglob("*.keras"))
    assert len(files) == 3
    for path in files:
        saved = np.load(f"{path}.saved.npy")
        reloaded = np.load(f"{path}.{backend}.npy")
        np.testing.assert_allclose(
            reloaded, saved, rtol=1e-4, atol=1e-5, err_msg=f"{path.name} on {backend}"
        )
