"""What the per-model work of a parity batch no longer repeats (issue 34), without a
framework: the reference's training step with random layers active runs once (only a
target's repeat is compared, for reproducibility), and without the persistent JAX cache
(``--no-cache``) the workers get a cache of the run's own, so that what the run compiles
twice is compiled once. The verdicts batched and alone on the real backends are in
test_parity_batch_backends.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from kmigrate.parity.plan import ParityOptions, installed_backends, parse_model_spec
from kmigrate.parity.runner import RUN_COMPILE_CACHE, ParityRun, group_workers
from kmigrate.parity.train_step import TrainingCheck


def _check(role: str, losses: list[float]) -> tuple[TrainingCheck, list[set]]:
    """A training check whose steps return `losses` in turn and note their forced layers."""
    check = TrainingCheck.__new__(TrainingCheck)
    check.info = {}
    check.worker = SimpleNamespace(task={"role": role})
    steps: list[set] = []
    given = iter(losses)
    check.restore = lambda snapshot: None

    def step(y, forced, state=None):
        steps.append(set(forced))
        return next(given)

    check.step = step
    return check, steps


def test_the_reference_runs_the_random_step_once_a_target_twice():
    reference, steps = _check("reference", [0.5, 0.7])
    reference.random_steps(y=None, snapshot=[])
    assert steps == [set()]  # random layers active, once
    assert "random_step_losses" not in reference.info  # nothing would read it
    target, steps = _check("target", [0.5, 0.7])
    target.random_steps(y=None, snapshot=[])
    assert steps == [set(), set()]
    assert target.info["random_step_losses"] == [0.5, 0.7]  # compared: not reproducible


needs_jax = pytest.mark.skipif(
    not {"tensorflow", "jax"} <= set(installed_backends()), reason="plans a jax worker"
)


def _run(tmp_path: Path, cache: str | None) -> ParityRun:
    model = tmp_path / "conv" / "models.py"
    model.parent.mkdir(parents=True)
    model.write_text("import keras\ndef build_model():\n    return None\n", encoding="utf-8")
    options = ParityOptions(backends=["tensorflow", "jax"], compile_cache=cache)
    return ParityRun(
        parse_model_spec(str(model)), options, reference=None, workdir=tmp_path / "work"
    )


@needs_jax
def test_without_the_persistent_cache_jax_compiles_into_the_run_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    run = _run(tmp_path, cache=None)
    workdir = tmp_path / "work"
    jax = next(w for w in group_workers([run], workdir) if w.backend == "jax")
    private = str(workdir / RUN_COMPILE_CACHE)
    assert jax.compile_cache == private
    assert jax.environment()["JAX_COMPILATION_CACHE_DIR"] == private
    assert jax.replacement(jax.tasks).compile_cache == private  # a fresh worker reuses it


@needs_jax
def test_the_persistent_cache_is_kept_when_asked_for(tmp_path, monkeypatch):
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    run = _run(tmp_path, cache=str(tmp_path / "persistent"))
    jax = next(w for w in group_workers([run], tmp_path / "work") if w.backend == "jax")
    assert jax.environment()["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path / "persistent")
