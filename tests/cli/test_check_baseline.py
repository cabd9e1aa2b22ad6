"""``kmigrate check`` and ``kmigrate baseline``: new findings fail, known ones do not.

Runs the commands in-process (click's runner) on small temporary projects; the
``--baseline-ref`` tests create throwaway git repositories.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

LEGACY = textwrap.dedent(
    '''
    import tensorflow as tf


    class Noise(tf.keras.layers.Layer):
        """Adds Gaussian noise."""

        def call(self, x):
            return x + tf.random.normal((2, 3), stddev=0.1)


    def build():
        return tf.keras.Sequential([Noise()])
    '''
).lstrip()
NOISE = "tf.random.normal((2, 3), stddev=0.1)"
SECOND_NOISE = "        x = x + " + NOISE + "\n"


def kmigrate(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def findings_of(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.strip()]


def add_after(text: str, anchor: str, addition: str) -> str:
    index = text.index(anchor) + len(anchor)
    return text[:index] + addition + text[index:]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'legacy'\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(LEGACY)
    (tmp_path / "src" / "other.py").write_text(LEGACY.replace("Noise", "Jitter"))
    (tmp_path / "src" / "plain.py").write_text("print('no framework here')\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def baseline_entries(project: Path, name: str = ".kmigrate-baseline.json") -> list[dict]:
    return json.loads((project / name).read_text())["findings"]


# -- check without a baseline ---------------------------------------------------


def test_check_fails_on_findings_with_ruff_like_lines(project: Path) -> None:
    result = kmigrate("check", "src/model.py", "-j", "1")
    assert result.exit_code == 1
    lines = findings_of(result.stdout)
    assert any(line.startswith("src/model.py:8:20: KM301 ") for line in lines), lines
    assert all(line.startswith("src/model.py:") for line in lines)
    assert f"{len(lines)} new, 0 baselined remain" in result.stderr


def test_check_passes_on_clean_files(project: Path) -> None:
    result = kmigrate("check", "src/plain.py")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "0 new, 0 baselined remain" in result.stderr


def test_check_defaults_to_the_whole_project(project: Path, monkeypatch) -> None:
    monkeypatch.chdir(project / "src")
    result = kmigrate("check", "-j", "1")
    assert result.exit_code == 1
    paths = {line.split(":")[0] for line in findings_of(result.stdout)}
    assert paths == {"src/model.py", "src/other.py"}


# -- the baseline file ------------------------------------------------------------


def test_baseline_then_check_passes(project: Path) -> None:
    written = kmigrate("baseline", "-j", "1")
    assert written.exit_code == 0, written.output
    assert "wrote .kmigrate-baseline.json" in written.stderr
    result = kmigrate("check", "-j", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    count = len(baseline_entries(project))
    assert count >= 4
    assert f"0 new, {count} baselined remain" in result.stderr


def test_baseline_file_format_is_stable_and_relative(project: Path, monkeypatch) -> None:
    monkeypatch.chdir(project / "src")  # paths are relative to the project, not the cwd
    kmigrate("baseline", "-j", "1")
    path = project / ".kmigrate-baseline.json"
    first = path.read_bytes()
    data = json.loads(first)
    assert data["version"] == 1 and data["tool"] == "kmigrate"
    entries = data["findings"]
    assert {e["path"] for e in entries} == {"src/model.py", "src/other.py"}
    for entry in entries:
        assert {"fingerprint", "rule", "path", "scope", "symbol", "message"} <= set(entry)
        assert "line" not in entry, "line numbers would churn the file"
    noise = next(e for e in entries if e["rule"] == "KM301" and e["path"] == "src/model.py")
    assert (noise["scope"], noise["symbol"]) == ("Noise.call", "tf.random.normal")
    keys = [(e["path"], e["scope"], e["rule"], e["symbol"], e["fingerprint"]) for e in entries]
    assert keys == sorted(keys)
    assert first.count(b"\n    {") == len(entries), "one entry per line"
    # regenerating after unrelated edits changes nothing
    model = project / "src" / "model.py"
    model.write_text("# a comment\n\n" + model.read_text() + "\n\nVALUE = 3\n")
    kmigrate("baseline", "-j", "4")
    assert path.read_bytes() == first


def test_a_second_identical_call_is_new(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    model = project / "src" / "model.py"
    model.write_text(add_after(LEGACY, "def call(self, x):\n", SECOND_NOISE))
    result = kmigrate("check", "src/model.py")
    assert result.exit_code == 1
    (line,) = findings_of(result.stdout)
    assert " KM301 " in line
    assert "1 new, " in result.stderr


def test_edits_elsewhere_and_reformatting_stay_baselined(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    model = project / "src" / "model.py"
    edited = LEGACY.replace(
        NOISE, "tf.random.normal(\n            (2, 3),  # same call\n            stddev=0.1)"
    )
    model.write_text("import os\n\n\n" + edited + "\n\ndef unrelated():\n    return 1\n")
    assert kmigrate("check", "src/model.py").exit_code == 0


def test_update_baseline_only_removes_fixed_entries(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    before = baseline_entries(project)
    model = project / "src" / "model.py"
    fixed = LEGACY.replace("return x + " + NOISE, "return x + keras.random.normal((2, 3))")
    model.write_text(add_after(fixed, "def build():\n", "    tf.random.uniform((2,))\n"))
    # the new call is an info note (outside model code): it fails with --fail-on info
    result = kmigrate("check", "--update-baseline", "--fail-on", "info", "-j", "1")
    assert result.exit_code == 1, "the new call still fails"
    assert "tf.random.uniform" in result.stdout or "KM30" in result.stdout
    assert "1 fixed entry removed" in result.stderr
    after = baseline_entries(project)
    gone = [e for e in before if e not in after]
    assert [(e["rule"], e["path"], e["symbol"]) for e in gone] == [
        ("KM301", "src/model.py", "tf.random.normal")
    ]
    assert all(e in before for e in after), "the ratchet never adds entries"
    # nothing else to drop now; the new finding still fails
    again = kmigrate("check", "--update-baseline", "--fail-on", "info", "-j", "1")
    assert again.exit_code == 1 and "removed" not in again.stderr


def test_check_reports_fixed_entries_without_updating(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    before = (project / ".kmigrate-baseline.json").read_bytes()
    (project / "src" / "model.py").write_text(LEGACY.replace(NOISE, "x"))
    result = kmigrate("check", "-j", "1")
    assert result.exit_code == 0
    assert "1 baselined finding(s) fixed: run `kmigrate check --update-baseline`" in result.stderr
    assert (project / ".kmigrate-baseline.json").read_bytes() == before


def test_update_baseline_keeps_entries_it_did_not_look_at(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    before = baseline_entries(project)
    # other.py is not checked, KM3 was not selected: their entries stay
    (project / "src" / "model.py").write_text(LEGACY.replace(NOISE, "x"))
    result = kmigrate("check", "src/model.py", "--select", "KM1", "--update-baseline")
    assert result.exit_code == 0
    assert baseline_entries(project) == before
    # a file that no longer exists has no findings left
    (project / "src" / "other.py").unlink()
    result = kmigrate("check", "src/model.py", "--update-baseline")
    after = baseline_entries(project)
    assert {e["path"] for e in after} == {"src/model.py"}
    assert not any(e["rule"] == "KM301" for e in after)


def test_update_baseline_keeps_entries_of_a_file_that_stopped_parsing(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    before = baseline_entries(project)
    model = project / "src" / "model.py"
    model.write_text(LEGACY + "\nprint 'python 2'\n")
    result = kmigrate("check", "src/model.py", "--update-baseline")
    assert result.exit_code == 1 and "KM901" in result.stdout
    assert baseline_entries(project) == before


def test_baseline_of_some_paths_keeps_the_others(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    before = baseline_entries(project)
    (project / "src" / "model.py").write_text(LEGACY.replace(NOISE, "x"))
    result = kmigrate("baseline", "src/model.py")
    assert "(-1)" in result.stderr
    after = baseline_entries(project)
    assert [e for e in before if e["path"] == "src/other.py"] == [
        e for e in after if e["path"] == "src/other.py"
    ]
    assert len(after) == len(before) - 1


def test_baseline_location_from_config_and_option(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.kmigrate]\nbaseline = "ci/kmigrate-baseline.json"\n'
    )
    assert kmigrate("baseline", "-j", "1").exit_code == 0
    assert (project / "ci" / "kmigrate-baseline.json").is_file()
    assert not (project / ".kmigrate-baseline.json").exists()
    assert kmigrate("check", "-j", "1").exit_code == 0
    # a mistyped --baseline is a usage error, not an empty baseline that fails every commit
    assert kmigrate("check", "--baseline", "missing.json", "-j", "1").exit_code == 2


def test_a_malformed_baseline_is_a_usage_error(project: Path) -> None:
    (project / ".kmigrate-baseline.json").write_text('{"version": 7, "findings": []}')
    result = kmigrate("check")
    assert result.exit_code == 2
    assert "not a kmigrate baseline" in result.stderr


def test_hand_merged_duplicate_entries_are_counted(project: Path) -> None:
    kmigrate("baseline", "src/model.py")
    path = project / ".kmigrate-baseline.json"
    data = json.loads(path.read_text())
    noise = next(e for e in data["findings"] if e["rule"] == "KM301")
    data["findings"].append(dict(noise))  # the same fingerprint twice: count 2
    path.write_text(json.dumps(data))
    model = project / "src" / "model.py"
    model.write_text(add_after(LEGACY, "def call(self, x):\n", SECOND_NOISE))
    # the two findings have different fingerprints; only one is in the baseline
    assert kmigrate("check", "src/model.py").exit_code == 1


# -- suppressions and ignores -------------------------------------------------------


def test_inline_suppression_through_check(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    model = project / "src" / "model.py"
    addition = SECOND_NOISE.rstrip("\n") + "  # kmigrate: ignore[KM301]\n"
    model.write_text(add_after(LEGACY, "def call(self, x):\n", addition))
    assert kmigrate("check", "src/model.py").exit_code == 0
    model.write_text(add_after(LEGACY, "def call(self, x):\n", addition.replace("KM301", "KM1")))
    assert kmigrate("check", "src/model.py").exit_code == 1


def test_per_file_ignores_through_check(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.kmigrate]\nper-file-ignores = { "src/model.py" = ["KM3", "KM2", "KM1"] }\n'
    )
    result = kmigrate("check", "src/model.py", "src/other.py")
    assert result.exit_code == 1
    paths = {line.split(":")[0] for line in findings_of(result.stdout)}
    assert paths == {"src/other.py"}


def test_config_exclude_applies_to_files_named_by_pre_commit(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.kmigrate]\nexclude = ["src/other.py"]\n')
    assert kmigrate("check", "src/other.py").exit_code == 0


STALE = textwrap.dedent(
    """
    import tensorflow as tf

    x = 1.0  # kmigrate: ignore[KM301]
    y = 2  # kmigrate: ignore
    z = tf.random.normal((2,))  # kmigrate: ignore[KM3, KM1O1]
    layer = tf.keras.layers.Dense(3)  # kmigrate: ignore[KM101]
    """
).lstrip()


def test_unused_suppressions_are_reported_on_request(project: Path) -> None:
    (project / "src" / "stale.py").write_text(STALE)
    assert kmigrate("check", "src/stale.py").exit_code == 0
    result = kmigrate("check", "src/stale.py", "--report-unused-suppressions")
    assert result.exit_code == 1
    lines = findings_of(result.stdout)
    assert [line.split(": ", 1)[0] for line in lines] == [
        "src/stale.py:3:10",
        "src/stale.py:4:8",
        "src/stale.py:5:29",
    ]
    assert all(" KM903 unused suppression: " in line for line in lines)
    assert "`KM301` suppresses nothing" in lines[0]
    assert "`# kmigrate: ignore` suppresses nothing" in lines[1]
    assert "`KM1O1` (matches no rule)" in lines[2]
    assert "3 new, 0 baselined remain" in result.stderr


def test_unused_suppressions_of_rules_that_did_not_run_are_not_reported(project: Path) -> None:
    (project / "src" / "stale.py").write_text(STALE)
    result = kmigrate("check", "src/stale.py", "--select", "KM1", "--report-unused-suppressions")
    lines = findings_of(result.stdout)
    assert len(lines) == 1 and "KM1O1" in lines[0], lines
    assert kmigrate("check", "src/stale.py", "--select", "KM903").exit_code == 1


def test_unused_suppressions_respect_per_file_ignores(project: Path) -> None:
    (project / "src" / "stale.py").write_text(STALE)
    (project / "pyproject.toml").write_text(
        '[tool.kmigrate]\nper-file-ignores = { "src/stale.py" = ["KM903"] }\n'
    )
    assert kmigrate("check", "src/stale.py", "--report-unused-suppressions").exit_code == 0


# -- output formats --------------------------------------------------------------


def test_json_and_github_formats(project: Path) -> None:
    kmigrate("baseline", "src/other.py")
    result = kmigrate("check", "src/model.py", "src/other.py", "-f", "json", "-j", "1")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["summary"]["new"] == len(data["findings"]) > 0
    assert data["summary"]["baselined"] == len(data["baselined"]) > 0
    assert {f["path"] for f in data["findings"]} == {"src/model.py"}
    github = kmigrate("check", "src/model.py", "-f", "github")
    assert github.stdout.startswith("::")
    assert "file=src/model.py,line=" in github.stdout
    assert ",title=KM" in github.stdout


def test_show_baselined_lists_the_remaining_ones(project: Path) -> None:
    kmigrate("baseline", "-j", "1")
    result = kmigrate("check", "src/model.py", "--show-baselined")
    assert result.exit_code == 0
    lines = findings_of(result.stdout)
    assert lines and all(line.endswith(" (baselined)") for line in lines)


# -- --baseline-ref ------------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    completed = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return completed.stdout


@pytest.fixture
def repo(project: Path) -> Path:
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "legacy")
    return project


def test_baseline_ref_knows_what_was_committed(repo: Path) -> None:
    assert kmigrate("check", "--baseline-ref", "HEAD", "-j", "1").exit_code == 0
    model = repo / "src" / "model.py"
    model.write_text("import os\n" + add_after(LEGACY, "def call(self, x):\n", SECOND_NOISE))
    result = kmigrate("check", "src/model.py", "--baseline-ref", "HEAD")
    assert result.exit_code == 1
    (line,) = findings_of(result.stdout)
    assert " KM301 " in line
    assert "already present at HEAD" in result.stderr


def test_baseline_ref_new_and_renamed_files(repo: Path) -> None:
    (repo / "src" / "fresh.py").write_text(LEGACY)  # did not exist at HEAD
    result = kmigrate("check", "src/fresh.py", "--baseline-ref", "HEAD")
    assert result.exit_code == 1
    assert len(findings_of(result.stdout)) >= 3
    git(repo, "mv", "src/other.py", "src/renamed.py")  # old findings are still old
    assert kmigrate("check", "src/renamed.py", "--baseline-ref", "HEAD").exit_code == 0


def test_baseline_ref_combines_with_the_baseline_file(repo: Path) -> None:
    model = repo / "src" / "model.py"
    model.write_text(add_after(LEGACY, "def call(self, x):\n", SECOND_NOISE))
    kmigrate("baseline", "src/model.py")
    assert kmigrate("check", "src/model.py", "--baseline-ref", "HEAD").exit_code == 0


def test_baseline_ref_reads_the_old_file_in_its_project(repo: Path) -> None:
    """A layer module without a TensorFlow name (its base class is in another module)
    is analysed with the project's facts now, and so at the ref: its old findings are
    old, only the new one is new."""
    (repo / "src" / "__init__.py").write_text("")
    (repo / "src" / "base.py").write_text(
        "import tensorflow as tf\n\nclass Base(tf.keras.layers.Layer):\n    pass\n"
    )
    layer = "from src.base import Base\n\nclass Scale(Base):\n    def call(self, x):\n"
    (repo / "src" / "scale.py").write_text(layer + "        return self.add_weight('w', (1,))\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a layer with its base elsewhere")
    before = kmigrate("check", "src/scale.py", "--baseline-ref", "HEAD")
    assert before.exit_code == 0, before.stdout
    assert kmigrate("check", "src/scale.py").exit_code == 1  # it has findings of its own
    (repo / "src" / "scale.py").write_text(
        layer + "        self.add_weight('v', (2,))\n        return self.add_weight('w', (1,))\n"
    )
    result = kmigrate("check", "src/scale.py", "--baseline-ref", "HEAD")
    assert result.exit_code == 1
    assert len(findings_of(result.stdout)) == 1, result.stdout


def test_baseline_ref_errors_are_usage_errors(repo: Path, tmp_path_factory) -> None:
    result = kmigrate("check", "--baseline-ref", "no-such-ref")
    assert result.exit_code == 2 and "no-such-ref" in result.stderr


# -- start-up cost -----------------------------------------------------------------


def test_check_imports_no_heavy_module(project: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kmigrate", "check", "src/model.py"],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
    )
    assert completed.returncode == 1, completed.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in completed.stderr.splitlines()
        if line.startswith("import time:")
    }
    heavy = {"rich", "libcst", "tensorflow", "keras", "tf_keras", "jax", "torch", "numpy"}
    assert not heavy & imported, heavy & imported
    assert "kmigrate" in imported


def test_hook_manifest_declares_both_hooks() -> None:
    yaml = pytest.importorskip("yaml")
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"kmigrate", "kmigrate-baseline-head"}
    assert hooks["kmigrate"]["entry"] == "kmigrate check"
    assert hooks["kmigrate-baseline-head"]["entry"] == "kmigrate check --baseline-ref HEAD"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "jupyter"]
        assert hook["require_serial"] is True
