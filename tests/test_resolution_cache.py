"""Resolving a project again after an edit, from its stored resolution, gives exactly
the facts a resolution from scratch gives (commands/resolution_cache.py).

A small repository written for this test is edited step by step, in the ways a
pre-commit hook sees files change: a call added to a function body, a base class
removed, an import added, a re-export added, a module renamed, a name cycle made and
broken, a TF function patched. After each step the facts from the stored resolution
are compared with those of a fresh index over the same files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kmigrate.commands import project_scan
from kmigrate.engine.project_index import ProjectIndex

FILES = {
    "pkg/__init__.py": "from .layers import Scale\n",
    "pkg/backend.py": "import tensorflow as tf\nK = tf.keras.backend\n",
    "pkg/base.py": """
        from tensorflow import keras

        class BaseLayer(keras.layers.Layer):
            def norm(self, x):
                return x
        """,
    "pkg/ops.py": """
        import tensorflow as tf

        def gelu(x):
            return tf.nn.gelu(x)

        def unused(x):
            return tf.abs(x)

        def scale_by(x, s):
            return helper(x) * s

        def helper(x):
            return tf.square(x)
        """,
    "pkg/layers.py": """
        from pkg.base import BaseLayer
        from pkg import ops

        class Scale(BaseLayer):
            def call(self, x):
                return ops.gelu(x)

        class Plain:
            def run(self, x):
                return x
        """,
    "pkg/data.py": """
        import tensorflow as tf
        from pkg.ops import helper

        def pipeline(files):
            return tf.data.Dataset.from_tensor_slices(files).map(helper)
        """,
    "train.py": """
        from pkg.backend import K
        from pkg.layers import Scale

        def build(x):
            return Scale()(x)
        """,
}

DELETE = 0
# (description, file, change): an (old, new) replacement in the file, the text of a new
# file, DELETE, or None: pkg/ops.py renamed and its importers changed to follow
EDITS = [
    ("a call added to a layer method", "pkg/layers.py", ("ops.gelu(x)", "ops.scale_by(x, 2)")),
    ("a call added to a helper", "pkg/ops.py", ("return tf.abs(x)", "return gelu(x)")),
    ("a base class removed", "pkg/base.py", ("(keras.layers.Layer)", "")),
    (
        "the base class back",
        "pkg/base.py",
        ("class BaseLayer:", "class BaseLayer(keras.layers.Layer):"),
    ),
    (
        "an import added",
        "pkg/data.py",
        ("from pkg.ops import helper\n", "from pkg.ops import helper\nfrom pkg.backend import K\n"),
    ),
    ("a re-export added", "pkg/__init__.py", ("\n", "\nfrom .ops import unused as exported\n")),
    (
        "the re-export used",
        "train.py",
        ("return Scale()(x)", "import pkg\n    return pkg.exported(Scale()(x))"),
    ),
    (
        "an import of a module not there yet",
        "pkg/layers.py",
        ("ops.scale_by(x, 2)", "extra.double(ops.scale_by(x, 2))"),
    ),
    ("... its import", "pkg/layers.py", ("from pkg import ops\n", "from pkg import ops, extra\n")),
    (
        "the module added",
        "pkg/extra.py",
        "import tensorflow as tf\ndef double(x):\n    return tf.square(x)\n",
    ),
    ("a module of the same name in src/", "src/pkg/ops.py", "def gelu(x):\n    return x\n"),
    ("a package added above it", "src/pkg/__init__.py", ""),
    ("that module removed", "src/pkg/ops.py", DELETE),
    ("the added module removed", "pkg/extra.py", DELETE),
    ("a module renamed", "pkg/ops.py", None),
    (
        "a name cycle made",
        "pkg/base.py",
        ("class BaseLayer(", "from pkg.layers import BaseLayer as Loop\nclass BaseLayer(Loop, "),
    ),
    ("a body edit inside the cycle", "pkg/layers.py", ("return x\n", "return x + 1\n")),
    ("the cycle broken", "pkg/base.py", ("Loop, ", "")),
    (
        "a TF function patched",
        "pkg/backend.py",
        ("\n", "\ndef reshape(x, shape):\n    return x\nK.reshape = reshape\n"),
    ),
    ("a body edit beside a patch", "pkg/layers.py", ("return x + 1\n", "return x + 2\n")),
]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def _edit(root: Path, name: str, change) -> None:
    path = root / name
    if change is None:  # rename: the module moves, its importers follow
        path.rename(root / "pkg" / "functional.py")
        for other in root.rglob("*.py"):
            text = other.read_text()
            text = text.replace("from pkg import ops", "from pkg import functional as ops")
            other.write_text(
                text.replace("pkg.ops", "pkg.functional").replace(".ops ", ".functional ")
            )
        return
    if change is DELETE:
        path.unlink()
        return
    if isinstance(change, str):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(change)
        return
    old, new = change
    text = path.read_text()
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1))


def _resolve(root: Path, use_store: bool) -> dict:
    files = project_scan.read_files(project_scan.index_scope([root], root, []))
    store = project_scan.index_store(root) if use_store else None
    digests = {project_scan._key(p): project_scan._digest(d) for p, d in files}
    project = project_scan._Project(root, store, digests)
    if project.stored is not None and project.stored.project == project.key:
        facts = project.stored.facts()
    else:
        records = project_scan.index_records(files, root, store, 1, None, project.stored)
        facts = project.resolve(records)
    return {key: facts[key] for key in facts}


def _reference(root: Path) -> dict:
    """The facts as ``ProjectIndex.facts`` makes them: one index, no store."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    files = project_scan.read_files(project_scan.index_scope([root], root, []))
    records = sorted(project_scan.index_records(files, root, None), key=lambda r: r.key)
    index = ProjectIndex(records, CONTEXT_SPEC)
    return {record.key: index.facts(record) for record in records}


def test_incremental_facts_are_those_of_a_fresh_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    _write(root, FILES)
    made: list[str] = []
    local = ProjectIndex.local

    def counted(self, record):
        made.append(record.key)
        return local(self, record)

    monkeypatch.setattr(ProjectIndex, "local", counted)
    first = _resolve(root, use_store=True)
    assert first == _resolve(root, use_store=False) == _reference(root)
    layers = str(root / "pkg" / "layers.py")
    assert first[layers].model_classes == ("Scale",)
    assert first[str(root / "pkg" / "ops.py")].model_functions == ("gelu",)
    assert first[str(root / "pkg" / "ops.py")].data_functions == ("helper",)
    partial = 0
    for description, name, change in EDITS:
        _edit(root, name, change)
        made.clear()
        incremental = _resolve(root, use_store=True)
        redone = len(made)
        fresh = _resolve(root, use_store=False)
        assert incremental == fresh == _reference(root), description
        partial += redone < len(fresh)
        # the stored resolution is now this one: asking again resolves nothing
        made.clear()
        assert _resolve(root, use_store=True) == fresh, description
        assert made == [], description
    # most edits re-resolved a few modules, not the project
    assert partial >= 14


def test_the_edits_change_the_facts(tmp_path: Path) -> None:
    """The comparison above means something: each kind of edit moves some fact."""
    root = tmp_path / "repo"
    _write(root, FILES)
    ops = str(root / "pkg" / "ops.py")
    before = _resolve(root, use_store=False)
    _edit(root, *EDITS[0][1:])
    after = _resolve(root, use_store=False)
    assert before[ops].model_functions == ("gelu",)
    assert after[ops].model_functions == ("helper", "scale_by")
    assert after[ops].mixed_functions == ("helper",)
    _edit(root, *EDITS[1][1:])
    _edit(root, *EDITS[2][1:])
    assert _resolve(root, use_store=False)[str(root / "pkg" / "layers.py")].model_classes == ()


def _damages(row: list) -> list:
    """Rows as a bug (or another build) could have written them: each is a miss."""
    layers = [row[:5] + [0] + row[6:], row + [None], row[:3] + [[10**6]] + row[4:]]
    local = row[6]
    for bad in (
        {**local[4], "f": ["x"]},  # a node without a slot
        {**local[4], "f": ["999999:f"]},  # a slot out of range
        {"f": 3},
        [["f", []]],  # edges as a list
    ):
        layers.append(row[:6] + [local[:4] + [bad] + local[5:]] + row[7:])
    layers.append(row[:6] + [local[:1] + [[["K"]]] + local[2:]] + row[7:])  # a pair of one
    return layers


def test_a_damaged_row_is_a_miss_not_a_crash(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root, FILES)
    assert _resolve(root, use_store=True)
    store = project_scan.index_store(root)
    assert store is not None
    (stored,) = store.folder.glob("resolved.*")
    root_key = stored.name.partition(".")[2]
    value = store.load_value("resolved", root_key, lambda v: v)
    for damaged in [["short"], *_damages(value["files"][0])]:
        value["files"][0] = damaged
        store.store_value("resolved", root_key, value)  # signed: only its shape is wrong
        assert project_scan.load_resolution(store, root_key) is None, damaged
        assert _resolve(root, use_store=True) == _reference(root)


def test_a_cold_run_stores_its_entries_in_one_pack(tmp_path: Path) -> None:
    """Many new entries go into the pack alone (one write, not one file each); after an
    edit, the entries resolution needs are read from it, and stored one by one."""
    root = tmp_path / "repo"
    helpers = {f"pkg/helper_{i}.py": f"def helper_{i}(x):\n    return x\n" for i in range(20)}
    _write(root, {**FILES, **helpers})
    assert _resolve(root, use_store=True) == _reference(root)
    store = project_scan.index_store(root)
    assert store is not None
    assert not list(store.folder.glob("index.*"))
    assert list(store.folder.glob("pack.*"))
    _edit(root, "pkg/layers.py", ("ops.gelu(x)", "ops.scale_by(x, 2)"))
    assert _resolve(root, use_store=True) == _reference(root)
    assert list(store.folder.glob("index.*"))  # the changed file's, and those read from the pack


# (file, edit): what a pre-commit hook sees between two commits
HOOK_EDITS = [
    (
        "pipe/ops.py",
        ("return tf.reverse(x, axis=[0])", "return tf.reverse(gelu_tanh(x), axis=[0])"),
    ),
    ("pipe/layers.py", ("return ops.gelu_tanh(x)", "return ops.augment(x)")),
    ("pipe/ops.py", ("def augment(x):", "def flip(x):\n    return x\n\n\ndef augment(x):")),
    ("pipe/layers.py", ("class Activation(tf.keras.layers.Layer):", "class Activation:")),
    ("pipe/data.py", ("from pipe.ops import augment, standardize", "from pipe.ops import *")),
    ("pipe/ops.py", ("def standardize(x):", "def standardise(x):")),
    (
        "pipe/extra.py",
        "import tensorflow as tf\nfrom pipe.ops import augment\n\n\n"
        "class Flip(tf.keras.layers.Layer):\n    def call(self, x):\n        return augment(x)\n",
    ),
    ("pipe/extra.py", DELETE),
]


THREE_LEVEL_EDITS = [
    ("zoo/core.py", ("class Module(keras.layers.Layer):", "class Module:")),
    ("zoo/core.py", ("class Module:", "class Module(keras.layers.Layer):")),
    (
        "zoo/mid.py",
        ("from zoo.core import Module", "from zoo.core import Module as Base\nModule = Base"),
    ),
    ("zoo/core2.py", "class Module:\n    pass\n"),
    ("zoo/mid.py", ("from zoo.core import Module as Base", "from zoo.core2 import Module as Base")),
    ("zoo/core2.py", DELETE),
]


@pytest.mark.parametrize("parse_twice_up_to", [0, 8])  # the edited file analysed first, or not
@pytest.mark.parametrize(
    ("repo", "edits"), [("shared_helper", HOOK_EDITS), ("three_level", THREE_LEVEL_EDITS)]
)
def test_the_hook_reports_after_each_edit_what_a_run_without_cache_reports(
    tmp_path: Path, repo: str, edits: list, parse_twice_up_to: int, monkeypatch
) -> None:
    """End to end, as ``kmigrate check FILE`` runs after each commit: the edited file is
    analysed first on its own and the project resolved again from the stored resolution;
    every file checked then (the edited one and the others) has the findings of a run
    that stores and reuses nothing."""
    from kmigrate.commands.config import Config
    from kmigrate.commands.runner import plan_jobs, run_jobs, select_ids
    from tests.repo_fixtures import copy_repo, finding_lines

    monkeypatch.setattr(project_scan, "_PARSE_TWICE_UP_TO", parse_twice_up_to)
    root = copy_repo(repo, tmp_path)
    config = Config(root=root.resolve())
    ids = select_ids((), ())

    def check(path: Path, cached: bool) -> list[str]:
        jobs = plan_jobs([path], config, index_cache=cached)
        return finding_lines(run_jobs(jobs, ids))

    for name, change in [(None, None), *edits]:
        if name is not None:
            _edit(root, name, change)
        edited = [root / name] if name and (root / name).exists() else []
        others = sorted(p for p in root.rglob("*.py") if p not in edited)
        for path in [*edited, *others]:  # the edited file first: its run resolves again
            assert check(path, True) == check(path, False), (name, change, path)


# -- local facts made by the first analyses of a cold scan ---------------------------


def _records(root: Path, names: list[str]) -> list:
    files = project_scan.read_files([root / name for name in names])
    return sorted(project_scan.index_records(files, root, None), key=lambda r: r.key)


def test_local_facts_made_by_a_smaller_index_are_taken_only_where_it_agrees(
    tmp_path: Path,
) -> None:
    """pkg/layers.py's facts made by an index without pkg/ops.py (its `ops.gelu` then
    resolves to nothing) are refused by the project's; made by one with every module
    its names lead to, they are taken by an index with more modules, unless the TF
    functions some module replaces differ."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    root = tmp_path / "repo"
    _write(root, FILES)
    everything = [str(p.relative_to(root)) for p in sorted(root.rglob("*.py"))]
    project = ProjectIndex(_records(root, everything), CONTEXT_SPEC)
    layers = next(r for r in project.records if r.key.endswith("layers.py"))
    expected = ProjectIndex(project.records, CONTEXT_SPEC).local(layers)

    def made_by(names: list[str]):
        index = ProjectIndex(_records(root, names), CONTEXT_SPEC)
        record = next(r for r in index.records if r.key == layers.key)
        return index.local_with_reads(record)[1]

    without_ops = made_by(["pkg/layers.py", "pkg/base.py", "pkg/__init__.py"])
    assert without_ops.local != expected and not project.agrees(without_ops)
    enough = made_by(["pkg/layers.py", "pkg/base.py", "pkg/__init__.py", "pkg/ops.py"])
    assert enough.local == expected and project.agrees(enough)
    _edit(root, "pkg/backend.py", ("\n", "\ndef gelu(x):\n    return x\nK.gelu = gelu\n"))
    patched = ProjectIndex(_records(root, everything), CONTEXT_SPEC)
    assert not patched.agrees(enough)  # a call of K.gelu now runs the project's gelu


def test_a_cold_scan_takes_local_facts_from_its_first_analyses_where_they_are_the_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After each edit of the project, a cold scan (every file analysed before the
    project is resolved) resolves it with the local facts the first analyses made
    where the project's index agrees with theirs: each resolution also makes them all
    afresh here, and they must be the same."""
    from kmigrate.commands import resolution_cache
    from tests.repo_fixtures import run_repo

    monkeypatch.setattr(project_scan, "_PARSE_TWICE_UP_TO", 0)  # every file deferred
    original = resolution_cache._local_facts
    counts: list[tuple[int, int]] = []

    def checked(records, spec, made):
        index, local = original(records, spec, made)
        fresh = ProjectIndex(records, spec)
        assert local == {record.key: fresh.local(record) for record in records}
        counts.append((sum(local[key] is m.local for key, m in made.items()), len(made)))
        return index, local

    monkeypatch.setattr(resolution_cache, "_local_facts", checked)
    root = tmp_path / "repo"
    _write(root, FILES)
    run_repo(root)
    for _, name, change in EDITS:
        _edit(root, name, change)
        run_repo(root)
    assert sum(taken for taken, _ in counts) > 20  # taken for most files...
    assert any(taken < offered for taken, offered in counts)  # ... not for all (a
    # patch some first analyses did not see, a cycle the project's index met)
