"""What the scanned tree controls besides its code: its config, its baseline file, its
notebooks and CI files, its symlinks. None of it may redirect a write out of the
project, hang a run, crash it, or pull files from outside the tree into it."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate.cli.main import main
from kmigrate.project.config import ConfigError, load_config

LEGACY = "import tensorflow as tf\n\nx = tf.reduce_mean(tf.ones((2, 2)), keep_dims=True)\n"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "src" / "model.py").write_text(LEGACY)
    monkeypatch.chdir(root)
    monkeypatch.delenv("KMIGRATE_CACHE_DIR", raising=False)
    return root


def _config(project: Path, body: str) -> None:
    (project / "pyproject.toml").write_text(f"[project]\nname = 'p'\n\n[tool.kmigrate]\n{body}\n")


def _kmigrate(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    "value", ["/tmp/elsewhere.json", "../outside.json", "src/../../outside.json", "linked/b.json"]
)
def test_the_config_cannot_send_the_baseline_out_of_the_project(project, tmp_path, value):
    """``kmigrate baseline`` writes where ``[tool.kmigrate] baseline`` says: the tree
    must not be able to aim that at a file of the user's."""
    (project / "linked").symlink_to(tmp_path, target_is_directory=True)
    _config(project, f"baseline = {json.dumps(value)}")
    with pytest.raises(ConfigError, match="baseline must be a path inside the project"):
        load_config(project)
    result = _kmigrate("baseline")
    assert result.exit_code == 2
    assert not (tmp_path / "outside.json").exists() and not (tmp_path / "b.json").exists()


def test_a_baseline_inside_the_project_is_fine(project) -> None:
    _config(project, 'baseline = "ci/kmigrate-baseline.json"')
    assert load_config(project).baseline == "ci/kmigrate-baseline.json"
    assert _kmigrate("baseline").exit_code == 0
    assert (project / "ci/kmigrate-baseline.json").is_file()


def test_a_baseline_symlink_is_neither_read_nor_written(project, tmp_path) -> None:
    """A repository commits ``.kmigrate-baseline.json`` as a link to the user's shell
    profile; ``baseline`` (and ``check --update-baseline``) would write file names the
    repository chose into it."""
    profile = tmp_path / "bashrc"
    profile.write_text("export PATH\n")
    (project / ".kmigrate-baseline.json").symlink_to(profile)
    for command in (["baseline"], ["check", "--update-baseline"], ["check"]):
        result = _kmigrate(*command)
        assert result.exit_code == 2, command
        assert "is a symlink" in result.output + result.stderr
    assert profile.read_text() == "export PATH\n"


def test_a_fifo_baseline_does_not_hang_check(project) -> None:
    os.mkfifo(project / ".kmigrate-baseline.json")
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(_kmigrate("check")), daemon=True)
    worker.start()
    worker.join(120)
    assert outcome, "check blocked on the FIFO"
    assert outcome[0].exit_code == 2
    assert "not a regular file" in outcome[0].stderr


def test_the_config_cannot_ask_for_thousands_of_processes(project) -> None:
    _config(project, "jobs = 100000")
    jobs = load_config(project).jobs
    assert jobs is not None and 1 <= jobs <= (os.cpu_count() or 1)


NESTED = "[" * 200_000 + "]" * 200_000


def test_absurdly_nested_notebooks_and_json_do_not_crash_a_scan(project) -> None:
    """Python's json recurses; a file nested 200,000 deep is reported, not a crash."""
    (project / "deep.ipynb").write_text(f'["import tensorflow", {NESTED}]')
    (project / "pins.ipynb").write_text(f'["import tensorflow", "KERAS_BACKEND", {NESTED}]')
    (project / ".keras").mkdir()
    (project / "keras.json").write_text(NESTED)
    (project / ".keras" / "keras.json").write_text(NESTED)
    result = _kmigrate("scan", ".", "-f", "json", "-o", "out.json", "-q", "-j", "1")
    assert result.exit_code == 0, result.output
    findings = json.loads(Path("out.json").read_text())["findings"]
    unreadable = {f["path"] for f in findings if f["rule"] == "KM901"}
    assert unreadable == {"deep.ipynb", "pins.ipynb"}
    assert any(f["path"] == "src/model.py" for f in findings)


def test_links_out_of_the_tree_are_not_followed(project, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_model.py").write_text(LEGACY)
    (project / "src" / "linked_file.py").symlink_to(outside / "secret_model.py")
    (project / "src" / "linked_dir").symlink_to(outside, target_is_directory=True)
    result = _kmigrate("scan", ".", "-f", "json", "-o", "out.json", "-q", "-j", "1")
    assert result.exit_code == 0
    paths = {f["path"] for f in json.loads(Path("out.json").read_text())["files"]}
    assert paths == {"src/model.py"}


def test_a_hostile_gitignore_neither_crashes_nor_injects_regex(project) -> None:
    """.gitignore lines become regular expressions; one that is not a valid glob (an
    inverted range, a backslash closing a bracket) must not crash discovery, and a
    bracket's content must stay a set of characters."""
    (project / ".gitignore").write_text("[z-a]\n[\\]x\n[a]|.*\nbuild_[!0-9].py\n")
    (project / "src" / "build_x.py").write_text(LEGACY)
    (project / "src" / "build_1.py").write_text(LEGACY)
    result = _kmigrate("scan", ".", "-f", "json", "-o", "out.json", "-q", "-j", "1")
    assert result.exit_code == 0, result.output
    paths = {f["path"] for f in json.loads(Path("out.json").read_text())["files"]}
    assert paths == {"src/model.py", "src/build_1.py"}
