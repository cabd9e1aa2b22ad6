"""End-to-end: the console commands on copies of samples/, as a user runs them."""

from __future__ import annotations

import ast
import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from contract import FINDING_FIELDS

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
HEAVY_MODULES = ("tensorflow", "keras", "jax", "torch", "libcst")


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kmigrate", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=300,
    )


@pytest.fixture
def samples_copy(tmp_path: Path) -> Path:
    target = tmp_path / "samples"
    shutil.copytree(SAMPLES, target)
    return target


def python_files(folder: Path) -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.py"))}


def test_scan_json_follows_the_design_format(samples_copy: Path) -> None:
    result = run("scan", str(samples_copy), "--format", "json", "--jobs", "1")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["version"] == 1
    assert {"summary", "files", "findings"} <= set(report)
    assert report["findings"], "the samples are legacy code: there must be findings"
    for finding in report["findings"]:
        assert set(FINDING_FIELDS) <= set(finding)
        assert finding["severity"] in ("error", "warning", "info")
        assert finding["context"] in (
            "model",
            "training-loop",
            "data",
            "serving",
            "distribution",
            "undecided",
            "other",
        )
        assert not Path(finding["path"]).is_absolute()


def test_scan_never_writes(samples_copy: Path) -> None:
    before = python_files(samples_copy)
    assert run("scan", str(samples_copy), "-q").returncode == 0
    assert python_files(samples_copy) == before


def _lines_fixes_may_touch(folder: Path) -> dict[str, set[int]]:
    """Per file: lines inside fixable findings, plus import lines (imports are added
    and removed) — the only lines `apply` may replace."""
    report = json.loads(run("scan", str(folder), "-f", "json", "-q", "-j", "1").stdout)
    allowed: dict[str, set[int]] = {}
    for finding in report["findings"]:
        if finding["fixable"]:
            lines = range(finding["line"], finding["end_line"] + 1)
            allowed.setdefault(Path(finding["path"]).name, set()).update(lines)
    for path in folder.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
                allowed.setdefault(path.name, set()).update(lines)
    return allowed


# Lines a class-level fix (a SeedGenerator owned by the layer) may extend.
CLASS_EDIT_LINES = ("def __init__(", "return {", "return config", "super(")


def test_apply_is_idempotent_and_keeps_untouched_lines(samples_copy: Path) -> None:
    before = python_files(samples_copy)
    allowed = _lines_fixes_may_touch(samples_copy)
    first = run("apply", str(samples_copy), "--jobs", "1")
    assert first.returncode == 0, first.stderr
    after = python_files(samples_copy)
    assert after != before
    for path, text in after.items():
        ast.parse(text)  # every file still parses
        # Lines outside the rewritten nodes are byte-identical: every replaced or
        # deleted line lies in a fixable finding or an import, or is a class edit.
        old_lines = before[path].splitlines(keepends=True)
        new_lines = text.splitlines(keepends=True)
        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        for tag, i1, i2, _, _ in matcher.get_opcodes():
            if tag in ("equal", "insert"):
                continue
            for number in range(i1 + 1, i2 + 1):
                line = old_lines[number - 1]
                assert number in allowed.get(path.name, set()) or any(
                    marker in line for marker in CLASS_EDIT_LINES
                ), f"{path.name}:{number} changed outside any fix: {line!r}"
    second = run("apply", str(samples_copy), "--jobs", "1")
    assert second.returncode == 0, second.stderr
    assert python_files(samples_copy) == after, "second apply changed files"


def test_apply_diff_writes_nothing_and_is_a_valid_patch(samples_copy: Path, tmp_path: Path) -> None:
    before = python_files(samples_copy)
    result = run("apply", str(samples_copy), "--diff", "--jobs", "1", cwd=samples_copy)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("--- a/")
    assert python_files(samples_copy) == before
    if shutil.which("git"):
        patch = tmp_path / "change.patch"
        patch.write_text(result.stdout)
        check = subprocess.run(
            ["git", "apply", "--check", str(patch)],
            cwd=samples_copy,
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stderr


def test_apply_check_exits_1_when_there_is_work(samples_copy: Path) -> None:
    assert run("apply", str(samples_copy), "--diff", "--check", "-q").returncode == 1


def test_apply_check_alone_is_a_dry_run(samples_copy: Path) -> None:
    """As `black --check`: in CI, --check must never rewrite the checkout and pass."""
    before = python_files(samples_copy)
    result = run("apply", str(samples_copy), "--check", "--jobs", "1")
    assert result.returncode == 1, result.stderr
    assert python_files(samples_copy) == before
    assert "would rewrite" in result.stdout and "custom_layers" in result.stdout
    assert run("apply", str(samples_copy), "--jobs", "1", "-q").returncode == 0
    clean = run("apply", str(samples_copy), "--check", "--jobs", "1")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout == ""


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert run("scan", str(tmp_path / "missing")).returncode == 2
    assert run("scan", str(tmp_path), "--select", "KM999").returncode == 2


def test_an_empty_or_mistyped_folder_is_a_usage_error(tmp_path: Path) -> None:
    """Not "No findings, portability 100%": nothing was scanned, and the user is told."""
    (tmp_path / "README.md").write_text("no code here\n")
    result = run("scan", str(tmp_path))
    assert result.returncode == 2
    assert "no Python file" in result.stderr
    (tmp_path / "one.py").write_text("x = 1\n")
    for shard in ("1/4", "2/4", "3/4", "4/4"):  # a shard may hold no file: an empty report
        assert run("scan", str(tmp_path), "--shard", shard, "-q").returncode == 0, shard


def test_report_output_dash_is_stdout_and_a_missing_folder_exits_2(
    samples_copy: Path, tmp_path: Path
) -> None:
    target = samples_copy / "custom_layers"
    dash = run("scan", str(target), "-f", "json", "-o", "-", "-q", "-j", "1", cwd=tmp_path)
    assert dash.returncode == 0 and json.loads(dash.stdout)["findings"]
    assert not (tmp_path / "-").exists()
    missing = run("scan", str(target), "-o", str(tmp_path / "nope" / "r.json"), "-q")
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr and "Traceback" not in missing.stderr


def _imported_after(*args: str) -> set[str]:
    code = (
        "import sys\n"
        "from kmigrate.cli.main import main\n"
        "try:\n"
        f"    main({list(args)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('MODULES:' + ' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("MODULES:"))
    return set(line[len("MODULES:") :].split())


def test_scan_imports_no_framework_and_no_libcst(samples_copy: Path) -> None:
    modules = _imported_after("scan", str(samples_copy), "--format", "json", "-q", "--jobs", "1")
    assert not {m.split(".")[0] for m in modules} & set(HEAVY_MODULES)


def test_apply_imports_libcst_only_when_there_are_fixes(tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "ok.py").write_text("import keras\nx = keras.layers.Dense(3)\n")
    modules = _imported_after("apply", str(clean), "-q", "--jobs", "1")
    assert "libcst" not in modules
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "old.py").write_text("import tensorflow as tf\nx = tf.keras.layers.Dense(3)\n")
    modules = _imported_after("apply", str(legacy), "-q", "--jobs", "1")
    assert "libcst" in modules
    assert not {m.split(".")[0] for m in modules} & {"tensorflow", "keras", "jax", "torch"}
    assert (legacy / "old.py").read_text() == "import keras\nx = keras.layers.Dense(3)\n"


def test_rules_and_explain() -> None:
    listing = run("rules")
    assert listing.returncode == 0 and "KM101" in listing.stdout
    explained = run("explain", "KM101")
    assert explained.returncode == 0
    assert "Flagged" in explained.stdout and "After `kmigrate apply`" in explained.stdout
    assert run("explain", "KM999").returncode == 2
