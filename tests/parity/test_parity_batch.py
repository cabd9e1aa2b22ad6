"""Many models in one worker per side (issue 34): isolation between the models of a batch,
and a crash or a hang that costs only the model it hit.

The workers run Keras 3 on its numpy backend (a test profile, registered the way
docs/architecture.md shows, with the eager call and ``predict``): a real worker process and
real Keras, at about 3 s per import instead of 5-15 s for TensorFlow, JAX or PyTorch. The
before/after runs use it for both sides (``--reference-keras 3 --reference-backend numpy``);
the verdicts batched and alone on the real backends are in test_parity_batch_backends.py.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.parity import backends as registry
from kmigrate.parity.plan import ParityOptions, module_available
from kmigrate.parity.runner import ParityEntry, run_parity, run_parity_batch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "parity"

# real worker processes importing Keras (and jax, which its numpy backend loads)
pytestmark = [
    pytest.mark.backends,
    pytest.mark.skipif(not module_available("keras"), reason="needs Keras 3"),
]

PROFILE = """
from kmigrate.parity.backends import BackendProfile, register

register(
    BackendProfile("numpy", "numpy", ("keras",), "keras", checks=("call", "predict")),
    __name__,
)
"""

FACTORY = """
import keras
from mylayers import Scale


def build_model():
    inputs = keras.Input((3,))
    return keras.Model(inputs, Scale()(keras.layers.Dense(2)(inputs)))
"""


def scale_module(factor: int) -> str:
    return textwrap.dedent(f"""
        import keras


        class Scale(keras.layers.Layer):
            def call(self, x):
                return x * {factor}
        """)


@pytest.fixture
def numpy_backend(tmp_path, monkeypatch):
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "kmigrate_test_numpy_profile.py").write_text(PROFILE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder))
    monkeypatch.delitem(sys.modules, "kmigrate_test_numpy_profile", raising=False)
    __import__("kmigrate_test_numpy_profile")
    yield
    registry.unregister("numpy")


def options(**extra) -> ParityOptions:
    values = {
        "backends": ["numpy"],
        "reference_backend": "numpy",
        "reference_keras": "3",
        "checks": ("call", "predict"),
        "timeout": 60.0,
        "compile_cache": None,
    }
    return ParityOptions(**{**values, **extra})


def model_tree(root: Path, factor: int) -> Path:
    """A models.py whose Scale layer (in the sibling mylayers.py) multiplies by `factor`."""
    root.mkdir(parents=True)
    (root / "models.py").write_text(FACTORY, encoding="utf-8")
    (root / "mylayers.py").write_text(scale_module(factor), encoding="utf-8")
    return root / "models.py"


def statuses(report) -> list[str]:
    return [report.reference.status, *(run.status for run in report.runs)]


def test_a_converted_module_and_its_original_of_the_same_name_never_share_state(
    numpy_backend, tmp_path
):
    """Two before/after pairs, every tree with its own models.py and mylayers.py. The
    second conversion is wrong (x3 for x2); run after the first in the same processes, it
    would find the first tree's mylayers in sys.modules (x2) and PASS."""
    first = ParityEntry(
        str(model_tree(tmp_path / "a_conv", 2)), reference=str(model_tree(tmp_path / "a_orig", 2))
    )
    wrong = ParityEntry(
        str(model_tree(tmp_path / "b_conv", 3)), reference=str(model_tree(tmp_path / "b_orig", 2))
    )
    batched = run_parity_batch([first, wrong], options=options())
    assert [statuses(r) for r in batched] == [["reference", "pass"], ["reference", "fail"]]
    alone = run_parity(wrong.model, reference=wrong.reference, options=options())
    assert statuses(alone) == statuses(batched[1])


def started(messages: list[str], role: str) -> int:
    """How many worker processes of `role` a batch started (its progress lines)."""
    return sum(1 for m in messages if m.startswith("started") and f"({role})" in m)


def test_a_crash_or_a_hang_costs_only_its_own_model(numpy_backend, tmp_path):
    """Six models in one batch: a converted model that kills its worker (os._exit) while
    imported, an original that does, a converted model killed by a signal while built, a
    converted model that hangs; the others still get their verdicts. Each model runs in a
    child of its side's fork server: a crash costs no process but its own child; the hang
    is killed with its server's process group, and a fresh server takes the last model."""
    good = [model_tree(tmp_path / name, 2) for name in ("one", "two", "orig")]
    crash, hang = FIXTURES / "crashing_model.py", FIXTURES / "sleepy_model.py"
    killed = FIXTURES / "killed_model.py"
    entries = [
        ParityEntry(str(good[0]), reference=str(good[2])),
        ParityEntry(str(crash), reference=str(good[2])),
        ParityEntry(str(good[0]), reference=f"{crash}:build_model"),
        ParityEntry(str(killed), reference=str(good[2])),
        ParityEntry(str(hang), reference=str(good[2])),
        ParityEntry(str(good[1]), reference=str(good[2])),
    ]
    messages: list[str] = []
    reports = run_parity_batch(entries, options=options(timeout=25.0), progress=messages.append)
    assert [statuses(r) for r in reports] == [
        ["reference", "pass"],
        ["reference", "error"],
        ["error", "skipped"],
        ["reference", "error"],
        ["reference", "timeout"],
        ["reference", "pass"],
    ]
    crashed = reports[1].runs[0].error
    assert "exited with status 3" in crashed.message
    assert "simulated native crash" in crashed.traceback
    assert reports[2].reference.error.type == "WorkerCrashed"
    signalled = reports[3].runs[0].error
    assert signalled.type == "WorkerCrashed" and "exited with status -9" in signalled.message
    timed_out = reports[4].runs[0].error
    assert timed_out.stage == "load" and "no result after 25 s" in timed_out.message
    if hasattr(os, "fork"):  # a fork server: only the time-out cost a process
        assert (started(messages, "reference"), started(messages, "target")) == (1, 2)
