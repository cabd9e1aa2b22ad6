"""Jupyter notebooks: scan, check and apply on the code cells, everything else kept.

The notebooks are built here in several JSON styles (nbformat's indent=1, indent=2
without a trailing newline, compact, ASCII-escaped, CRLF); after ``apply`` each
must still be the same style, validate with nbformat, keep outputs, metadata and
IPython lines, and differ only inside the sources of rewritten cells.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_hostile_inputs import run  # the CLI in a subprocess

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "notebook" / "custom_layer_demo.ipynb"


def cell(kind: str, source: str, number: int, **extra) -> dict:
    data: dict = {"cell_type": kind, "id": f"c{number}", "metadata": {}}
    if kind == "code":
        data["execution_count"] = extra.pop("execution_count", None)
        data["outputs"] = extra.pop("outputs", [])
    data["source"] = source.splitlines(keepends=True) if extra.pop("as_list", True) else source
    data.update(extra)
    return data


IMPORTS = (
    "%matplotlib inline\n!pip install -q tensorflow\nimport numpy as np\nimport tensorflow as tf"
)
LAYER = (
    "class Scale(tf.keras.layers.Layer):\n"
    "    def call(self, x):\n"
    "        !echo 'shell inside a method'\n"
    "        # café: a comment with non-ASCII text\n"
    "        return tf.reduce_mean(x, axis=-1)\n"
)
BASH = "%%bash\necho tf.reduce_mean(x)\n"
TIMED = "%%time\nlayer = tf.keras.layers.Dense(3)\n"
HELP = "tf.reduce_mean?\nfiles = !ls\nprint(files)"
DOCSTRING = 'NOTE = """\n!not a shell line, inside a string\n"""\ndense = tf.keras.layers.Dense(1)'
BROKEN = "def broken(:\n    x = tf.keras.layers.Dense(2)\n"
OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["2.21.0\n"]}


def make_notebook(as_list: bool = True) -> dict:
    sources = [IMPORTS, LAYER, BASH, TIMED, HELP, DOCSTRING, BROKEN, ""]
    cells = [cell("markdown", "# Demo — ünïcode title\n\nText with `tf.reduce_mean`.", 0)]
    for number, source in enumerate(sources, start=1):
        extra = {"outputs": [OUTPUT], "execution_count": 1} if number == 1 else {}
        cells.append(cell("code", source, number, as_list=as_list, **extra))
    cells.append(cell("raw", "tf.reduce_mean(x)", 99))
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.10.12"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


STYLES = {
    "nbformat": dict(indent=1, sort_keys=True, ensure_ascii=False, trailing="\n"),
    "indent2_no_newline": dict(indent=2, ensure_ascii=False, trailing=""),
    "compact": dict(indent=None, ensure_ascii=False, trailing="\n"),
    "ascii": dict(indent=1, ensure_ascii=True, trailing="\n"),
    "crlf": dict(indent=1, ensure_ascii=False, trailing="\r\n", crlf=True),
    "string_sources": dict(indent=1, ensure_ascii=False, trailing="\n", as_list=False),
}


def dump(data: dict, style: dict) -> str:
    options = {k: v for k, v in style.items() if k in ("indent", "sort_keys", "ensure_ascii")}
    text = json.dumps(data, **options) + style["trailing"]
    if style.get("crlf"):
        text = text.replace("\n", "\r\n").replace("\r\r\n", "\r\n")
    return text


def write_notebook(folder: Path, style_name: str) -> tuple[Path, str]:
    style = STYLES[style_name]
    text = dump(make_notebook(style.get("as_list", True)), style)
    path = folder / f"{style_name}.ipynb"
    path.write_bytes(text.encode("utf-8"))
    return path, text


def sources(data: dict) -> list[str]:
    return [
        c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in data["cells"]
    ]


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> list[dict]:
    folder = tmp_path_factory.mktemp("nb_scan")
    write_notebook(folder, "nbformat")
    result = run("scan", ".", "--format", "json", "--no-cache", "--jobs", "1", cwd=folder)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["findings"]


def test_findings_carry_cell_and_line_within_the_cell(scanned) -> None:
    notebook = make_notebook()
    cell_sources = sources(notebook)
    assert scanned and all("cell" in f and "cell_line" in f for f in scanned)
    for finding in scanned:
        assert finding["line"] == finding["cell_line"]
        text = cell_sources[finding["cell"] - 1].splitlines()[finding["cell_line"] - 1]
        assert notebook["cells"][finding["cell"] - 1]["id"] == finding["cell_id"]
        if finding["rule"] != "KM901" and finding["symbol"].startswith("tf."):
            assert finding["symbol"].rsplit(".", 1)[-1] in text, (finding, text)
    where = {(f["rule"], f["cell"], f["cell_line"]) for f in scanned}
    assert ("KM201", 3, 5) in where  # tf.reduce_mean in Scale.call, below a masked !shell
    assert ("KM101", 5, 2) in where  # the body of a %%time cell is Python
    assert ("KM101", 7, 4) in where  # the line after a string holding "!not a shell line"
    assert ("KM901", 8, 1) in where  # the broken cell, reported on its own
    assert not [f for f in scanned if f["cell"] in (1, 4, 10)]  # markdown, %%bash, raw
    broken = next(f for f in scanned if f["rule"] == "KM901")
    assert "cell 8" in broken["message"] and "left untouched" in broken["message"]


@pytest.mark.parametrize("style_name", sorted(STYLES))
def test_apply_rewrites_code_cells_and_keeps_everything_else(tmp_path: Path, style_name) -> None:
    import nbformat

    path, before = write_notebook(tmp_path, style_name)
    result = run("apply", ".", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    after = path.read_bytes().decode("utf-8")
    assert after != before
    old, new = json.loads(before), json.loads(after)
    # Same JSON style: re-serialising the new content in the original style gives the file.
    assert dump(new, STYLES[style_name]) == after
    nbformat.validate(nbformat.reads(after, as_version=4))
    old_sources, new_sources = sources(old), sources(new)
    for index, (a, b) in enumerate(zip(old["cells"], new["cells"])):
        a, b = dict(a), dict(b)
        a.pop("source"), b.pop("source")
        assert a == b, f"cell {index + 1}: only the source may change"
    assert {k: v for k, v in old.items() if k != "cells"} == {
        k: v for k, v in new.items() if k != "cells"
    }
    for index in (0, 3, 7, 8, 9):  # markdown, %%bash, the broken cell, the empty one, raw
        assert new_sources[index] == old_sources[index], f"cell {index + 1} must be untouched"
    # IPython lines survive verbatim, Python around them is rewritten.
    assert new_sources[1].startswith("%matplotlib inline\n!pip install -q tensorflow\n")
    assert "        !echo 'shell inside a method'\n" in new_sources[2]
    assert (
        "keras.ops.mean(x, axis=-1)" in new_sources[2] or "ops.mean(x, axis=-1)" in new_sources[2]
    )
    assert new_sources[4].startswith("%%time\nlayer = keras.layers.Dense(3)")
    assert new_sources[5].startswith("tf.reduce_mean?\nfiles = !ls\n")
    assert "!not a shell line, inside a string\n" in new_sources[6]
    assert "dense = keras.layers.Dense(1)" in new_sources[6]
    # Idempotent.
    again = run("apply", ".", "--diff", "--jobs", "1", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == "", again.stdout


def test_only_source_lines_of_rewritten_cells_differ(tmp_path: Path) -> None:
    path, before = write_notebook(tmp_path, "nbformat")
    assert run("apply", ".", "--jobs", "1", cwd=tmp_path).returncode == 0
    after = path.read_text(encoding="utf-8")
    old_lines, new_lines = before.splitlines(), after.splitlines()
    import difflib

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes():
        if tag == "equal":
            continue
        for line in old_lines[i1:i2] + new_lines[j1:j2]:
            assert line.startswith('    "'), f"changed line outside a source list: {line!r}"


def test_imports_are_fixed_across_cells(tmp_path: Path) -> None:
    data = make_notebook()
    data["cells"] = [
        cell("code", "import tensorflow as tf\nfrom tensorflow import keras", 1),
        cell("markdown", "The model:", 2),
        cell("code", "model = keras.Sequential([tf.keras.layers.Dense(2)])", 3),
    ]
    path = tmp_path / "cross.ipynb"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    assert run("apply", ".", "--jobs", "1", cwd=tmp_path).returncode == 0
    new = sources(json.loads(path.read_text(encoding="utf-8")))
    assert new[0] == "import keras"
    assert new[2] == "model = keras.Sequential([keras.layers.Dense(2)])"


def test_bad_notebooks_are_reported_not_crashed(tmp_path: Path) -> None:
    (tmp_path / "truncated.ipynb").write_text('{"cells": [{"source": "import tensorflow')
    (tmp_path / "list.ipynb").write_text('["tensorflow"]')
    julia = make_notebook()
    julia["metadata"] = {"kernelspec": {"language": "julia", "name": "julia-1.9"}}
    (tmp_path / "julia.ipynb").write_text(json.dumps(julia))
    result = run("scan", ".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert {(f["path"], f["rule"]) for f in findings} == {
        ("truncated.ipynb", "KM901"),
        ("list.ipynb", "KM901"),
    }
    assert all("left untouched" in f["message"] for f in findings)


def test_check_reports_notebook_cells(tmp_path: Path) -> None:
    path, _ = write_notebook(tmp_path, "nbformat")
    result = run("check", str(path.name), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "nbformat.ipynb" in result.stdout


def export_code(notebook_text: str) -> str:
    """The Python of a notebook's code cells, IPython lines dropped (for parity)."""
    lines = []
    data = json.loads(notebook_text)
    for kind, source in zip([c["cell_type"] for c in data["cells"]], sources(data)):
        if kind != "code" or source.startswith("%%"):
            continue
        lines += [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    return "\n".join(lines) + "\n"


def test_sample_notebook_converts_and_opens_with_nbformat(tmp_path: Path) -> None:
    import nbformat

    target = tmp_path / SAMPLE.name
    shutil.copy(SAMPLE, target)
    result = run("apply", ".", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = target.read_text(encoding="utf-8")
    assert text != SAMPLE.read_text(encoding="utf-8")
    nbformat.validate(nbformat.reads(text, as_version=4))
    assert "tf.matmul" not in text and "%matplotlib inline" in text
    compile(export_code(text), "converted", "exec")


@pytest.mark.backends
def test_converted_sample_notebook_passes_parity(tmp_path: Path, clean_env) -> None:
    target = tmp_path / SAMPLE.name
    shutil.copy(SAMPLE, target)
    assert run("apply", ".", "--jobs", "1", cwd=tmp_path).returncode == 0
    original = tmp_path / "original_nb.py"
    converted = tmp_path / "converted_nb.py"
    original.write_text(export_code(SAMPLE.read_text(encoding="utf-8")), encoding="utf-8")
    converted.write_text(export_code(target.read_text(encoding="utf-8")), encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "migrate",
            "parity",
            f"{converted}:build_model",
            "--reference",
            f"{original}:build_model",
            "--backends",
            "tensorflow,jax,torch",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**clean_env, "PYTHONPATH": str(ROOT)},
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# -- the project around a notebook -----------------------------------------------------

PROJECT_LAYER = (
    "from zoo.base import BaseLayer\n"
    "import tensorflow as tf\n\n"
    "class Scale(BaseLayer):\n"
    "    def call(self, x):\n"
    "        return helper(x)\n\n"
    "def helper(x):\n"
    "    return tf.reduce_mean(x, axis=-1)\n\n"
    'WEIGHTS = "scale.weights.h5"\n'
)


def _project_with_notebook(root: Path) -> Path:
    (root / "zoo").mkdir()
    (root / "zoo" / "__init__.py").write_text("")
    (root / "zoo" / "base.py").write_text(
        "from tensorflow import keras\n\nclass BaseLayer(keras.layers.Layer):\n    pass\n"
    )
    (root / "zoo" / "serve.py").write_text('WEIGHTS = "scale.weights.h5"\n')
    notebook = {
        "cells": [cell("code", PROJECT_LAYER, 1)],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = root / "demo.ipynb"
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    return path


@pytest.mark.parametrize("cached", [False, True])
def test_a_notebook_layer_with_a_project_base_is_model_code(tmp_path: Path, cached) -> None:
    """The notebook's layer derives from the project's base layer: its call and the
    helper it calls are model code, so the op there is converted, as in a module."""
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    path = _project_with_notebook(tmp_path)
    config = Config(root=tmp_path)
    ids = select_ids((), ())
    for _ in range(2 if cached else 1):  # the second run: the stored resolution
        jobs = plan_jobs([path], config, index_cache=cached)
        (finding,) = [f for f in run_jobs(jobs, ids).findings if f.symbol == "tf.reduce_mean"]
        assert (finding.context.value, finding.fixable) == ("model", True)
        (job,) = jobs
        assert job.facts.model_functions == ("helper",)
        assert job.facts.shared_paths == (("scale.weights.h5", "zoo/serve.py"),)
    alone = plan_jobs([path], config, index=False)
    (finding,) = [f for f in run_jobs(alone, ids).findings if f.symbol == "tf.reduce_mean"]
    assert finding.context.value == "other"  # without the project: not known as a layer


def test_an_unchanged_project_keeps_its_notebooks_facts(tmp_path: Path, monkeypatch) -> None:
    """A re-scan of an unchanged project reads the notebooks' facts the last run worked
    out (indexing no file for them); an edited notebook or module is worked out again,
    and a stored value of the wrong shape is a miss. Each time the facts are those of a
    run without a cache."""
    from dataclasses import fields

    import kmigrate.project.index_pass as index_pass
    from kmigrate.engine.module_facts import ModuleFacts
    from kmigrate.project import notebook_facts
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs

    assert {f.name for f in fields(ModuleFacts)} == {
        *notebook_facts._NAME_FIELDS,
        *notebook_facts._PAIR_FIELDS,
        *notebook_facts._FLAG_FIELDS,
        "provided",  # the fact providers' values, stored as {name: value}
    }
    path = _project_with_notebook(tmp_path)
    config = Config(root=tmp_path)
    indexed: list[int] = []
    real = index_pass.index_records
    monkeypatch.setattr(
        index_pass, "index_records", lambda *a, **k: indexed.append(1) or real(*a, **k)
    )

    def facts() -> object:
        (job,) = plan_jobs([path], config)
        (fresh,) = plan_jobs([path], config, index_cache=False)
        assert job.facts == fresh.facts
        return job.facts

    first = facts()
    assert first.model_functions == ("helper",)
    indexed.clear()
    assert facts() == first  # the stored resolution and the stored notebooks' facts
    assert facts() == first
    assert len(indexed) == 2  # the runs without a cache only (the first run kept them)
    path.write_text(path.read_text().replace("helper", "helper2"))
    assert facts().model_functions == ("helper2",)
    (tmp_path / "zoo" / "serve.py").write_text('OTHER = "other.weights.h5"\n')
    assert facts().shared_paths == ()
    store = index_pass.index_store(tmp_path.resolve())
    root_key = index_pass.IndexedProject(tmp_path.resolve(), None, {}).root_key
    for wrong in ({"key": "x", "facts": {}}, {"facts": {}}, [1]):
        assert store.store_value(notebook_facts.NOTEBOOKS, root_key, wrong)
        assert facts().model_functions == ("helper2",)
    value = store.load_value(notebook_facts.NOTEBOOKS, root_key, lambda v: v)
    ((name, row),) = value["facts"].items()
    row[0] = [1]  # a class name that is not a string
    assert store.store_value(notebook_facts.NOTEBOOKS, root_key, value)
    assert facts().model_functions == ("helper2",)


def test_a_notebook_in_a_project_scanned_by_workers_is_still_model_code(tmp_path: Path) -> None:
    """A cold scan of many files: the workers make the notebook's entry while they
    analyse the modules, and resolution uses it."""
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    _project_with_notebook(tmp_path)
    for i in range(10):  # enough TensorFlow files for two phases in worker processes
        (tmp_path / f"pad_{i}.py").write_text("import tensorflow as tf\n\nX = tf.constant(1)\n")
    ids = select_ids((), ())
    results = []
    for workers in (1, 2):
        jobs = plan_jobs([tmp_path], Config(root=tmp_path), index_cache=False)
        assert getattr(jobs, "pending", None) is not None
        results.append(run_jobs(jobs, ids, workers).findings)
    assert results[0] == results[1]
    (finding,) = [f for f in results[1] if f.symbol == "tf.reduce_mean"]
    assert (finding.path, finding.context.value, finding.fixable) == ("demo.ipynb", "model", True)


def test_a_notebook_entry_made_elsewhere_is_used_only_for_the_same_bytes(tmp_path: Path) -> None:
    from kmigrate.project.notebook_facts import made_entry, notebook_entry

    path = _project_with_notebook(tmp_path)
    made = made_entry(str(path))
    assert made is not None and made[1] is not None
    assert notebook_entry(path, None, made) == made[1] == notebook_entry(path)
    text = path.read_text()
    path.write_text(text.replace("def helper(x)", "def other(x)"))
    fresh = notebook_entry(path)
    assert "other" in fresh["functions"]
    assert notebook_entry(path, None, made) == fresh  # made from other bytes: not used


def test_a_cold_scan_loads_and_parses_each_notebook_once(tmp_path: Path, monkeypatch) -> None:
    """The notebook read for its index entry is the one its analysis then reads, tree
    included (one load, one parse of its code as a module); the findings are those of
    a run that loads it again."""
    import ast

    from kmigrate.engine import notebook
    from kmigrate.project import notebook_facts
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    _project_with_notebook(tmp_path)
    notebook_facts._LOADED.clear()  # what earlier tests left
    for i in range(10):  # enough TensorFlow files to analyse them before resolving
        (tmp_path / f"pad_{i}.py").write_text("import tensorflow as tf\n\nX = tf.constant(1)\n")
    loads: list[int] = []
    real_load = notebook.load_notebook
    monkeypatch.setattr(notebook, "load_notebook", lambda t: loads.append(1) or real_load(t))
    parses: list[str] = []
    real_parse = ast.parse
    monkeypatch.setattr(
        ast, "parse", lambda text, *a, **k: parses.append(text) or real_parse(text, *a, **k)
    )
    ids = select_ids((), ())
    jobs = plan_jobs([tmp_path], Config(root=tmp_path), index_cache=False)
    reused = run_jobs(jobs, ids, 1).findings
    # the cell, when the notebook is loaded, and the code cells as one module
    assert len(loads) == 1 and sum("class Scale(BaseLayer)" in t for t in parses) == 2
    assert not notebook_facts._LOADED  # taken by the analysis
    monkeypatch.setattr(notebook_facts, "take_loaded", lambda text: None)
    jobs = plan_jobs([tmp_path], Config(root=tmp_path), index_cache=False)
    assert run_jobs(jobs, ids, 1).findings == reused
    notebook_facts._LOADED.clear()
    assert any(f.path == "demo.ipynb" and f.symbol == "tf.reduce_mean" for f in reused)


@pytest.mark.parametrize("cached", [False, True])
def test_a_save_a_notebook_loads_is_not_renamed_alone(tmp_path: Path, cached) -> None:
    """A module's `model.save("classifier.h5")` moved to `.keras` would break the
    notebook that loads `classifier.h5` (nothing imports a notebook, but it uses the
    file): the save stays manual and says which notebook, also when only the module is
    checked (the pre-commit hook), and fixable again once the notebook loads another file."""
    from kmigrate.project.config import Config
    from kmigrate.run.runner import plan_jobs, run_jobs, select_ids

    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\n\n\ndef train(model):\n    model.save('classifier.h5')\n"
    )
    notebook = {
        "cells": [
            cell(
                "code",
                "import tensorflow as tf\nm = tf.keras.models.load_model('classifier.h5')\n",
                1,
            )
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "evaluate.ipynb"
    path.write_text(json.dumps(notebook))
    ids = select_ids((), ())

    def save_finding(*named: Path):
        jobs = plan_jobs(list(named) or [tmp_path], Config(root=tmp_path), index_cache=cached)
        (found,) = [f for f in run_jobs(jobs, ids, 1).findings if f.rule == "KM401"]
        return found

    for named in ((), (tmp_path / "train.py",)):  # the whole project, the hook's one file
        found = save_finding(*named)
        assert not found.fixable and "evaluate.ipynb also uses this file name" in found.message
    path.write_text(json.dumps(notebook).replace("classifier.h5", "other.h5"))
    assert save_finding().fixable
