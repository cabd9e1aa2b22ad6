"""Resolving a project again after an edit, from its stored resolution, gives exactly
the facts a resolution from scratch gives (project/resolution_cache.py).

A small repository written for this test is edited step by step, in the ways a
pre-commit hook sees files change: a call added to a function body, a base class
removed, an import added, a re-export added, a module renamed, a name cycle made and
broken, a TF function patched. After each step the facts from the stored resolution
are compared with those of a fresh index over the same files."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from kmigrate.engine.project_index import ProjectIndex
from kmigrate.project import index_entries, index_pass, project_files, stored_resolution

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
        "a line appended, as the hook sees an edit: the call graph is the stored one",
        "pkg/ops.py",
        ("return tf.square(x)\n", "return tf.square(x)\n\n_edit = 1\n"),
    ),
    ("a body edit calling nothing new", "pkg/data.py", (".map(helper)", ".map(helper).batch(2)")),
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
    # `K` bound by an import: the modules importing it from the backend are its facts
    (
        "the backend imports K",
        "pkg/backend.py",
        ("K = tf.keras.backend\n", "from tensorflow.keras import backend as K\n"),
    ),
    (
        "a star import of the backend",
        "pkg/layers.py",
        (
            "from pkg.base import BaseLayer\n",
            "from pkg.base import BaseLayer\nfrom pkg.backend import *\n",
        ),
    ),
    ("an importer of K no longer imports it", "train.py", ("from pkg.backend import K\n", "")),
    (
        "the backend as a module",
        "pkg/data.py",
        ("from pkg.backend import K\n", "from pkg import backend\n\nK = backend.K\n"),
    ),
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
    """Every module's facts as ``attach_facts`` works them out."""
    scope = project_files.index_scope([root], root, [])
    store = index_entries.index_store(root) if use_store else None
    project = index_pass.IndexedProject(root, store, None)
    read = project_files.ProjectFiles(scope, project.stored)
    project.take(read.digests, read.stamps)

    def full():  # what attach_facts does when a stored row does not fit
        project.stored = None
        return project.resolve(index_entries.index_records(read.complete(), root, store, 1))

    if project.stored is not None and project.stored.project == project.key:
        facts = project.stored.facts(full)
    else:
        records = index_entries.index_records(
            read.items, root, store, 1, None, project.stored, digests=read.digests
        )
        facts = project.resolve(records)
    return {key: facts[key] for key in facts}


def _counted_local(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys of the modules whose local facts are made from now on."""
    made: list[str] = []
    local = ProjectIndex.local

    def counted(self, record):
        made.append(record.key)
        return local(self, record)

    monkeypatch.setattr(ProjectIndex, "local", counted)
    return made


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file's stat is kept with its digest at once, as if its last change were
    long past (a test's files were all just written)."""
    monkeypatch.setattr(project_files, "SETTLED_NS", -(10**12))


def _reference(root: Path) -> dict:
    """The facts as ``ProjectIndex.facts`` makes them: one index, no store."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    files = project_files.read_files(project_files.index_scope([root], root, []))
    records = sorted(index_entries.index_records(files, root, None), key=lambda r: r.key)
    index = ProjectIndex(records, CONTEXT_SPEC)
    return {record.key: index.facts(record) for record in records}


@pytest.mark.parametrize("stamped", [False, True])  # files read every run, or by stat
def test_incremental_facts_are_those_of_a_fresh_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stamped: bool
) -> None:
    if stamped:
        monkeypatch.setattr(project_files, "SETTLED_NS", -(10**12))
    root = tmp_path / "repo"
    _write(root, FILES)
    made = _counted_local(monkeypatch)
    first = _resolve(root, use_store=True)
    assert first == _resolve(root, use_store=False) == _reference(root)
    layers = str(root / "pkg" / "layers.py")
    assert first[layers].model_classes == ("Scale",)
    assert first[str(root / "pkg" / "ops.py")].model_functions == ("gelu",)
    assert first[str(root / "pkg" / "ops.py")].data_functions == ("helper",)
    partial = 0
    for description, name, change in EDITS:
        if stamped:  # an edit past the file system's timestamp granularity
            time.sleep(0.01)
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


# a cycle through a package's __init__ (tf-agents: `tf_agents/__init__.py` imports its
# subpackages, which import `tf_agents` back) and a name bound from itself
CYCLE_FILES = {
    "cyc/__init__.py": "from cyc.first import K\n",
    "cyc/first.py": """
        try:
            from cyc.second import K
        except ImportError:
            from tensorflow.keras import backend as K
        """,
    "cyc/second.py": """
        import cyc
        try:
            K = cyc.K
        except AttributeError:
            from keras import backend as K
        """,
    "scripts/trainer.py": "import tensorflow as tf\ntf = tf.compat.v2\nK = tf.keras.backend\n",
}


def test_an_edit_beside_an_import_cycle_resolves_only_what_it_reaches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project whose resolution meets a name cycle (or a name bound from itself) is
    resolved again only where an edit reaches, as any other: what a cycle resolves to no
    longer depends on the order names are asked for (``NameResolution._settled``). The
    facts are those of a fresh resolution, before and after an edit inside the cycle."""
    root = tmp_path / "repo"
    _write(root, {**FILES, **CYCLE_FILES})
    made = _counted_local(monkeypatch)
    first = _resolve(root, use_store=True)
    assert first == _reference(root)
    for name, change in [
        ("pkg/data.py", (".map(helper)", ".map(helper).batch(2)")),
        ("cyc/second.py", ("from keras import", "from tensorflow.keras import")),
    ]:
        _edit(root, name, change)
        made.clear()
        incremental = _resolve(root, use_store=True)
        redone = len(made)
        assert incremental == _reference(root), name
        assert 0 < redone <= 3 < len(incremental), (name, made)


def test_an_edit_keeping_the_call_graph_rewrites_only_its_own_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit that changes no call into the project resolves the edited file alone and
    stores the rows as they were (their bytes copied); one that changes the graph
    rewrites the rows of the files whose reach changed, not only its own."""
    from kmigrate.project import resolved_facts

    root = tmp_path / "repo"
    _write(root, FILES)
    _resolve(root, use_store=True)
    _, _, before = _stored_lines(root)
    slots = json.loads(before[0])["keys"]
    ops = slots.index(str(root / "pkg" / "ops.py"))
    layers = slots.index(str(root / "pkg" / "layers.py"))
    closed = []
    reached = resolved_facts.ResolvedFacts.reached
    graphs_read = []
    graph = stored_resolution.StoredResolution.graph

    def closing(self):
        closed.append(self)
        return reached(self)

    def reading(self, key):
        graphs_read.append(key)
        return graph(self, key)

    monkeypatch.setattr(resolved_facts.ResolvedFacts, "reached", closing)
    monkeypatch.setattr(stored_resolution.StoredResolution, "graph", reading)
    _edit(root, "pkg/ops.py", ("def unused(x):", "_edit = 1\n\n\ndef unused(x):"))
    assert _resolve(root, use_store=True) == _reference(root)
    assert not closed  # the stored closure serves
    assert graphs_read == [str(root / "pkg" / "ops.py")]  # only to compare the edited file's
    _, _, after = _stored_lines(root)
    assert after[1:] == before[1:]  # the edited file's row too: its digest is in the header
    old_head, new_head = json.loads(before[0]), json.loads(after[0])
    assert [i for i, f in enumerate(new_head["files"]) if f != old_head["files"][i]] == [ops]
    assert new_head["project"] != old_head["project"]
    _edit(root, "pkg/layers.py", ("ops.gelu(x)", "ops.scale_by(x, 2)"))
    assert _resolve(root, use_store=True) == _reference(root)
    _, _, graph = _stored_lines(root)
    changed = [i - 1 for i in range(1, len(graph)) if graph[i] != after[i]]
    assert layers in changed and ops in changed  # ops.py: scale_by and helper now model code
    assert closed


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files project_scan reads from now on (by relative path)."""
    read_bytes = project_files.read_bytes
    found: list[str] = []

    def reading(path):
        found.append(str(path))
        return read_bytes(path)

    for module in (project_files, index_entries):  # the files' bytes, an entry's file
        monkeypatch.setattr(module, "read_bytes", reading)
    return found


def test_a_file_whose_stat_is_the_stored_one_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    """An unchanged project is resolved without reading a file; after an edit, the
    edited file is read, and the others only if resolution needs their entries. A
    change that keeps the size and puts the old mtime back still changes the ctime."""
    import os

    root = tmp_path / "repo"
    _write(root, FILES)
    _resolve(root, use_store=True)
    reads = _reads(monkeypatch)
    facts = _resolve(root, use_store=True)
    assert reads == []
    assert facts == _reference(root)
    layers = root / "pkg" / "layers.py"
    _edit(root, "pkg/layers.py", ("ops.gelu(x)", "ops.gelu(x) + 1"))
    reads.clear()
    facts = _resolve(root, use_store=True)
    assert str(layers) in reads
    assert len(set(reads)) < len(FILES)
    assert facts == _reference(root)
    time.sleep(0.05)  # past the file system's timestamp granularity
    before = os.stat(layers)
    _edit(root, "pkg/layers.py", ("ops.gelu(x) + 1", "ops.gelu(x) - 1"))  # same size
    os.utime(layers, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(layers).st_size == before.st_size
    assert _resolve(root, use_store=True) == _reference(root)
    assert _resolve(root, use_store=False)[str(layers)] == _reference(root)[str(layers)]


def test_a_file_changed_just_before_the_run_is_read_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a pre-commit hook sees: files edited a moment ago, maybe again within the
    same second at the same size. Their stat is not kept (too recent to tell a later
    change apart), so they are read and hashed every run."""
    root = tmp_path / "repo"
    _write(root, FILES)
    layers = str(root / "pkg" / "layers.py")
    _resolve(root, use_store=True)
    _edit(root, "pkg/layers.py", ("ops.gelu(x)", "ops.gelu(x) + 1"))
    _resolve(root, use_store=True)
    _, _, lines = _stored_lines(root)
    header = json.loads(lines[0])
    assert header["files"][header["keys"].index(layers)][5] is None
    _edit(root, "pkg/layers.py", ("ops.gelu(x) + 1", "ops.gelu(x) - 1"))  # same size
    reads = _reads(monkeypatch)
    facts = _resolve(root, use_store=True)
    assert layers in reads
    assert facts == _reference(root)


def test_stale_rows_would_be_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison with a fresh resolution sees a stored row used where it no longer
    holds: taking the stored graph as kept whenever no file came or went gives other
    facts after some edit."""
    from kmigrate.project import resolved_facts

    def same_files(self) -> bool:  # the check without comparing the edited files' graphs
        return self.stored is not None and self.slots == self.stored.slots

    monkeypatch.setattr(resolved_facts.ResolvedFacts, "_same_graph", same_files)
    root = tmp_path / "repo"
    _write(root, FILES)
    _resolve(root, use_store=True)
    differ = []
    for description, name, change in EDITS:
        _edit(root, name, change)
        if _resolve(root, use_store=True) != _reference(root):
            differ.append(description)
    assert "a call added to a layer method" in differ


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


def test_the_import_edits_change_who_imports_the_backend(tmp_path: Path) -> None:
    """... and the edits of `K`'s importers move ``imported_by``."""
    root = tmp_path / "repo"
    _write(root, FILES)
    backend = str(root / "pkg" / "backend.py")
    seen = []
    for _, name, change in EDITS:
        _edit(root, name, change)
        seen.append(_resolve(root, use_store=False)[backend].imported_by)
    assert seen[-6:-2] == [
        (("K", "pkg/data.py, train.py"),),
        (("K", "pkg/data.py, pkg/layers.py, train.py"),),  # and a star import
        (("K", "pkg/data.py, pkg/layers.py"),),
        (("K", "pkg/data.py, pkg/layers.py"),),  # the module imported, `K` read from it
    ]
    assert not any(seen[:-6])  # `K = tf.keras.backend` is not an import


def _damaged_rows(line: bytes) -> list[tuple[str, bytes]]:
    """(the part damaged, the row) as a bug (or another build) could have written them:
    each is a miss when that part is read."""
    own_text, _, rest_text = line.partition(b"\t")
    own, rest = json.loads(own_text), json.loads(rest_text)

    def row(first: list, second: list) -> bytes:
        return json.dumps(first).encode() + b"\t" + json.dumps(second).encode()

    local, graph = own[0], rest[2]
    found = [("own", b"["), ("own", own_text), ("own", line + b"\t[]")]  # not two parts
    for bad in (
        [0, *own[1:]],
        own + [None],
        [local[:1] + [[["K"]]] + local[2:], *own[1:]],  # a pair of one
        [*own[:4], {"f": "999999:f"}],  # a data seed's slot out of range
        [*own[:4], []],  # data seeds as a list
    ):
        found.append(("own", row(bad, rest)))
    for bad_edges in (
        {**graph[0], "f": ["x"]},  # a node without a slot
        {**graph[0], "f": ["999999:f"]},  # a slot out of range
        {"f": 3},
        [["f", []]],  # edges as a list
    ):
        found.append(("rest", row(own, [*rest[:2], [bad_edges, *graph[1:]], *rest[3:]])))
    found.append(("rest", row(own, [0, *rest[1:]])))
    found.append(("rest", row(own, [rest[0], [10**6], *rest[2:]])))
    return found


def _stored_lines(root: Path) -> tuple:
    """(store, root key, the stored resolution's lines: header, then a row per slot)."""
    store = index_entries.index_store(root)
    assert store is not None
    (stored,) = store.folder.glob("resolved.*")
    root_key = stored.name.partition(".")[2]
    body = store.load_bytes("resolved", root_key)
    assert body is not None
    return store, root_key, body.split(b"\n")


def test_a_damaged_row_is_a_miss_not_a_crash(tmp_path: Path) -> None:
    """Rows are checked when first read, not when the file is loaded: a row that does
    not fit, read then, makes a full resolution, which stores a sound file again. A
    row's first part (its own facts, what the graph reached in it) is read by every run
    (an unchanged project's facts, or resolving again after an edit); its second (shape,
    uses, its part of the call graph...) when resolving again needs it: here, an edit
    that changes the call graph, closed again over every row."""
    root = tmp_path / "repo"
    _write(root, FILES)
    assert _resolve(root, use_store=True)
    store, root_key, lines = _stored_lines(root)
    own_edits = (None, ("pkg/layers.py", ("ops.gelu(x)", "ops.gelu(x) + 1")))
    graph_edits = [("ops.gelu(x)", "ops.scale_by(x, 2)"), ("ops.scale_by(x, 2)", "ops.gelu(x)")]
    # the first slot (pkg/__init__.py) is read by every run below
    for part, damaged in _damaged_rows(lines[1]):
        edits = own_edits if part == "own" else [("pkg/layers.py", e) for e in graph_edits]
        for edit in edits:
            store.store_bytes("resolved", root_key, b"\n".join([lines[0], damaged, *lines[2:]]))
            assert stored_resolution.load_resolution(store, root_key) is not None  # loaded lazily
            if edit is not None:
                _edit(root, *edit)
            assert _resolve(root, use_store=True) == _reference(root), (damaged, edit)
            _, _, now = _stored_lines(root)
            assert now[1] != damaged  # replaced by a full resolution
            lines = now


def test_a_damaged_or_foreign_file_is_a_miss(tmp_path: Path) -> None:
    """What is checked when the file is loaded: its MAC (a truncated, edited or foreign
    file) and its header; each is a miss, and the run's facts are those from scratch."""
    root = tmp_path / "repo"
    _write(root, FILES)
    assert _resolve(root, use_store=True)
    store, root_key, lines = _stored_lines(root)
    header = json.loads(lines[0])
    (path,) = store.folder.glob("resolved.*")
    signed = path.read_bytes()
    unsigned = [signed[:-10], signed.replace(b'"reusable":true', b'"reusable":null'), b"{}"]
    headers = [
        {**header, "files": header["files"][1:]},  # fewer files than rows
        {**header, "files": [[1, *header["files"][0][1:]], *header["files"][1:]]},
        {**header, "keys": None},
        {**header, "build": "another build"},
        {k: v for k, v in header.items() if k != "patched"},
    ]
    bodies = [b"\n".join([json.dumps(h).encode(), *lines[1:]]) for h in headers]
    bodies += [b"\n".join(lines[:-1]), b"[]", b"{" + lines[0]]  # a row short, not a header
    for damage in [*unsigned, *bodies]:
        if isinstance(damage, bytes) and damage in unsigned:
            path.write_bytes(damage)
        else:
            store.store_bytes("resolved", root_key, damage)
        assert stored_resolution.load_resolution(store, root_key) is None, damage
        assert _resolve(root, use_store=True) == _reference(root)
    assert stored_resolution.load_resolution(store, root_key) is not None


def test_a_cold_run_stores_its_entries_in_one_pack(tmp_path: Path) -> None:
    """Many new entries go into the pack alone (one write, not one file each); after an
    edit, the entries resolution needs are read from it, and stored one by one."""
    root = tmp_path / "repo"
    helpers = {f"pkg/helper_{i}.py": f"def helper_{i}(x):\n    return x\n" for i in range(20)}
    _write(root, {**FILES, **helpers})
    assert _resolve(root, use_store=True) == _reference(root)
    store = index_entries.index_store(root)
    assert store is not None
    assert not list(store.folder.glob("index.*"))
    assert list(store.folder.glob("pack.*"))
    _edit(root, "pkg/layers.py", ("ops.gelu(x)", "ops.scale_by(x, 2)"))
    assert _resolve(root, use_store=True) == _reference(root)
    assert list(store.folder.glob("index.*"))  # the changed file's, and those read from the pack


# (file, edit): what a pre-commit hook sees between two commits
HOOK_EDITS = [
    ("pipe/ops.py", ("def augment(x):", "_edit = 1\n\n\ndef augment(x):")),  # graph kept
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


@pytest.mark.parametrize("stamped", [False, True])  # files read every run, or by stat
@pytest.mark.parametrize("parse_twice_up_to", [0, 8])  # the edited file analysed first, or not
@pytest.mark.parametrize(
    ("repo", "edits"), [("shared_helper", HOOK_EDITS), ("three_level", THREE_LEVEL_EDITS)]
)
def test_the_hook_reports_after_each_edit_what_a_run_without_cache_reports(
    tmp_path: Path, repo: str, edits: list, parse_twice_up_to: int, stamped: bool, monkeypatch
) -> None:
    """End to end, as ``kmigrate check FILE`` runs after each commit: the edited file is
    analysed first on its own and the project resolved again from the stored resolution;
    every file checked then (the edited one and the others) has the findings of a run
    that stores and reuses nothing. ``stamped``: the files left unread whose stat is the
    stored one (as if every change were long past)."""
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids
    from tests.repo_fixtures import copy_repo, finding_lines

    monkeypatch.setattr(index_pass, "_PARSE_TWICE_UP_TO", parse_twice_up_to)
    if stamped:
        monkeypatch.setattr(project_files, "SETTLED_NS", -(10**12))
        reads = _reads(monkeypatch)
    root = copy_repo(repo, tmp_path)
    config = Config(root=root.resolve())
    ids = select_ids((), ())

    def check(path: Path, cached: bool) -> list[str]:
        jobs = plan_jobs([path], config, index_cache=cached)
        return finding_lines(run_jobs(jobs, ids))

    for name, change in [(None, None), *edits]:
        if name is not None:
            time.sleep(0.01)  # an edit past the file system's timestamp granularity
            _edit(root, name, change)
        edited = [root / name] if name and (root / name).exists() else []
        others = sorted(p for p in root.rglob("*.py") if p not in edited)
        for path in [*edited, *others]:  # the edited file first: its run resolves again
            assert check(path, True) == check(path, False), (name, change, path)
    if stamped:
        reads.clear()
        check(others[0], True)
        assert len(set(reads)) < len(others)  # files whose stat is the stored one: unread


# -- local facts made by the first analyses of a cold scan ---------------------------


def _records(root: Path, names: list[str]) -> list:
    files = project_files.read_files([root / name for name in names])
    return sorted(index_entries.index_records(files, root, None), key=lambda r: r.key)


def test_local_facts_made_by_a_smaller_index_are_taken_only_where_it_agrees(
    tmp_path: Path,
) -> None:
    """pkg/layers.py's facts made by an index without pkg/ops.py (its `ops.gelu` then
    resolves to nothing) are refused by the project's; made by one with every module
    its names lead to, they are taken by an index with more modules. A TF function some
    module replaces changes the facts of the modules that call it: those made by an
    index without the patching module are refused, the others' still taken."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    root = tmp_path / "repo"
    _write(root, FILES)
    everything = [str(p.relative_to(root)) for p in sorted(root.rglob("*.py"))]
    project = ProjectIndex(_records(root, everything), CONTEXT_SPEC)
    layers = next(r for r in project.records if r.key.endswith("layers.py"))
    expected = ProjectIndex(project.records, CONTEXT_SPEC).local(layers)

    def made_by(names: list[str], key: str = layers.key):
        index = ProjectIndex(_records(root, names), CONTEXT_SPEC)
        record = next(r for r in index.records if r.key == key)
        return index.local_with_reads(record)[1]

    without_ops = made_by(["pkg/layers.py", "pkg/base.py", "pkg/__init__.py"])
    assert without_ops.local != expected and not project.agrees(without_ops)
    enough = made_by(["pkg/layers.py", "pkg/base.py", "pkg/__init__.py", "pkg/ops.py"])
    assert enough.local == expected and project.agrees(enough)
    _write(
        root,
        {
            "pkg/act.py": "from tensorflow.keras import backend as K\n\n\n"
            "def act(x):\n    return K.gelu(x)\n",
            "pkg/patches.py": "from tensorflow.keras import backend as K\n\n\n"
            "def gelu(x):\n    return x\n\n\nK.gelu = gelu\n",
        },
    )
    everything = [str(p.relative_to(root)) for p in sorted(root.rglob("*.py"))]
    patched = ProjectIndex(_records(root, everything), CONTEXT_SPEC)
    act = next(r for r in patched.records if r.key.endswith("act.py"))
    alone = made_by(["pkg/act.py"], act.key)
    assert alone.local != patched.local(act)  # its K.gelu now runs the project's gelu
    assert not patched.agrees(alone)
    assert patched.agrees(made_by(["pkg/act.py", "pkg/patches.py"], act.key))
    assert patched.agrees(enough)  # pkg/layers.py calls no function the project replaces
    assert enough.local == patched.local(next(r for r in patched.records if r.key == layers.key))


def test_a_cold_scan_takes_local_facts_from_its_first_analyses_where_they_are_the_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After each edit of the project, a cold scan (every file analysed before the
    project is resolved) resolves it with the local facts the first analyses made
    where the project's index agrees with theirs: each resolution also makes them all
    afresh here, and they must be the same."""
    from kmigrate.project import resolution_cache
    from tests.repo_fixtures import run_repo

    monkeypatch.setattr(index_pass, "_PARSE_TWICE_UP_TO", 0)  # every file deferred
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


def test_a_body_edit_beside_a_patch_reuses_the_stored_patches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which TF/Keras functions the project replaces is stored with the resolution: an
    edit that re-resolves no patching module takes it from there instead of reading
    every patching module's entry (tf-keras: 39 of them, 65 ms of a `check`), and the
    facts are still those of a fresh resolution."""
    root = tmp_path / "repo"
    _write(root, FILES)
    _edit(root, "pkg/backend.py", EDITS[-2][2])  # K.reshape = reshape
    _resolve(root, use_store=True)
    computed: list[bool] = []
    patched = ProjectIndex.patched

    def watched(self):
        computed.append(self.known_patches() is None)
        return patched(self)

    monkeypatch.setattr(ProjectIndex, "patched", watched)
    _edit(root, "pkg/ops.py", ("return tf.abs(x)\n", "return tf.abs(x) + 0\n"))
    incremental = _resolve(root, use_store=True)
    assert computed and not any(computed)  # asked, and answered from the store
    computed.clear()
    assert incremental == _resolve(root, use_store=False) == _reference(root)
    assert any(computed)  # a fresh resolution works it out
    assert ("K.reshape", "pkg/backend.py") in incremental[str(root / "pkg" / "ops.py")].patched


REACH_FILES = {
    **FILES,
    "pkg/data.py": """
        import tensorflow as tf
        from pkg.ops import helper

        def prepare(x):
            return helper(x)

        def pipeline(files):
            return tf.data.Dataset.from_tensor_slices(files).map(prepare)
        """,
    "pkg/helpers.py": """
        import tensorflow as tf

        class Normalizer:
            def apply(self, x):
                return tf.math.l2_normalize(x)
        """,
    "pkg/block.py": """
        from pkg.base import BaseLayer
        from pkg.helpers import Normalizer
        from pkg.ops import helper

        class Block(BaseLayer):
            def __init__(self):
                super().__init__()
                self.normalizer = Normalizer()

            def call(self, x):
                return helper(self.normalizer.apply(x))
        """,
}


def test_stored_methods_and_data_seeds_are_those_of_a_fresh_resolution(tmp_path: Path) -> None:
    """What the closed call graph reached in a module beyond its functions, read from
    its row when the graph is not closed again (an unchanged project, an edit that
    changes no call): a held helper's method reached from model code, and a function
    reached from both model code and a data pipeline with the pipeline it came from."""
    root = tmp_path / "repo"
    _write(root, REACH_FILES)
    reference = _reference(root)
    helpers, ops = str(root / "pkg" / "helpers.py"), str(root / "pkg" / "ops.py")
    assert reference[helpers].model_methods == ("Normalizer.apply",)
    assert reference[ops].data_callers == (("helper", "`prepare` in pkg/data.py"),)
    assert _resolve(root, use_store=True) == reference  # stored
    assert _resolve(root, use_store=True) == reference  # unchanged: the rows serve
    _edit(root, "pkg/helpers.py", ("return tf", "y = x\n        return tf"))
    assert _resolve(root, use_store=True) == _reference(root)  # the stored closure serves
