"""In a project that uses Keras, code is model code unless proven TensorFlow by design
(issue 30), also in a module without any Keras import of its own.

The fixture repository ``unfollowed_helper`` holds a layer that runs the function it is
handed (``Squash(mathutils.soft_sign)``: a value kmigrate cannot follow to the layer),
a helper module that imports only TensorFlow, a ``tf.data`` pipeline and a
``GradientTape`` loop. The helper module is model code because the project uses Keras
(``ModuleFacts.keras_project``, a fact of the project index); the pipeline and the loop
stay TensorFlow on their own evidence, and a function of the pipeline's module that only
calls its parser (``load_normalized``) is undecided: reported, never rewritten. Without
Keras anywhere, nothing changes.
"""

from __future__ import annotations

import pytest

from kmigrate.engine.model import Context, Severity
from kmigrate.project import index_pass
from kmigrate.project.config import Config
from kmigrate.run.runner import plan_jobs, run_jobs, select_ids
from tests.repo_fixtures import REPOS, apply_repo, copy_repo, finding_lines, run_repo

_LEFT_ON_TF = "left on TensorFlow"


def _by_file(result) -> dict[str, list]:
    found: dict[str, list] = {}
    for finding in result.findings:
        found.setdefault(finding.path, []).append(finding)
    return found


def test_a_helper_module_without_keras_is_model_code_in_a_keras_project(tmp_path) -> None:
    root = copy_repo("unfollowed_helper", tmp_path)
    found = _by_file(run_repo(root))
    helpers = found["squash/mathutils.py"]
    assert [f.symbol for f in helpers] == ["tf.abs", "tf.tanh", "tf.reduce_max", "tf.abs"]
    assert all(f.context is Context.MODEL and f.fixable for f in helpers)
    assert not any(_LEFT_ON_TF in f.message for fs in found.values() for f in fs)
    # proven TensorFlow by design: the tf.data map and the GradientTape loop stay
    assert [(f.rule, f.context) for f in found["squash/loop.py"]] == [
        ("KM601", Context.TRAINING_LOOP)
    ]
    # what feeds on data code in a module without Keras: undecided, reported, kept
    data = found["squash/data.py"]
    assert [(f.symbol, f.context, f.fixable) for f in data] == [
        ("tf.reduce_max", Context.UNDECIDED, False),
        ("tf.abs", Context.UNDECIDED, False),
    ]
    for finding in data:
        assert finding.severity is Severity.WARNING and "keras.ops." in finding.message
        assert "undecided, not rewritten: `load_normalized` calls `decode_record`" in (
            finding.message
        )
    apply_repo(root)
    text = (root / "squash" / "mathutils.py").read_text()
    assert "ops.max(ops.abs(x), axis=-1, keepdims=True)" in text
    assert "tensorflow" not in text
    for kept in ("data.py", "loop.py"):
        assert (root / "squash" / kept).read_text() == (
            REPOS / "unfollowed_helper" / "squash" / kept
        ).read_text()


def test_a_project_without_keras_keeps_its_code_on_tensorflow(tmp_path) -> None:
    """The same helper module in a project with no Keras at all: `other`, as before."""
    root = copy_repo("unfollowed_helper", tmp_path)
    (root / "squash" / "layers.py").unlink()
    (root / "run_model.py").unlink()
    helpers = _by_file(run_repo(root))["squash/mathutils.py"]
    assert len(helpers) == 4
    for finding in helpers:
        assert finding.context is Context.OTHER and not finding.fixable
        assert finding.severity is Severity.INFO and _LEFT_ON_TF in finding.message
    apply_repo(root)
    assert (root / "squash" / "mathutils.py").read_text() == (
        REPOS / "unfollowed_helper" / "squash" / "mathutils.py"
    ).read_text()


def _contexts(root, config) -> set[str]:
    result = run_jobs(plan_jobs([root], config), select_ids((), ()))
    return {f.context.value for f in result.findings if f.path == "squash/mathutils.py"}


def test_the_keras_project_fact_follows_edits_through_the_stored_resolution(tmp_path) -> None:
    """The fact is stored with the project's resolution (each file's header says whether
    it uses Keras): a re-run after an edit resolves only the edited file, and the fact
    still follows it, both ways."""
    root = copy_repo("unfollowed_helper", tmp_path)
    (root / "run_model.py").unlink()
    config = Config(root=root)
    layers = root / "squash" / "layers.py"
    keras_text = layers.read_text()
    assert _contexts(root, config) == {"model"}
    assert list((root / ".kmigrate_cache" / ".index").rglob("resolved.*"))
    layers.write_text(
        "class Squash:\n    def __init__(self, squash):\n        self.squash = squash\n"
    )
    assert _contexts(root, config) == {"other"}
    assert _contexts(root, config) == {"other"}  # unchanged: read from the stored headers
    layers.write_text(keras_text)
    assert _contexts(root, config) == {"model"}
    assert _contexts(root, config) == {"model"}


def test_a_cold_scan_that_guesses_first_gives_the_same_contexts(tmp_path, monkeypatch) -> None:
    """Files analysed before the project is resolved (facts_guess) take the project for
    one that uses Keras from its bytes; the runner checks the guess either way."""
    root = copy_repo("unfollowed_helper", tmp_path)
    expected = finding_lines(run_repo(root))
    monkeypatch.setattr(index_pass, "_PARSE_TWICE_UP_TO", 0)
    jobs = plan_jobs([root], Config(root=root), index_cache=False)
    assert any(job.deferred for job in jobs)
    assert finding_lines(run_jobs(jobs, select_ids((), ()), workers=1)) == expected


@pytest.mark.parametrize(
    "keras_line", ["from tensorflow.keras.layers import Dense", "import keras"]
)
def test_any_keras_import_makes_a_keras_project(tmp_path, keras_line: str) -> None:
    root = copy_repo("unfollowed_helper", tmp_path)
    (root / "squash" / "layers.py").write_text(f"{keras_line}\n")
    (root / "run_model.py").unlink()
    helpers = _by_file(run_repo(root))["squash/mathutils.py"]
    assert {f.context for f in helpers} == {Context.MODEL}
