"""The project index: entries, resolution across modules, its cache, and what scan and
apply make of the fixture repositories (tests/fixtures/repos/, written for these tests)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.engine.module_facts import ModuleFacts
from kmigrate.engine.module_names import module_names
from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_entry import build_entry, load_entry, store_entry, valid_entry
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.rules.context_spec import CONTEXT_SPEC
from tests.repo_fixtures import (
    REPO_NAMES,
    REPOS,
    SOURCE_TREES,
    apply_diff,
    apply_repo,
    copy_repo,
    finding_lines,
    run_repo,
)

EXPECTED = REPOS.parent / "repos_expected"


def _project(modules: dict[str, str], packages: dict[str, str] | None = None) -> ProjectIndex:
    records = []
    for name, source in modules.items():
        tree = ast.parse(textwrap.dedent(source))
        package = (packages or {}).get(name, name.rpartition(".")[0])
        records.append(
            ModuleRecord(name, build_entry(tree, CONTEXT_SPEC), package, "", (name,), name)
        )
    return ProjectIndex(records, CONTEXT_SPEC)


def _facts(project: ProjectIndex, name: str):
    return project.facts(next(r for r in project.records if r.key == name))


# -- resolution -----------------------------------------------------------------


def test_a_base_layer_three_modules_away_makes_a_layer() -> None:
    project = _project(
        {
            "pkg.core": "from tensorflow import keras\nclass Base(keras.layers.Layer): pass\n",
            "pkg.mid": "from pkg.core import Base\nclass Mid(Base): pass\n",
            "pkg.sub.leaf": "from ..mid import Mid\nclass Leaf(Mid): pass\nclass Plain: pass\n",
        }
    )
    assert _facts(project, "pkg.sub.leaf").model_classes == ("Leaf",)


def test_an_import_cycle_resolves_what_it_can_and_ends() -> None:
    project = _project(
        {
            "a": "from b import X\nfrom b import Loop as Y\nclass L(X): pass\n",
            "b": "from a import Y as Loop\nfrom a import L as X\n",
        }
    )
    facts = _facts(project, "a")
    assert facts.model_classes == ()  # a class cycle is nothing, and it terminates
    assert project.resolve(project.records[0], "Y") == ("unknown",)


def test_what_a_cycle_resolves_to_does_not_depend_on_which_module_is_asked_first() -> None:
    """Two modules that each take ``K`` from the other, else from their own backend: the
    walk that enters the cycle at ``a`` sees ``b``'s fallback, the one entering at ``b``
    sees ``a``'s. Each module's local facts are the same whichever module the index
    resolves first (the stored resolution re-resolves only what an edit reaches, so a
    project with a cycle could not reuse it when they were not)."""
    modules = {
        "a": """
        try:
            from b import K
        except ImportError:
            from tensorflow.keras import backend as K
        """,
        "b": """
        try:
            from a import K
        except ImportError:
            from keras import backend as K
        """,
    }
    made = []
    for order in (["a", "b"], ["b", "a"]):
        project = _project(modules)
        by_key = {r.key: r for r in project.records}
        made.append({key: project.local(by_key[key]) for key in order})
        assert not project.order_sensitive
    assert made[0] == made[1]
    assert made[0]["a"].bindings == (("K", "keras.backend"),)  # a's own fallback comes second
    assert made[0]["b"].bindings == (("K", "tensorflow.keras.backend"),)


def test_star_imports_that_import_each_other_are_walked_once_per_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Eight modules each taking ``*`` from the seven others (Keras 2's backend modules,
    a monorepo's packages): an answer met in a cycle is not kept for other askers, but
    it is kept for the rest of the question that worked it out, or the walk visits
    every order of the modules (8! lookups for one name; a 10k-file scan spent minutes
    per file)."""
    modules = {
        f"m{i}": "".join(f"from m{j} import *\n" for j in range(8) if j != i) for i in range(8)
    }
    project = _project(modules)
    lookups = []
    lookup = ProjectIndex._lookup

    def counted(self, record, dotted, depth):
        lookups.append(dotted)
        return lookup(self, record, dotted, depth)

    monkeypatch.setattr(ProjectIndex, "_lookup", counted)
    assert project.resolve(project.records[0], "Missing") == ("unknown",)
    assert len(lookups) <= 8


def test_a_name_bound_from_itself_reads_its_other_bindings() -> None:
    """``tf = tf.compat.v2`` (tf-agents' scripts): the right side is the imported ``tf``,
    not this binding again (which grew ``tf.compat.v2.compat.v2...`` to the depth bound,
    and a project that met the bound was resolved in full after every edit)."""
    project = _project({"m": "import tensorflow as tf\ntf = tf.compat.v2\nK = tf.keras.backend\n"})
    record = project.records[0]
    assert project.resolve(record, "tf.nest.map_structure")[0] == "external"
    bindings = (("K", "tensorflow.keras.backend"), ("tf", "tensorflow"))
    assert project.local(record).bindings == bindings
    assert not project.order_sensitive


def test_a_package_importing_from_its_missing_submodule_is_left_unresolved() -> None:
    """``from pkg.rnn import rnn, gru`` in pkg/__init__.py when pkg/rnn.py is not in the
    tree (a partial checkout, a compiled module): Python imports the submodule, it never
    reads the package's own names. Read through them, the walk came back to this import
    with a longer name each time (``rnn.rnn.rnn...``) to the depth bound, and a project
    that met the bound was resolved in full after every edit."""
    project = _project(
        {
            "pkg": "from pkg.rnn import gru\nfrom pkg.rnn import rnn\n",
            "pkg.layers": "from pkg import rnn, gru\n\n\ndef f(x):\n    return rnn(gru(x))\n",
        },
        {"pkg": "pkg"},
    )
    by_key = {r.key: r for r in project.records}
    assert project.resolve(by_key["pkg"], "rnn") == ("unknown",)
    assert project.resolve(by_key["pkg.layers"], "gru") == ("unknown",)
    project.local(by_key["pkg.layers"])
    assert not project.order_sensitive
    # a submodule that is in the tree is what the import names, as before
    with_rnn = _project(
        {
            "pkg": "from pkg.rnn import rnn\n",
            "pkg.rnn": "def rnn(x):\n    return x\n",
        },
        {"pkg": "pkg"},
    )
    target = with_rnn.resolve(next(r for r in with_rnn.records if r.key == "pkg"), "rnn")
    assert target[0] == "function" and target[1].key == "pkg.rnn" and target[2] == "rnn"


def test_a_chain_of_aliases_longer_than_the_bound_is_left_unresolved() -> None:
    modules = {f"m{i}": f"from m{i + 1} import X\n" for i in range(40)}
    modules["m40"] = "import tensorflow as tf\nX = tf.keras.layers.Layer\n"
    modules["user"] = "from m0 import X\nclass L(X): pass\n"
    assert _facts(_project(modules), "user").model_classes == ()
    modules = {k: v for k, v in modules.items() if k in ("m38", "m39", "m40")}
    modules["user"] = "from m38 import X\nclass L(X): pass\n"
    assert _facts(_project(modules), "user").model_classes == ("L",)


def test_try_except_fallbacks_and_assignments_in_one_file() -> None:
    project = _project(
        {
            "m": """
            import keras
            try:
                Wrapper = keras.layers.Wrapper
            except AttributeError:
                Wrapper = keras.layers.wrappers.Wrapper
            Base = keras.engine.base_layer.Layer
            class A(Wrapper): pass
            class B(Base): pass
            class C(object): pass
            """
        }
    )
    assert _facts(project, "m").model_classes == ("A", "B")


def test_re_exported_backend_through_star_import_and_all() -> None:
    project = _project(
        {
            "lib": "from lib.backend import *\n",
            "lib.backend": (
                "import tensorflow.keras.backend as K\n__all__ = ['K']\n_hidden = K\nZ = K\n"
            ),
            "lib.user": "from lib import K, Z\n",
        },
        {"lib": "lib"},
    )
    facts = _facts(project, "lib.user")
    assert facts.bindings == (("K", "tensorflow.keras.backend"),)  # Z is not in __all__


def test_conditional_backends_that_agree_bind_and_that_disagree_are_ambiguous() -> None:
    agree = _project(
        {
            "b": """
            import os
            if os.environ.get("TF_KERAS"):
                import tensorflow.keras.backend as K
            else:
                import keras.backend as K
            """,
            "u": "from b import K\n",
        }
    )
    assert dict(_facts(agree, "u").bindings)["K"] == "tensorflow.keras.backend"
    differ = _project(
        {
            "b": (
                "try:\n    import keras.backend as K\n"
                "except ImportError:\n    import shim\n    K = shim.Numpy\n"
            ),
            "shim": "class Numpy: pass\n",
            "u": "from b import K\n",
        }
    )
    assert _facts(differ, "u").bindings == ()
    assert differ.resolve(differ.records[2], "K")[0] == "ambiguous"


def test_helpers_reached_from_model_code_and_from_a_map_in_other_modules() -> None:
    project = _project(
        {
            "p.ops": "def act(x): pass\ndef norm(x): pass\ndef flip(x): pass\ndef idle(x): pass\n",
            "p.layers": (
                "import tensorflow as tf\nfrom . import ops\nfrom .ops import norm\n"
                "class L(tf.keras.layers.Layer):\n"
                "    def call(self, x):\n        return self.inner(x)\n"
                "    def inner(self, x):\n        return ops.act(norm(x))\n"
            ),
            "p.data": (
                "from p.ops import flip, norm\ndef make(ds):\n    return ds.map(norm).map(flip)\n"
            ),
        },
        {"p.ops": "p", "p.layers": "p", "p.data": "p"},
    )
    facts = _facts(project, "p.ops")
    assert facts.model_functions == ("act", "norm")
    assert facts.data_functions == ("flip",)
    assert facts.mixed_functions == ("norm",)


def test_module_names_cover_src_layouts_namespace_packages_and_scripts(tmp_path: Path) -> None:
    path = tmp_path / "src" / "pkg" / "layers" / "base.py"
    assert module_names(path, tmp_path, "pkg.layers") == (
        "pkg.layers.base",
        "src.pkg.layers.base",
    )
    assert module_names(tmp_path / "ns" / "mod.py", tmp_path, "") == ("mod", "ns.mod")
    assert module_names(tmp_path / "train.py", tmp_path, "") == ("train",)


# -- the per-file cache -----------------------------------------------------------


def test_entries_are_signed_plain_json_and_anything_else_is_a_miss(tmp_path: Path) -> None:
    from kmigrate.store.cache import ResultCache

    data = b"import tensorflow as tf\nclass L(tf.keras.layers.Layer): pass\n"
    entry = build_entry(ast.parse(data), CONTEXT_SPEC)
    store = ResultCache(tmp_path, secret=b"this machine".ljust(32, b"."))
    assert load_entry(store, data, CONTEXT_SPEC) is None
    store_entry(store, data, entry)
    assert load_entry(store, data, CONTEXT_SPEC) == entry
    (stored,) = tmp_path.iterdir()
    header, _, body = stored.read_bytes().partition(b"\n")
    assert json.loads(body) == entry  # plain JSON after the signature line
    signed = stored.read_bytes()
    # unsigned, damaged, a pickle, or signed by another machine (a planted entry): misses
    for damage in (b"", body, b"{", b"\x80\x04\x95", header + b"\n" + body.replace(b"L", b"M")):
        stored.write_bytes(damage)
        assert load_entry(store, data, CONTEXT_SPEC) is None
    other = ResultCache(tmp_path, secret=b"attacker".ljust(32, b"."))
    store_entry(other, data, {**entry, "classes": {}})
    assert load_entry(store, data, CONTEXT_SPEC) is None
    stored.write_bytes(signed)
    assert load_entry(store, data, CONTEXT_SPEC) == entry
    # signed, but not the shape of an entry: still a miss
    store.store_value("index", stored.name.partition(".")[2], {**entry, "format": 0})
    assert load_entry(store, data, CONTEXT_SPEC) is None
    assert not valid_entry({**entry, "format": 0}, CONTEXT_SPEC)


def test_cached_entries_give_the_same_findings(tmp_path: Path) -> None:
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    root = copy_repo("backend_reexport", tmp_path)
    config = Config(root=root)
    ids = select_ids((), ())
    first = run_jobs(plan_jobs([root], config), ids)
    index = root / ".kmigrate_cache" / ".index"
    assert list(index.rglob("index.*"))
    second = run_jobs(plan_jobs([root], config), ids)
    assert finding_lines(first) == finding_lines(second) == finding_lines(run_repo(root))
    (facts,) = index.rglob("resolved.*")  # the project's last resolution
    for damage in (b"{", b'{"x": {"model_classes": [1]}}', b"[]", facts.read_bytes()[:-3]):
        facts.write_bytes(damage)  # a damaged project file is a miss, and is replaced
        assert finding_lines(run_jobs(plan_jobs([root], config), ids)) == finding_lines(first)
    (pack,) = index.rglob("pack.lines")  # all entries in one file, one line each
    header, _, body = pack.read_bytes().partition(b"\n")
    digests = [line.partition(b"\t")[0] for line in body.splitlines()]
    assert len(digests) == len(list(root.rglob("*.py")))
    pack.write_bytes(header + b"\n" + b"".join(d + b'\t{"format":3}\n' for d in digests))
    facts.write_bytes(b"{")  # resolve again, from the damaged pack: a miss per entry
    assert finding_lines(run_jobs(plan_jobs([root], config), ids)) == finding_lines(first)
    (norm := root / "nets" / "norm.py").write_text(norm.read_text().replace("K.sqrt", "K.abs"))
    changed = finding_lines(run_jobs(plan_jobs([root], config), ids))
    assert changed == finding_lines(run_repo(root))
    assert len(list(facts.parent.glob("resolved.*"))) == 1  # the old one is replaced


# -- the fixture repositories -------------------------------------------------------


@pytest.mark.parametrize("name", REPO_NAMES)
def test_fixture_repo_findings_and_contexts(name: str, tmp_path: Path) -> None:
    root = copy_repo(name, tmp_path)
    expected = (EXPECTED / f"{name}.scan").read_text().splitlines()
    assert finding_lines(run_repo(root)) == expected


@pytest.mark.parametrize("name", REPO_NAMES)
def test_fixture_repo_apply_output(name: str, tmp_path: Path) -> None:
    root = copy_repo(name, tmp_path)
    apply_repo(root)
    assert apply_diff(REPOS / name, root) == (EXPECTED / f"{name}.diff").read_text()
    assert apply_repo(root) == 0  # a second apply changes nothing


def _scan_and_apply_counts(root: Path) -> tuple[int, int]:
    scanned = sum(f.fixable for f in run_repo(root).findings)
    return scanned, apply_repo(root)


@pytest.mark.parametrize(
    "source",
    SOURCE_TREES,
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_scan_fixable_count_is_what_apply_fixes(source: Path, tmp_path: Path) -> None:
    root = copy_repo(source, tmp_path)
    scanned, fixed = _scan_and_apply_counts(root)
    assert scanned == fixed
    # and apply converges: nothing it offered is still offered afterwards
    left = [f"{f.path}:{f.span.line} {f.rule}" for f in run_repo(root).findings if f.fixable]
    assert left == []


@pytest.mark.parametrize(
    "code",
    [
        # the import waits for the whole chain, which KM101 rewrites in round one
        "from tensorflow.keras import layers\n\n"
        "def build():\n"
        "    return [layers.experimental.preprocessing.Rescaling(1 / 255), layers.Dense(2)]\n",
        # `.get_shape().as_list()` is one rewrite, not one per round
        "import tensorflow as tf\n\n"
        "class Pool(tf.keras.layers.Layer):\n"
        "    def call(self, x):\n"
        "        return x / x.get_shape().as_list()[-1]\n",
        # Keras 2's `keras.backend.common` is `keras.backend`: its functions are the
        # catalog's `K.*` before KM103 moves the import (keras-contrib's theano backend)
        "from keras.backend.common import image_data_format\n"
        "from keras.engine import Layer\n\n"
        "class Norm(Layer):\n"
        "    def call(self, x):\n"
        "        return x if image_data_format() == 'channels_first' else -x\n",
    ],
    ids=["blocked-import", "get-shape-as-list", "keras2-backend-common"],
)
def test_scan_counts_what_later_rounds_of_apply_fix(code: str, tmp_path: Path) -> None:
    """Shapes found in real repositories where scan said one fix fewer than apply made."""
    (tmp_path / "module.py").write_text(code)
    scanned, fixed = _scan_and_apply_counts(tmp_path)
    assert scanned == fixed > 0


def test_layers_whose_file_names_no_tensorflow_are_analysed(tmp_path: Path) -> None:
    root = copy_repo("backend_reexport", tmp_path)
    norm = (root / "nets" / "norm.py").read_bytes()
    assert b"tensorflow" not in norm and b"keras" not in norm
    alone = [line for line in finding_lines(run_repo(root, index=False)) if "norm.py" in line]
    assert alone == []  # without the index the file is skipped as not TensorFlow code
    lines = [line for line in finding_lines(run_repo(root)) if "norm.py:6" in line]
    assert lines == ["nets/norm.py:6 KM201 model fixable"] * 3


def test_without_the_index_base_layers_elsewhere_are_missed(tmp_path: Path) -> None:
    root = copy_repo("three_level", tmp_path)
    alone = finding_lines(run_repo(root, index=False))
    assert "zoo/leaf.py:8 KM201 other manual" in alone
    assert "zoo/leaf.py:8 KM201 model fixable" in finding_lines(run_repo(root))


def test_a_helper_shared_with_a_data_pipeline_is_reported_not_rewritten(tmp_path: Path) -> None:
    root = copy_repo("shared_helper", tmp_path)
    findings = [f for f in run_repo(root).findings if f.scope_name == "standardize"]
    assert findings and all(not f.fixable for f in findings)
    # `standardize` is passed to `.map` itself
    assert all("called from model code and is data code itself" in f.message for f in findings)


def _shared_norm(root: Path, ops: str, data_functions: str) -> Path:
    """``ops.py`` (``ops``: its text, defining ``norm``), called from a layer's ``call``
    in layers.py and from data.py (``data_functions``: the code after its imports)."""
    (root / "ops.py").write_text(ops)
    (root / "layers.py").write_text(
        "from tensorflow import keras\n\nfrom ops import norm\n\n\n"
        "class Norm(keras.layers.Layer):\n    def call(self, x):\n        return norm(x)\n"
    )
    (root / "data.py").write_text(
        "import tensorflow as tf\n\nfrom ops import norm\n\n\n" + data_functions
    )
    return root


def test_a_shared_helper_names_the_data_code_it_is_reached_from(tmp_path: Path) -> None:
    """Which caller made a helper data code is what a person needs to judge the report
    (keras-yolo3: `yolo_head` is reached from `yolo_eval`, which calls tf.image)."""
    _shared_norm(
        tmp_path,
        "import tensorflow as tf\n\n\ndef norm(x):\n    return tf.reduce_mean(x)\n",
        "def prepare(x):\n    return norm(x) * 2\n\n\n"
        "def dataset(values):\n"
        "    return tf.data.Dataset.from_tensor_slices(values).map(prepare)\n",
    )
    (finding,) = [f for f in run_repo(tmp_path).findings if f.scope_name == "norm"]
    assert not finding.fixable
    assert "`norm` is called from model code and from data code, `prepare` in data.py" in (
        finding.message
    )


def test_an_ambiguous_base_is_said_in_the_finding(tmp_path: Path) -> None:
    root = copy_repo("same_name", tmp_path)
    (finding,) = [f for f in run_repo(root).findings if f.path == "train.py"]
    # a layer or a plain class, its code is model code: the project uses Keras (#30)
    assert finding.context.value == "model"
    assert "base class `Head` is ambiguous: `helpers` is defined twice" in finding.message
    assert "one/helpers.py, two/helpers.py" in finding.message


def test_a_cold_scan_parses_scanned_files_once_and_filtering_keeps_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kmigrate.project import index_pass
    from kmigrate.project.config import Config
    from kmigrate.run.runner import filter_jobs, plan_jobs, run_jobs, select_ids

    # a scan of more files than this defers their entries to their analysis
    monkeypatch.setattr(index_pass, "_PARSE_TWICE_UP_TO", 3)
    root = copy_repo("three_level", tmp_path)
    jobs = plan_jobs([root], Config(root=root), index_cache=False)
    deferred = {Path(j.path).name for j in jobs if j.deferred}
    assert deferred == {"core.py", "mid.py", "leaf.py", "run_model.py"}  # __init__.py: no TF
    kept = filter_jobs(jobs, lambda j: j.display != "zoo/core.py")
    lines = finding_lines(run_jobs(kept, select_ids((), ())))
    assert "zoo/leaf.py:8 KM201 model fixable" in lines
    assert not any(line.startswith("zoo/core.py") for line in lines)
    monkeypatch.setattr(index_pass, "_PARSE_TWICE_UP_TO", 8)  # a few files: not deferred
    assert not any(j.deferred for j in plan_jobs([root], Config(root=root), index_cache=False))


def test_a_model_saved_in_one_file_and_loaded_in_another_is_not_renamed_alone(
    tmp_path: Path,
) -> None:
    root = copy_repo("save_serve", tmp_path)
    (save,) = [f for f in run_repo(root).findings if f.rule == "KM401" and f.span.line == 7]
    assert not save.fixable
    assert "serve.py also uses this file name" in save.message
    apply_repo(root)
    assert 'load_model("classifier.h5")' in (root / "serve.py").read_text()
    assert 'model.save("classifier.h5")' in (root / "train.py").read_text()
    assert 'model.save("scratch.keras")' in (root / "train.py").read_text()  # paired in-file


def _count_analyses(monkeypatch) -> list[str]:
    from kmigrate.engine import analyze  # the runner imports it where a file is analysed

    analysed: list[str] = []
    original = analyze.analyze_module_text

    def counting(path, *args, **kwargs):
        analysed.append(path)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(analyze, "analyze_module_text", counting)
    return analysed


def _with_padding(root: Path) -> Path:
    """Enough more TensorFlow files that a scan analyses files before resolving the
    project (a few files, as the pre-commit hook checks, are indexed first instead)."""
    for i in range(10):
        (root / f"pad_{i}.py").write_text("import tensorflow as tf\n\nX = tf.constant(1)\n")
    return root


def test_a_save_paired_with_a_load_elsewhere_is_right_the_first_time(
    tmp_path: Path, monkeypatch
) -> None:
    """The file names two modules share are guessed from the project's bytes before the
    first analysis: no file is analysed twice, and the save is still not renamed alone."""
    analysed = _count_analyses(monkeypatch)
    root = _with_padding(copy_repo("save_serve", tmp_path))
    result = run_repo(root)
    assert sorted(p for p in analysed if not p.startswith("pad_")) == ["serve.py", "train.py"]
    (save,) = [f for f in result.findings if f.rule == "KM401" and f.span.line == 7]
    assert "serve.py also uses this file name" in save.message


def test_a_wrong_guess_only_costs_a_second_analysis(tmp_path: Path, monkeypatch) -> None:
    """A file name in a comment looks shared to the guess but not to the index: the save
    it concerns is analysed again with the project's answer, and renamed."""
    root = _with_padding(copy_repo("save_serve", tmp_path))
    serve = root / "serve.py"
    serve.write_text(
        serve.read_text().replace("classifier.h5", "other.h5") + '# was "scratch.h5"\n'
    )
    from kmigrate.project import index_pass

    def rows() -> set[tuple]:
        return {
            (f.path, f.span.line, f.rule, f.message, f.fixable) for f in run_repo(root).findings
        }

    with monkeypatch.context() as no_guess:
        no_guess.setattr(index_pass, "guess_shared_paths", lambda *args: {})
        expected = rows()
    analysed = _count_analyses(monkeypatch)
    found = rows()
    assert found == expected
    assert sorted(p for p in analysed if not p.startswith("pad_")) == [
        "serve.py",
        "train.py",
        "train.py",
    ]
    saves = [f for f in found if f[0] == "train.py" and f[2] == "KM401"]
    assert saves and all("also uses" not in f[3] for f in saves)


def _rows(result) -> list[tuple]:
    """Everything a report shows of each finding."""
    return [
        (f.path, f.span, f.rule, f.context, f.message, f.fixable, f.symbol, f.fingerprint)
        for f in result.findings
    ]


def _indexed_first(root: Path, monkeypatch) -> list[tuple]:
    """The findings when every file is indexed before any analysis: each file analysed
    once, with the project's facts (what the two phases must give)."""
    from kmigrate.project import index_pass

    with monkeypatch.context() as patch:
        patch.setattr(index_pass, "_PARSE_TWICE_UP_TO", 10_000)
        return _rows(run_repo(root))


def test_a_file_only_the_notes_of_the_project_change_is_analysed_once(
    tmp_path: Path, monkeypatch
) -> None:
    """Alone, train.py's base `Head` is not ambiguous; in the project it is (two `helpers`
    modules). The note only ends the messages of the findings in `Tail`: the runner adds
    it to the first analysis instead of analysing the file again."""
    root = _with_padding(copy_repo("same_name", tmp_path))
    expected = _indexed_first(root, monkeypatch)
    analysed = _count_analyses(monkeypatch)
    assert _rows(run_repo(root)) == expected
    assert analysed.count("train.py") == 1
    (note,) = [row[4] for row in expected if row[0] == "train.py"]
    assert note.endswith("context not decided)")


def test_swapped_notes_are_not_written_from_the_first_analysis_text() -> None:
    """A worker writes each report's findings as JSON text for the report; when the
    runner then swaps a note in their messages, that text must not be used."""
    from kmigrate.engine.model import Context, Finding, Severity, Span
    from kmigrate.engine.run_data import FileReport, RunResult
    from kmigrate.report import build, render_data
    from kmigrate.run.report_codec import digest_findings
    from kmigrate.run.runner import _same_outcome

    finding = Finding(
        rule="KM201",
        severity=Severity.WARNING,
        message="`tf.abs` is TensorFlow-only (old note)",
        path="m.py",
        span=Span(3, 4, 3, 12),
        context=Context.OTHER,
        symbol="tf.abs",
        scope_name="Tail.call",
    )
    report = FileReport("m.py", [finding], uses_tensorflow=True)
    report.own_facts = ModuleFacts(notes=(("Tail", "old note"),))
    digest_findings(report)
    assert "old note" in report.digest.text
    assert _same_outcome(report, ModuleFacts(notes=(("Tail", "new note"),)))
    written = render_data(build(RunResult([report])), "json")
    assert "(new note)" in written and "old note" not in written


@pytest.mark.parametrize("name", REPO_NAMES)
def test_analysing_files_before_the_project_is_resolved_changes_nothing(
    name: str, tmp_path: Path, monkeypatch
) -> None:
    """Whatever the first analyses guessed, and whatever the runner keeps of them, the
    findings are those of analysing every file once with the project's facts."""
    root = _with_padding(copy_repo(name, tmp_path))
    assert _rows(run_repo(root)) == _indexed_first(root, monkeypatch)


_BACKEND_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/backend.py": """\
        import tensorflow as tf
        from tensorflow import keras
        from tensorflow.keras import backend as K


        class BaseLayer(keras.layers.Layer):
            pass
        """,
    "pkg/blocks.py": """\
        import tensorflow as tf

        from pkg.backend import K, BaseLayer


        class Block(BaseLayer):
            def call(self, x):
                return K.mean(tf.square(x), axis=-1)
        """,
    "train.py": """\
        import tensorflow as tf
        from pkg.backend import K


        def loss(y, p):
            return K.mean(K.square(y - p))


        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(loss=loss)
        """,
}


def _backend_project(root: Path) -> Path:
    for name, text in _BACKEND_PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return _with_padding(root)


def _analyses_outside_padding(root: Path, expected: list[tuple], monkeypatch) -> list[str]:
    """The files (but the padding) a run analyses, in order of name; its findings must
    be ``expected``."""
    analysed = _count_analyses(monkeypatch)
    assert _rows(run_repo(root)) == expected
    return sorted(p for p in analysed if not p.startswith("pad_"))


def test_files_using_a_backend_module_of_the_project_are_analysed_once(
    tmp_path: Path, monkeypatch
) -> None:
    """`K` and `BaseLayer` come from pkg/backend.py: its entry is made before the first
    analyses, which then see `Block` as a layer and `K` as the Keras backend."""
    from kmigrate.project import index_pass

    root = _backend_project(tmp_path)
    expected = _indexed_first(root, monkeypatch)
    assert ("pkg/blocks.py", 8, "model") in {(r[0], r[1].line, r[3].value) for r in expected}
    with monkeypatch.context() as no_guess:
        no_guess.setattr(index_pass, "facts_guess", lambda *args: None)
        alone = _analyses_outside_padding(root, expected, no_guess)
    # backend.py too: alone, it does not know that the others import its `K`
    assert alone == ["pkg/backend.py"] * 2 + ["pkg/blocks.py"] * 2 + ["train.py"] * 2
    guessed = _analyses_outside_padding(root, expected, monkeypatch)
    assert guessed == ["pkg/backend.py", "pkg/blocks.py", "train.py"]


def _project_with_a_helper(root: Path) -> Path:
    """The backend project, with a helper `act` that is model code only because
    blocks.py calls it: no guess sees that, so pkg/ops.py is analysed twice."""
    _backend_project(root)
    (root / "pkg/ops.py").write_text(
        "import tensorflow as tf\n\n\ndef act(x):\n    return tf.nn.relu(x)\n"
    )
    blocks = root / "pkg/blocks.py"
    blocks.write_text(
        blocks.read_text().replace("BaseLayer\n", "BaseLayer\nfrom pkg.ops import act\n")
        + "\n    def act(self, x):\n        return act(x)\n"
    )
    return root


def test_both_phases_in_worker_processes_give_the_same_findings(
    tmp_path: Path, monkeypatch
) -> None:
    """Workers started for the first analyses (and inheriting the guess) also make the
    second ones."""
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    root = _project_with_a_helper(tmp_path)
    expected = _indexed_first(root, monkeypatch)
    assert ("pkg/ops.py", 5, "model") in {(r[0], r[1].line, r[3].value) for r in expected}
    assert _analyses_outside_padding(root, expected, monkeypatch).count("pkg/ops.py") == 2
    jobs = plan_jobs([root], Config(root=root.resolve()), index_cache=False)
    assert _rows(run_jobs(jobs, select_ids((), ()), workers=2)) == expected


def test_progress_counts_each_file_once(tmp_path: Path) -> None:
    """Also a file analysed twice, and one without TensorFlow (pkg/__init__.py)."""
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    root = _project_with_a_helper(tmp_path)
    jobs = plan_jobs([root], Config(root=root.resolve()), index_cache=False)
    assert getattr(jobs, "pending", None) is not None and "pkg/__init__.py" in {
        j.display for j in jobs
    }
    advanced: list[int] = []
    run_jobs(jobs, select_ids((), ()), 1, advanced.append)
    assert sum(advanced) == len(jobs)


def _flowlib_project(root: Path) -> Path:
    """bert-for-tf2's shape: layers on a project base on a third-party base
    (``params_flow.Layer``) that kmigrate cannot see into."""
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("import flowlib as fl\n\n\nclass Base(fl.Layer):\n    pass\n")
    body = "(self, x):\n        return tf.reduce_sum(x)\n\n\n"
    (package / "attention.py").write_text(
        "import unittest\n\nimport tensorflow as tf\n\nfrom pkg.base import Base\n\n\n"
        f"class Attention(Base):\n    def call{body}"
        f"class Helper(Base):\n    def run{body}"
        f"class Case(unittest.TestCase):\n    def call{body}"
        f"class TfCase(tf.test.TestCase):\n    def call{body}"
    )
    return root


def test_a_layer_on_a_base_from_an_unseen_package_says_so(tmp_path: Path) -> None:
    """``class Attention(Base)`` with ``Base(params_flow.Layer)``: kmigrate cannot see
    whether the third-party base is a Keras layer. It keeps the class as plain code and
    says why in each finding, instead of the silent "TensorFlow runs it as it is"."""
    _flowlib_project(tmp_path)
    found = {
        f.scope_name.split(".")[0]: f for f in run_repo(tmp_path).findings if f.rule == "KM201"
    }
    noted = found["Attention"]
    assert "its base `flowlib.Layer` is from a package outside this project" in noted.message
    assert noted.context.value == "other" and not noted.fixable
    for name in ("Helper", "Case", "TfCase"):  # no `call`, the standard library, TensorFlow
        assert "outside this project" not in found[name].message


def test_the_project_is_walked_once_when_it_is_what_was_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`scan .` at the root: the index takes the files the run discovered; a file
    inside the project: the index still walks the whole project, and knows the backend
    the file imports from elsewhere."""
    from kmigrate.project import project_files
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs

    root = _backend_project(tmp_path).resolve()
    walks: list[list[Path]] = []
    discover = project_files.discover

    def counted(starts, *args):
        walks.append(list(starts))
        return discover(starts, *args)

    monkeypatch.setattr(project_files, "discover", counted)
    whole = plan_jobs([root], Config(root=root), index_cache=False)
    assert walks == [] and len(whole) == 14
    (train,) = plan_jobs([root / "train.py"], Config(root=root), index_cache=False)
    assert walks == [[root]]
    assert train.facts is not None and dict(train.facts.bindings)["K"].endswith("backend")


def _attention_finding(root: Path, cache: bool) -> tuple[str, bool, str]:
    """(context, fixable, message) of the KM201 finding in ``Attention.call``, from a
    real ``kmigrate scan`` (with the result and index caches when ``cache``)."""
    command = [sys.executable, "-m", "kmigrate", "scan", ".", "-f", "json", "-o", "r.json"]
    subprocess.run([*command, *([] if cache else ["--no-cache"])], cwd=root, check=True)
    report = json.loads((root / "r.json").read_text())
    (finding,) = [
        f
        for f in report["findings"]
        if f["rule"] == "KM201" and f["line"] == 10 and f["path"].endswith("attention.py")
    ]
    return finding["context"], finding["fixable"], finding["message"]


def test_model_bases_in_the_config_make_those_classes_model_code(tmp_path: Path) -> None:
    """`model-bases = ["flowlib.Layer"]`: what the project says a third-party base is.
    The layers on it become model code, fixable; classes without Keras bases do not; and
    editing the config is seen by a warm run (the stored resolution is per model-bases)."""
    from kmigrate.project.config import load_config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    root = _flowlib_project(tmp_path)
    assert _attention_finding(root, cache=True)[:2] == ("other", False)
    pyproject = root / "pyproject.toml"
    pyproject.write_text('[tool.kmigrate]\nmodel-bases = ["flowlib.Layer"]\n')
    context, fixable, message = _attention_finding(root, cache=True)
    assert (context, fixable) == ("model", True) and "outside this project" not in message
    assert _attention_finding(root, cache=False)[:2] == ("model", True)
    config = load_config(root)
    jobs = plan_jobs([root], config, index_cache=False)
    found = run_jobs(jobs, select_ids((), ()), workers=1).findings
    helper = [f for f in found if f.rule == "KM201" and f.scope_name.startswith("Helper")]
    unit = [f for f in found if f.rule == "KM201" and f.scope_name.startswith("Case")]
    assert [f.context.value for f in helper] == ["model"]  # a subclass of the base too
    # not a layer, but the module is Keras code now (it defines layers): model unless
    # proven otherwise; without `model-bases` it uses no Keras and stays `other`
    assert [f.context.value for f in unit] == ["model"]
    pyproject.write_text("[tool.kmigrate]\n")
    assert _attention_finding(root, cache=True)[:2] == ("other", False)


def test_model_bases_make_classes_keras_classes_for_the_km5_rules(tmp_path: Path) -> None:
    """The KM5 rules' class checks (an in-place update in `call`, KM518) read the classes
    the project resolved as Keras classes: a layer on a project base on a third-party
    base that `model-bases` names is checked like any Keras layer, and not without it.
    KM513 (no `get_config`) still judges only bases it sees: one elsewhere may define it."""
    from kmigrate.project.config import load_config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    root = _flowlib_project(tmp_path)
    (root / "pkg" / "block.py").write_text(
        "import tensorflow as tf\n\nfrom pkg.base import Base\n\n\n"
        "class Block(Base):\n    def __init__(self, units, act=tf.nn.relu):\n"
        "        super().__init__()\n\n    def call(self, x):\n        y = tf.identity(x)\n"
        "        y += x\n        return y\n"
    )

    def in_place() -> list[tuple[str, int]]:
        jobs = plan_jobs([root], load_config(root), index_cache=False)
        found = run_jobs(jobs, select_ids(("KM518", "KM513"), ()), workers=1).findings
        return [(f.rule, f.span.line) for f in found if f.path.endswith("block.py")]

    assert in_place() == []
    (root / "pyproject.toml").write_text('[tool.kmigrate]\nmodel-bases = ["flowlib.Layer"]\n')
    assert in_place() == [("KM518", 12)]


def test_the_tf_keras_package_does_not_pin_itself(tmp_path: Path) -> None:
    """Scanning tf-keras itself: the modules of its `tf_keras` package import one another
    as `tf_keras.src...` (also inside functions); those are not Keras 2 pins (KM104).
    A script outside the package still pins it, as does a file in a folder without
    `__init__.py` (the package is read from the `__init__.py` chain, which stops there)
    or a module analysed without its package."""
    from kmigrate.run.runner import scan_text

    src = tmp_path / "tf_keras" / "src"
    src.mkdir(parents=True)
    (tmp_path / "tf_keras" / "__init__.py").write_text("from tf_keras.src import layers\n")
    (src / "__init__.py").write_text("")
    layers = "from tf_keras.src import backend\n\n\ndef f():\n    import tf_keras\n"
    (src / "layers.py").write_text(layers)
    (src / "backend.py").write_text("import tensorflow as tf\n")
    (tmp_path / "tf_keras" / "integration_test").mkdir()
    (tmp_path / "tf_keras" / "integration_test" / "t.py").write_text("import tf_keras as k\n")
    (tmp_path / "build_docs.py").write_text("import tf_keras\n")
    pins = [f"{f.path}:{f.span.line}" for f in run_repo(tmp_path).findings if f.rule == "KM104"]
    assert pins == ["build_docs.py:1", "tf_keras/integration_test/t.py:1"]
    assert [f.rule for f in scan_text(layers, ["KM104"])] == ["KM104", "KM104"]


def test_model_bases_must_be_qualified_class_names(tmp_path: Path) -> None:
    from kmigrate.project.config import ConfigError, load_config

    (tmp_path / "pyproject.toml").write_text('[tool.kmigrate]\nmodel-bases = ["Layer"]\n')
    with pytest.raises(ConfigError, match="model-bases: 'Layer' is not a class's qualified"):
        load_config(tmp_path)


def test_an_import_kept_for_uses_in_a_shared_helper_is_not_counted_fixable(
    tmp_path: Path,
) -> None:
    """keras-retinanet's shape: `from tensorflow import keras` stays while
    `keras.backend.mean` is used, and that use is in a helper shared with data code, so
    apply never migrates it. Scan must not count the import as fixed in a later round
    (it did: the vetoes came after that decision), or scan and apply disagree."""
    _shared_norm(
        tmp_path,
        "from tensorflow import keras\n\n\ndef norm(x):\n    return keras.backend.mean(x)\n",
        "def dataset(values):\n    return tf.data.Dataset.from_tensor_slices(values).map(norm)\n",
    )
    findings = run_repo(tmp_path).findings
    (kept,) = [f for f in findings if f.path == "ops.py" and f.rule == "KM102"]
    assert "keep this import until" in kept.message and not kept.fixable
    fixable = sum(f.fixable for f in findings)
    assert apply_repo(tmp_path) == fixable


def test_a_name_star_imported_from_one_backend_module_per_backend_is_undecided() -> None:
    """keras-contrib's shape: the backend package star-imports one module per backend
    when it runs; a layer calling its functions cannot be followed to one definition,
    so every definition is model code and the call is kept for a finding (KM206)."""
    modules = {
        "lib": "",
        "lib.backend": (
            "import os\n"
            "if os.environ.get('B') == 'np':\n    from .np_backend import *\n"
            "else:\n    from .tf_backend import *\n"
        ),
        "lib.backend.tf_backend": "def fold(x):\n    pass\ndef only_tf(x):\n    pass\n",
        "lib.backend.np_backend": "def fold(x):\n    pass\n",
        "lib.layer": (
            "from lib import backend as B\n"
            "import keras\n"
            "class Fold(keras.layers.Layer):\n"
            "    def call(self, x):\n        return B.only_tf(B.fold(x))\n"
        ),
    }
    project = _project(modules, {"lib.backend": "lib.backend"})
    facts = _facts(project, "lib.layer")
    assert [callee for callee, _ in facts.undecided_calls] == ["B.fold"]  # only_tf: one
    assert "star imports of 2 modules" in facts.undecided_calls[0][1]
    assert _facts(project, "lib.backend.tf_backend").model_functions == ("fold", "only_tf")
    assert _facts(project, "lib.backend.np_backend").model_functions == ("fold",)
    # one star import binding it, the others not: that one, as before
    modules["lib.backend.np_backend"] = "def other(x):\n    pass\n"
    project = _project(modules, {"lib.backend": "lib.backend"})
    assert _facts(project, "lib.layer").undecided_calls == ()
    assert _facts(project, "lib.backend.tf_backend").model_functions == ("fold", "only_tf")


def test_the_entry_pack_decodes_only_the_entries_asked_for(tmp_path: Path) -> None:
    """The pack is one line per entry: a run after a cold scan reads the few entries its
    changes reach without decoding the rest; a line that is not an entry reads as absent."""
    from kmigrate.project.index_entries import EntryPack, IndexEntries, _pack_lines
    from kmigrate.store.cache import ResultCache

    entries = {"aa": {"n": 1}, "bb": {"text": "two\nlines"}, "cc": {}}
    pack = EntryPack(b"".join(_pack_lines(entries)))
    assert set(pack.keys()) == set(entries)
    assert [pack.get(d) for d in ("bb", "aa", "zz")] == [entries["bb"], entries["aa"], None]
    damaged = EntryPack(b"no tab here\naa\t[1]\nbb\t{cut\ncc\t{}")
    assert [damaged.get(d) for d in ("aa", "bb", "cc")] == [None, None, {}]

    store = ResultCache(tmp_path, secret=b"this machine".ljust(32, b"."))
    (tmp_path / "pack.entries").write_bytes(b"the pack as an older kmigrate wrote it")
    written = IndexEntries(store)
    for digest, entry in entries.items():
        written.add(digest, entry)
    written.save()
    assert IndexEntries(store).pack().get("bb") == entries["bb"]
    assert not (tmp_path / "pack.entries").exists()  # no reader left for it
