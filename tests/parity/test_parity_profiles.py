"""Parity backends are profiles in one registry (issue 29): a new backend is one profile
module plus its registration, and every part of parity (options, planner, worker
environment, help text, the worker itself) reads the registry.

The test profile, ``tf-eager`` (TensorFlow with ``predict`` run eagerly instead of through
``tf.function``), is docs/architecture.md's worked example: the test writes it into its own
module, which registers it; nothing in kmigrate lists it.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate.parity import backends as registry
from kmigrate.parity.cli import parity_command
from kmigrate.parity.jobs import WorkerPlan
from kmigrate.parity.plan import ParityOptions, canonical_backend, installed_backends

ROOT = Path(__file__).resolve().parents[2]

ARCHITECTURE = ROOT / "docs" / "architecture.md"


def profile_module() -> str:
    """The worked example of docs/architecture.md, as written."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Adding a parity backend") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


@pytest.fixture
def tf_eager(tmp_path, monkeypatch):
    """The test profile, importable here and in workers (through PYTHONPATH)."""
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "kmigrate_test_tf_eager.py").write_text(profile_module(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder))
    monkeypatch.delitem(sys.modules, "kmigrate_test_tf_eager", raising=False)
    __import__("kmigrate_test_tf_eager")
    yield registry.resolve("tf-eager")
    registry.unregister("tf-eager")


def test_the_builtin_profiles_are_listed_in_one_place():
    assert registry.names() == ["tensorflow", "jax", "torch", "openvino"]
    assert canonical_backend("TF") == "tensorflow"
    assert canonical_backend("pytorch") == "torch"
    assert [p.name for p in registry.profiles() if p.inference_only] == ["openvino"]
    assert [p.name for p in registry.profiles() if p.runs_keras2] == ["tensorflow"]


def test_a_new_backend_is_one_profile_module_and_its_registration(tf_eager):
    assert canonical_backend("tfe") == "tf-eager"
    if "tensorflow" in installed_backends():
        assert "tf-eager" in installed_backends()
    help_text = CliRunner().invoke(parity_command, ["--help"]).output
    assert "tf-eager" in re.sub(r"\s+", " ", help_text)
    env = WorkerPlan("tf-eager", "tf-eager", 3, []).environment()
    assert env["KERAS_BACKEND"] == "tensorflow"
    assert registry.home("tf-eager") == "kmigrate_test_tf_eager"
    # a worker finds it again by name and module
    assert registry.load("tf-eager", "kmigrate_test_tf_eager") is tf_eager
    installed = ["tensorflow", "tf-eager"]
    assert ParityOptions(backends=["tfe"]).resolved_backends(installed) == ["tf-eager"]


def test_a_name_cannot_be_registered_twice(tf_eager):
    clash = registry.BackendProfile("tf2", "tensorflow", ("tensorflow",), "tensorflow", ("tf",))
    with pytest.raises(ValueError, match="'tf' is already taken"):
        registry.register(clash, __name__)


def test_every_profile_is_installed_by_the_backends_extra():
    """The extras list what the profiles need (the registry is the list; this keeps the
    packaging in step with it)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = text[text.index("backends = [") : text.index("\n]", text.index("backends = ["))]
    listed = {
        re.split(r"[\[=<>;~ ]", line.strip().strip('",'))[0] for line in block.splitlines()[1:]
    }
    for profile in registry.profiles():
        assert profile.pip.split("[")[0] in listed, profile.name


def test_no_parity_module_branches_on_a_backend_name():
    """Backend knowledge lives in the profiles: outside them no parity module compares a
    backend with a literal name."""
    pattern = re.compile(
        r"""(backend|\.name)\s*(==|!=|in)\s*\(?["'](tensorflow|jax|torch|openvino)"""
    )
    for path in (ROOT / "migrate" / "parity").glob("*.py"):
        if path.name == "convert_weights.py":  # a TensorFlow program of its own
            continue
        assert not pattern.search(path.read_text(encoding="utf-8")), path.name


@pytest.mark.backends
def test_the_test_profile_runs_in_a_worker(tf_eager, tmp_path):
    from kmigrate.parity.runner import run_parity  # noqa: PLC0415

    models = tmp_path / "models.py"
    models.write_text(
        textwrap.dedent(
            """\
            import keras

            def build_model():
                inputs = keras.Input((6,))
                return keras.Model(inputs, keras.layers.Dense(3, name="head")(inputs))
            """
        ),
        encoding="utf-8",
    )
    report = run_parity(
        str(models), options=ParityOptions(backends=["tensorflow", "tfe"], checks=("predict",))
    )
    assert report.passed, report.to_dict()
    (run,) = report.runs
    assert run.backend == "tf-eager" and run.check("predict").status == "pass"
