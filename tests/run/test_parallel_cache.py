"""Speed features must not change results: --jobs, the result cache, --shard + merge,
the fast tree traversal, and the lazy imports of scan and check."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.engine.names import LEAF_KINDS, child_nodes, code_children, walk
from kmigrate.engine.report_findings import node_dump
from kmigrate.project.config import load_config
from kmigrate.run import report_codec
from kmigrate.run.runner import in_shard, parse_shard, plan_jobs, run_jobs, select_ids
from kmigrate.store import cache as cache_module
from kmigrate.store.cache import ResultCache

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("make_corpus", ROOT / "benchmarks/make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A small generated legacy project (its own pyproject.toml), plus a notebook."""
    root = tmp_path_factory.mktemp("corpus") / "project"
    _generator().generate(root, files=24, seed=5)
    shutil.copy(ROOT / "samples/notebook/custom_layer_demo.ipynb", root / "demo.ipynb")
    return root


def _copy(corpus: Path, tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(corpus, target, ignore=shutil.ignore_patterns(".kmigrate_cache"))
    return target


def _kmigrate(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kmigrate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _scan_json(project: Path, *options: str) -> str:
    out = project.parent / "report.json"
    done = _kmigrate("scan", ".", "--format", "json", "-q", "-o", str(out), *options, cwd=project)
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8")


# -- --jobs ----------------------------------------------------------------------


def test_jobs_2_gives_the_same_json_as_jobs_1(corpus, tmp_path) -> None:
    project = _copy(corpus, tmp_path)
    one = _scan_json(project, "--jobs", "1", "--no-cache")
    two = _scan_json(project, "--jobs", "2", "--no-cache")
    assert json.loads(one)["summary"]["findings"] > 100
    assert one == two


def test_a_workers_report_unpacks_its_findings_only_when_read(corpus, tmp_path) -> None:
    """A report crosses from a worker with its findings packed: the JSON report reads
    none of them (the digest stands for them), and read they are the worker's, with a
    digest that still stands for them until the list changes."""
    import pickle

    from kmigrate.engine.run_data import RunResult
    from kmigrate.report import render

    project = _copy(corpus, tmp_path)
    result, _ = _run(project, cache=False)
    expected = {fmt: render(result, fmt, root=project) for fmt in ("json", "sarif")}
    crossed = [pickle.loads(pickle.dumps(r)) for r in result.files]
    packed = [r for r in crossed if "findings" not in vars(r)]
    assert len(packed) == sum(1 for r in result.files if r.findings) > 10
    assert all(r.digest.fits(r) for r in packed)
    assert render(RunResult(crossed, result.rule_ids), "json", root=project) == expected["json"]
    assert all("findings" not in vars(r) for r in packed)  # not one was read
    twice = [pickle.loads(pickle.dumps(r)) for r in crossed]  # still packed: as it was
    assert render(RunResult(twice, result.rule_ids), "sarif", root=project) == expected["sarif"]
    for before, after in zip(result.files, twice, strict=True):
        assert after.findings == before.findings
        assert after.digest is None or after.digest.fits(after)
    report = next(r for r in twice if r.findings)
    report.findings.append(dataclasses.replace(report.findings[0], message="added"))
    assert not report.digest.fits(report)
    assert pickle.loads(pickle.dumps(report)).findings == report.findings


def test_the_last_collections_at_exit_skip_what_a_run_leaves(corpus, tmp_path) -> None:
    """A run has the process freeze its objects when it ends, before the interpreter's
    last collections (a handler registered before the run runs after it)."""
    project = _copy(corpus, tmp_path)
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen' if gc.get_freeze_count() else 'not'))\n"
        "from kmigrate.cli.main import main\n"
        "main(sys.argv[1:])\n"
    )
    args = ["scan", ".", "-q", "--no-cache", "--jobs", "1", "-f", "json", "-o", "r.json"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=project, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["frozen"]


# -- the result cache --------------------------------------------------------------


def test_warm_cache_gives_the_same_json(corpus, tmp_path) -> None:
    project = _copy(corpus, tmp_path)
    cold = _scan_json(project, "--jobs", "2")
    assert (project / ".kmigrate_cache/.gitignore").read_text().splitlines()[-1] == "*"
    assert (project / ".kmigrate_cache/CACHEDIR.TAG").is_file()
    warm = _scan_json(project, "--jobs", "2")
    assert warm == cold
    assert _scan_json(project, "--no-cache", "--jobs", "1") == cold


def test_a_warm_json_report_joins_the_stored_findings(corpus, tmp_path, monkeypatch) -> None:
    """Each cached result keeps its findings as the JSON report writes them, and their
    counts; a warm report joins them (not one finding is encoded or counted again) into
    the same bytes, also when a finding is added after the cache (KM903 is opt-in and
    comes after the run)."""
    from kmigrate.engine.run_data import RunResult
    from kmigrate.report import json_report, render, summary

    project = _copy(corpus, tmp_path)
    cold, _ = _run(project, cache=False)
    expected = render(cold, "json", root=project)
    _run(project)  # fills the cache

    def fail(finding):
        raise AssertionError("a finding was encoded again")

    with monkeypatch.context() as patch:
        patch.setattr(json_report, "finding_json", fail)
        patch.setattr(summary, "count_findings", fail)  # the counts are stored too
        warm, _ = _run(project)
        patch.setattr(RunResult, "findings", property(fail))  # nor sorted
        assert render(warm, "json", root=project) == expected
    assert sum(len(r.findings) for r in warm.files) > 100
    for result in (warm, cold):  # a finding added to a list: that list is written again
        report = next(r for r in result.files if r.findings)
        report.findings.append(dataclasses.replace(report.findings[0], message="added"))
    assert render(warm, "json", root=project) == render(cold, "json", root=project)
    options = ("--select", "KM2,KM903", "--jobs", "1")
    assert _scan_json(project, *options) == _scan_json(project, *options, "--no-cache")
    assert _scan_json(project, *options) == _scan_json(project, *options, "--no-cache")


def test_a_warm_json_report_decodes_no_finding(corpus, tmp_path, monkeypatch) -> None:
    """A cached result's findings stay undecoded until something reads them: the JSON
    report of a warm re-scan never does; every other format does, and gets the
    findings of a cold scan."""
    from kmigrate.report import render

    project = _copy(corpus, tmp_path)
    cold, _ = _run(project, cache=False)
    _run(project)  # fills the cache

    def fail(stored):
        raise AssertionError("a cached finding was decoded")

    with monkeypatch.context() as patch:
        patch.setattr(report_codec.StoredFindings, "decode", fail)
        warm, _ = _run(project)
        assert render(warm, "json", root=project) == render(cold, "json", root=project)
    for fmt in ("sarif", "markdown", "html", "table"):
        warm, _ = _run(project)
        assert render(warm, fmt, root=project) == render(cold, fmt, root=project), fmt
    warm, _ = _run(project)
    assert sum(len(r.findings) for r in warm.files) > 100
    assert [r.findings for r in warm.files] == [r.findings for r in cold.files]


def test_every_format_of_a_warm_scan_is_the_cold_ones(corpus, tmp_path) -> None:
    project = _copy(corpus, tmp_path)
    for fmt in ("sarif", "markdown", "html", "table"):
        out = tmp_path / f"report.{fmt}"
        outputs = []
        for options in (("--no-cache",), (), ()):  # cold, then filling, then warm
            done = _kmigrate("scan", ".", "-f", fmt, "-q", "-o", str(out), *options, cwd=project)
            assert done.returncode == 0, done.stderr
            outputs.append(out.read_bytes())
        assert outputs[0] == outputs[1] == outputs[2], fmt


def test_backend_pins_of_a_warm_scan(corpus, tmp_path) -> None:
    """Whether a file names a backend variable is noted where the run reads it and
    stored with its result, so a warm scan's report reads only the files that do:
    it finds the same pins, in files with and without TensorFlow, and a pin added
    to a file."""
    project = _copy(corpus, tmp_path)
    (project / "conftest.py").write_text('import os\nos.environ["KERAS_BACKEND"] = "jax"\n')
    edited = next(p for p in sorted(project.rglob("*.py")) if b"tensorflow" in p.read_bytes())

    def pins() -> list:
        return json.loads(_scan_json(project))["summary"]["backend"]["pins"]

    expected = [{"path": "conftest.py", "line": 2, "variable": "KERAS_BACKEND"}]
    for _ in range(2):  # cold, then warm
        assert [{k: p[k] for k in ("path", "line", "variable")} for p in pins()] == expected
    first, _ = _run(project)
    assert {r.path for r in first.files if r.mentions_backend} == {"conftest.py"}
    assert all(r.mentions_backend is not None for r in first.files)
    edited.write_text(edited.read_text() + '\nos.environ.setdefault("KERAS_BACKEND", "torch")\n')
    shown = edited.relative_to(project).as_posix()
    for _ in range(2):
        assert {(p["path"], p["value"]) for p in pins()} == {
            ("conftest.py", "jax"),
            (shown, "torch"),
        }


def test_backend_pins_trust_what_the_run_noted(tmp_path) -> None:
    """A file the run noted as naming no backend variable is not read again."""
    from kmigrate.project.backend_pins import find_backend_pins

    (tmp_path / "a.py").write_text('import os\nos.environ["KERAS_BACKEND"] = "jax"\n')
    assert [p.path for p in find_backend_pins([tmp_path], tmp_path, ["a.py"])] == ["a.py"]
    assert find_backend_pins([tmp_path], tmp_path, ["a.py"], {"a.py": False}) == []
    noted = find_backend_pins([tmp_path], tmp_path, ["a.py"], {"a.py": True})
    assert [p.value for p in noted] == ["jax"]


def test_a_warm_report_reads_no_source_file(corpus, tmp_path, monkeypatch) -> None:
    """What is left of TensorFlow after `apply` is stored with each result: the report
    of a warm re-scan parses nothing (reading every file again cost a warm re-scan
    three times its time)."""
    from kmigrate.report import footprint
    from kmigrate.report.summary import build_report

    project = _copy(corpus, tmp_path)
    cold, _ = _run(project)
    expected = build_report(cold, project)

    def fail(text):
        raise AssertionError("the report read a source file")

    monkeypatch.setattr(footprint, "tensorflow_uses_of_text", fail)
    warm, _ = _run(project)
    report = build_report(warm, project)
    assert [f.tf_leftovers for f in report.files] == [f.tf_leftovers for f in expected.files]
    assert any(f.tf_leftovers for f in report.files)


def test_a_cached_result_keeps_what_apply_fixes_in_a_later_round(tmp_path) -> None:
    """``fixed_later`` findings (an import kept until the calls that need it are fixed)
    are fixable in a warm scan too: the result cache stores ``fixable``, not the plan."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (project / "cell.py").write_text(
        "import tensorflow.keras as keras\n\n\n"
        "class Cell(keras.layers.Layer):\n"
        "    def call(self, x):\n"
        "        return keras.backend.bias_add(keras.backend.dot(x, self.kernel), self.bias)\n"
    )
    cold = json.loads(_scan_json(project))["findings"]
    assert any(f["rule"] == "KM102" and f["fixable"] for f in cold)
    assert json.loads(_scan_json(project))["findings"] == cold


def _run(project: Path, rule_ids=None, cache=True):
    config = load_config(project)
    ids = rule_ids or select_ids([], [])
    jobs = plan_jobs([project], config)
    store = ResultCache.open(config.root, ids, config.cache_key()) if cache else None
    return run_jobs(jobs, ids, 1, cache=store), store


def _analysed(monkeypatch) -> list[str]:
    """Paths run_job analyses from now on (a cache hit never calls it)."""
    import kmigrate.run.runner as runner

    calls: list[str] = []
    real = runner.run_job

    def counting(job, rule_ids, data=None):
        calls.append(job.display)
        return real(job, rule_ids, data)

    monkeypatch.setattr(runner, "run_job", counting)
    return calls


def _tf_files(result) -> list[str]:
    return [r.path for r in result.files if r.uses_tensorflow]


def test_cache_hits_and_invalidation(corpus, tmp_path, monkeypatch) -> None:
    project = _copy(corpus, tmp_path)
    first, store = _run(project)
    calls = _analysed(monkeypatch)
    again, _ = _run(project)
    assert not set(calls) & set(_tf_files(first))  # every TF file came from the cache
    assert [r.findings for r in again.files] == [r.findings for r in first.files]

    # content: only the edited file is analysed again
    edited = next(p for p in sorted(project.rglob("*.py")) if b"tensorflow" in p.read_bytes())
    edited.write_text(edited.read_text() + "\nEXTRA = tf.reduce_sum([1.0])\n")
    calls.clear()
    _run(project)
    assert [c for c in calls if c in _tf_files(first)] == [edited.relative_to(project).as_posix()]

    # rule selection, kmigrate version, kmigrate's own code, config: a new run key
    keys = {store.folder.name}
    keys.add(_run(project, rule_ids=select_ids(["KM2"], []))[1].folder.name)
    monkeypatch.setattr(cache_module, "__version__", "99.0")
    keys.add(_run(project)[1].folder.name)
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "edited-rules")
    keys.add(_run(project)[1].folder.name)
    (project / "pyproject.toml").write_text('[tool.kmigrate]\nignore = ["KM5"]\n')
    keys.add(_run(project)[1].folder.name)
    monkeypatch.setenv("KMIGRATE_MAX_FILE_MB", "1")
    keys.add(_run(project)[1].folder.name)
    assert len(keys) == 6

    # none of them served the old entries: everything was analysed again
    calls.clear()
    monkeypatch.setattr(cache_module, "__version__", "99.1")
    _run(project)
    assert set(_tf_files(first)) <= set(calls)


def test_damaged_cache_entries_are_misses(corpus, tmp_path) -> None:
    project = _copy(corpus, tmp_path)
    first, store = _run(project)
    for entry in store.folder.iterdir():
        if not entry.name.startswith("."):
            entry.write_bytes(b"KMC1\nnot a pickle")
    again, _ = _run(project)
    assert [r.findings for r in again.files] == [r.findings for r in first.files]


def test_apply_with_a_warm_cache_rewrites_the_same(corpus, tmp_path) -> None:
    cold = _copy(corpus, tmp_path / "cold")
    warm = _copy(corpus, tmp_path / "warm")
    _scan_json(warm, "--jobs", "2")  # fills the cache: clean files are skipped by apply
    for project, options in ((cold, ["--no-cache"]), (warm, [])):
        done = _kmigrate("apply", ".", "-q", "--jobs", "2", "--allow-dirty", *options, cwd=project)
        assert done.returncode == 0, done.stderr
    changed = 0
    for path in sorted(cold.rglob("*.py")):
        twin = warm / path.relative_to(cold)
        assert path.read_bytes() == twin.read_bytes(), path
        original = corpus / path.relative_to(cold)  # a helper module apply wrote is new
        changed += not original.exists() or path.read_bytes() != original.read_bytes()
    assert changed > 5


# -- --shard and merge -------------------------------------------------------------


def test_shards_partition_the_files_and_merge_into_the_unsharded_report(corpus, tmp_path):
    project = _copy(corpus, tmp_path)
    whole = _scan_json(project, "--no-cache")
    parts = []
    for k in (1, 2, 3):
        out = tmp_path / f"shard{k}.json"
        out.write_text(_scan_json(project, "--shard", f"{k}/3"))
        parts.append(out)
    files = [{f["path"] for f in json.loads(p.read_text())["files"]} for p in parts]
    assert all(files) and sum(len(f) for f in files) == len(set().union(*files))
    assert set().union(*files) == {f["path"] for f in json.loads(whole)["files"]}
    merged = tmp_path / "merged.json"
    done = _kmigrate("merge", *map(str, parts), "-o", str(merged), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert merged.read_text() == whole


def test_merge_of_several_repositories_prefixes_paths(corpus, tmp_path) -> None:
    project = _copy(corpus, tmp_path)
    report = tmp_path / "one.json"
    report.write_text(_scan_json(project))
    done = _kmigrate("merge", f"api={report}", f"web={report}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    single = json.loads(report.read_text())
    assert data["summary"]["findings"] == 2 * single["summary"]["findings"]
    assert data["summary"]["files_scanned"] == 2 * single["summary"]["files_scanned"]
    assert {f["path"].split("/")[0] for f in data["findings"]} == {"api", "web"}
    markdown = _kmigrate("merge", f"api={report}", "-f", "markdown", cwd=tmp_path)
    assert markdown.returncode == 0 and "api/" in markdown.stdout


def test_merge_refuses_what_is_not_a_report(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    done = _kmigrate("merge", str(bad), cwd=tmp_path)
    assert done.returncode == 2 and "not a kmigrate JSON report" in done.stderr


def test_shard_option_values() -> None:
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "2", "a/b"):
        with pytest.raises(ValueError):
            parse_shard(bad)
    paths = [f"pkg/module_{i}.py" for i in range(400)]
    shards = [[p for p in paths if in_shard(p, (k, 4))] for k in range(1, 5)]
    assert sorted(sum(shards, [])) == sorted(paths)
    assert all(60 < len(s) < 140 for s in shards)  # a hash, not a stripe


# -- fast traversal == stdlib -------------------------------------------------------

SYNTAX = textwrap.dedent(
    """
    import a.b as c
    from .x import (y as z, w)
    from __future__ import annotations
    @deco(1, *args, k=2, **kw)
    async def f(p, /, q: int = 1, *r, s=None, t, **u) -> "T":
        global G
        async with m() as (n, o), p:
            async for i in aiter():
                yield i
        try:
            x = {**d, 1: 2}
        except* (ValueError, TypeError) as e:
            del e
        finally:
            pass
        return [j for j in range(3) if j if not j] or {k: v for k, v in []}
    class C(B, metaclass=M):
        attr: int = 3
        def g(self, v=lambda q=1: q):
            nonlocal_ = (w := 5)
            match v:
                case [1, *rest] | {"k": _, **others} if rest:
                    pass
                case Point(x=0, y=yy) as pt:
                    print(f"{pt!r:>{yy}}")
                case None | True:
                    raise ValueError from None
            return -v ** 2 < 3 <= 4 and not v is not None
    x[1:2, ::3] += ~y @ z
    """
)


def test_fast_children_match_the_ast_module() -> None:
    tree = ast.parse(SYNTAX)
    for node in ast.walk(tree):
        children = list(ast.iter_child_nodes(node))
        assert child_nodes(node) == children
        assert code_children(node) == [c for c in children if not isinstance(c, LEAF_KINDS)]
        assert node_dump(node) == ast.dump(node)
    assert list(walk(tree)) == list(ast.walk(tree))


# -- lazy imports ------------------------------------------------------------------

HEAVY = ("libcst", "tensorflow", "keras", "jax", "torch", "rich")

_PROBE = """
import json, sys
from kmigrate.cli.main import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(%r)))
print(json.dumps(heavy))
"""


@pytest.mark.parametrize("command", ["scan", "check"])
def test_scan_and_check_never_import_heavy_modules(corpus, tmp_path, command, clean_env):
    project = _copy(corpus, tmp_path)
    target = next(p for p in sorted(project.rglob("*.py")) if b"tf." in p.read_bytes())
    args = [command, str(target), "-q", "--no-cache"]
    args += ["--format", "json", "-o", str(tmp_path / "out.json")] if command == "scan" else []
    env = clean_env
    probe = _PROBE % json.dumps(HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_cache_folder_stays_out_of_git(corpus, tmp_path) -> None:
    project = _copy(corpus, tmp_path)
    _scan_json(project)
    if shutil.which("git") is None:
        pytest.skip("no git")
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_SYSTEM=os.devnull)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert ".kmigrate_cache" not in status.stdout
