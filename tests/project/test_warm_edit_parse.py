"""A warm re-scan after a few edits parses the edited files while planning, instead of
deferring them to their analyses with a guess of their facts: the guess reads every
module's entry (a fifth of a warm re-scan of 10,000 files, issue 34). More than a few
new or changed files are still deferred; both ways report what a run without the
index cache reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmigrate.project import index_pass
from kmigrate.project.config import Config
from kmigrate.run.runner import plan_jobs, run_jobs, select_ids
from tests.repo_fixtures import finding_lines, run_repo

_HELPER = "import tensorflow as tf\n\n\ndef helper{n}(x):\n    return tf.square(x) + {n}\n"
_MODEL = (
    "import tensorflow as tf\nfrom pkg.helper0 import helper0\n\n\n"
    "class Scale(tf.keras.layers.Layer):\n    def call(self, x):\n"
    "        return helper0(tf.reduce_sum(x))\n"
)


def _scan(root: Path) -> list[str]:
    jobs = plan_jobs([root], Config(root=root.resolve()), index_cache=True)
    return finding_lines(run_jobs(jobs, select_ids((), ()), workers=1))


def _edit(root: Path, count: int, mark: str) -> None:
    for n in range(count):
        path = root / "pkg" / f"helper{n}.py"
        path.write_text(path.read_text() + f"# {mark}\n")


def test_an_edit_is_parsed_in_planning_many_are_deferred(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "model.py").write_text(_MODEL)
    for n in range(12):
        (root / "pkg" / f"helper{n}.py").write_text(_HELPER.format(n=n))
    guesses = []
    guess = index_pass.facts_guess
    monkeypatch.setattr(
        index_pass, "facts_guess", lambda *a, **k: guesses.append(1) or guess(*a, **k)
    )

    cold = _scan(root)
    assert guesses and cold == finding_lines(run_repo(root))  # a cold scan defers
    guesses.clear()
    _edit(root, 1, "one edit")
    warm = _scan(root)
    assert not guesses  # the edited file parsed in planning: no guess of the project
    assert warm == finding_lines(run_repo(root))
    guesses.clear()
    _edit(root, 9, "nine edits")
    warm = _scan(root)
    assert guesses  # more than 8 changed: deferred again
    assert warm == finding_lines(run_repo(root))
