"""Regenerate the golden scan and diff of every fixture repository
(tests/fixtures/repos_expected/<name>.scan and .diff), as tests/project/test_project_index.py
computes them. Run after an intended change; review ``git diff`` of the goldens."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.project.test_project_index import EXPECTED, REPO_NAMES, REPOS, finding_lines  # noqa: E402
from tests.repo_fixtures import apply_diff, apply_repo, copy_repo, run_repo  # noqa: E402


def main() -> int:
    for name in REPO_NAMES:
        with tempfile.TemporaryDirectory() as folder:
            root = copy_repo(name, Path(folder))
            (EXPECTED / f"{name}.scan").write_text("\n".join(finding_lines(run_repo(root))) + "\n")
            apply_repo(root)
            (EXPECTED / f"{name}.diff").write_text(apply_diff(REPOS / name, root))
    print(f"{len(REPO_NAMES)} fixture repositories written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
