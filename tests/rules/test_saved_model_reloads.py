"""KM404 across files: a SavedModel reloaded anywhere in the project keeps the saves
elsewhere as they are (what ``tf.saved_model.save`` of a Keras model wrote is called as
``loaded(x)``, what ``model.export`` writes as ``loaded.serve(x)``). The project index
records which modules reload, through imports, aliases and re-exports; the runs that
reuse stored resolutions, cached results and first guesses must see it change."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.project_entry import build_entry, valid_entry
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.facts.saved_model_reloads import SavedModelReloads
from tests.repo_fixtures import apply_repo, copy_repo, run_repo

NAME = SavedModelReloads.name
SAVE = "train.py:7"  # the fixture's tf.saved_model.save(model, out)
LOAD = "    loaded = tf.compat.v2.saved_model.load(directory)\n"


def _index(modules: dict[str, str]) -> ProjectIndex:
    records = []
    for name, source in modules.items():
        entry = build_entry(ast.parse(textwrap.dedent(source)), CONTEXT_SPEC)
        assert valid_entry(entry, CONTEXT_SPEC)
        package = name.rpartition(".")[0]
        records.append(ModuleRecord(name, entry, package, "", (name,), name + ".py"))
    return ProjectIndex(records, CONTEXT_SPEC)


def test_reloads_are_resolved_through_imports_aliases_and_re_exports() -> None:
    index = _index(
        {
            "train": """
                import tensorflow as tf

                def train(model, out):
                    tf.saved_model.save(model, out)
            """,
            "compat_v2": """
                import tensorflow as tf
                loaded = tf.compat.v2.saved_model.load("exported")
            """,
            "renamed": """
                from tensorflow.saved_model import load as sm_load

                def serve(d):
                    return sm_load(d)
            """,
            "inside": """
                def serve(d):
                    import tensorflow as tf

                    return tf.saved_model.load(d)
            """,
            "pkg.compat": "import tensorflow as tf\n",
            "reexported": """
                from pkg.compat import tf

                def serve(d):
                    x = 1
                    return tf.compat.v1.saved_model.load_v2(d)
            """,
            "session": """
                import tensorflow as tf

                def read(f, sess, d):
                    tf.compat.v1.saved_model.loader.load(sess, ["serve"], d)
                    tf.compat.v1.saved_model.load(sess, ["serve"], d)
            """,
            "hub_layer": """
                import tensorflow_hub as hub

                def serve(d):
                    return hub.KerasLayer(d, trainable=False)
            """,
            "keras_loads": """
                from tensorflow import keras
                from tensorflow.keras.models import load_model as load

                def serve(d):
                    keras.models.load_model(d)  # a folder or a file: not known
                    load("model.h5")
                    return keras.models.load_model(filepath="exported/1")
            """,
            "other_loads": """
                import json
                import numpy as np
                import tensorflow as tf

                def read(f, d):
                    tf.saved_model.contains_saved_model(d)
                    return json.load(f), np.load(d)
            """,
        }
    )
    local = {r.key: index.local(r) for r in index.records}
    mine = {key: dict(facts.provided)[NAME] for key, facts in local.items()}
    reloads = {key: (line, reader) for key, (_, line, reader) in mine.items()}
    assert reloads == {
        "train": (0, ""),
        "compat_v2": (3, "tf.saved_model.load"),
        "renamed": (5, "tf.saved_model.load"),
        "inside": (5, "tf.saved_model.load"),
        "pkg.compat": (0, ""),
        "reexported": (6, "tf.compat.v1.saved_model.load_v2"),
        # TF1's session loaders read the serving signature, whose keys export changes
        "session": (5, "tf.compat.v1.saved_model.loader.load"),
        "hub_layer": (5, "hub.KerasLayer"),
        "keras_loads": (8, "tf.keras.models.load_model"),
        "other_loads": (0, ""),  # json/np are not TF; checking for a SavedModel reads none
    }
    assert [key for key, (saves, _, _) in mine.items() if saves] == ["train"]
    train = next(r for r in index.records if r.key == "train")
    # the saving module is told of three, by path; the others, which save nothing, of none
    assert dict(index.facts(train).provided)[NAME] == (
        ("compat_v2.py", 3, "tf.saved_model.load"),
        ("hub_layer.py", 5, "hub.KerasLayer"),
        ("inside.py", 5, "tf.saved_model.load"),
    )
    others = [r for r in index.records if r is not train]
    assert all(dict(index.facts(r).provided)[NAME] == () for r in others)


def _scan(root: Path, *args: str) -> dict:
    command = [sys.executable, "-m", "kmigrate", "scan", ".", "-f", "json", "-o", "r.json"]
    subprocess.run([*command, *args], cwd=root, check=True)
    return json.loads((root / "r.json").read_text())


def _save_finding(root: Path, *args: str) -> tuple[bool, str]:
    (found,) = [
        f
        for f in _scan(root, *args)["findings"]
        if f["rule"] == "KM404" and f"{f['path']}:{f['line']}" == SAVE
    ]
    return found["fixable"], found["message"]


def _pad(root: Path) -> None:
    """Enough TensorFlow files that a cold scan analyses files before it resolves the
    project (with its first guess of their facts)."""
    for i in range(10):
        (root / f"pad_{i}.py").write_text("import tensorflow as tf\n\nX = tf.constant(1)\n")


def test_a_reload_in_another_file_keeps_the_save_warm_or_cold(tmp_path: Path) -> None:
    """Through the real CLI with its caches: each edit of the loading file is seen by
    the next (warm) scan, and each answer is a cold scan's."""
    root = copy_repo("saved_model_serve", tmp_path)
    _pad(root)
    serve = root / "serve.py"
    text = serve.read_text()
    blocked = "`serve.py` reloads SavedModels with tf.saved_model.load (line 11)"

    def both() -> tuple[bool, str]:
        warm = _save_finding(root)
        assert warm == _save_finding(root, "--no-cache")
        return warm

    fixable, message = both()
    assert not fixable and blocked in message and "loaded.serve(x)" in message
    serve.write_text(text.replace(LOAD, "    loaded = None\n"))  # the load call removed
    assert both()[0]
    serve.write_text("# an explanation first\n" + text)  # back, one line lower
    fixable, message = both()
    assert not fixable and "(line 12)" in message
    serve.unlink()  # the loading file removed
    assert both()[0]
    serve.write_text(text)  # and added again
    assert both() == (False, message.replace("(line 12)", "(line 11)"))
    # `tf` re-exported by a module of the project: resolved through it
    (root / "compat.py").write_text("import tensorflow as tf\n")
    serve.write_text(text.replace("import tensorflow as tf", "from compat import tf"))
    assert both() == (False, message.replace("(line 12)", "(line 11)"))
    (root / "compat.py").write_text("import numpy as tf\n")  # now it is not TensorFlow
    assert both()[0]


def test_check_of_the_saving_file_and_apply_see_the_reload(tmp_path: Path) -> None:
    root = copy_repo("saved_model_serve", tmp_path)
    check = [sys.executable, "-m", "kmigrate", "check", "train.py"]
    result = subprocess.run(check, cwd=root, capture_output=True, text=True)
    (line,) = [line for line in result.stdout.splitlines() if "KM404" in line]
    assert "`serve.py` reloads SavedModels" in line
    scanned = sum(f.fixable for f in run_repo(root).findings)
    assert apply_repo(root) == scanned > 0
    assert "tf.saved_model.save(model, out)" in (root / "train.py").read_text()
    (root / "serve.py").unlink()
    apply_repo(root)
    assert "model.export(out)" in (root / "train.py").read_text()


def test_a_notebook_that_saves_is_told_of_the_modules_that_reload(tmp_path: Path) -> None:
    root = copy_repo("saved_model_serve", tmp_path)
    (root / "train.py").unlink()
    code = "import tensorflow as tf\nmodel = tf.keras.Sequential()\nmodel.compile()\n"
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": code, "outputs": []},
            {"cell_type": "code", "metadata": {}, "source": "tf.saved_model.save(model, 'out')"},
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "demo.ipynb").write_text(json.dumps(notebook))

    def save() -> dict:
        (found,) = [f for f in _scan(root)["findings"] if f["rule"] == "KM404"]
        return found

    found = save()
    assert not found["fixable"] and "`serve.py` reloads SavedModels" in found["message"]
    (root / "serve.py").unlink()
    assert save()["fixable"]


# -- readers other than tf.saved_model.load ---------------------------------------------
#
# Each reads the SavedModel as `tf.saved_model.save` wrote it and breaks on what
# `model.export` writes: tensorflow_hub calls the object (or its signature), TF1's session
# loaders read the serving signature by its keys. Each serve.py replaces the fixture's.
READERS = {
    "hub.load": "import tensorflow_hub as hub\n\nloaded = hub.load('exported')\n",
    "hub.KerasLayer": "from tensorflow_hub import KerasLayer\n\nlayer = KerasLayer('exported')\n",
    "hub.Module": "import tensorflow_hub as tfhub\n\nmodule = tfhub.Module('exported')\n",
    # a Keras model loader counts on a literal folder: it wants a model export never writes
    "tf.keras.models.load_model": (
        "import tensorflow as tf\n\nmodel = tf.keras.models.load_model('exported')\n"
    ),
    "tf.compat.v1.saved_model.loader.load": (
        "import tensorflow.compat.v1 as tf\n\n"
        "def read(sess):\n    return tf.saved_model.loader.load(sess, ['serve'], 'exported')\n"
    ),
}


def _km404(root: Path) -> tuple[bool, str]:
    (found,) = [f for f in run_repo(root).findings if f.rule == "KM404"]
    assert f"{found.path}:{found.span.line}" == SAVE
    return found.fixable, found.message


def _applied(root: Path) -> bool:
    """Whether apply rewrote the save; it made as many fixes as scan offered."""
    offered = sum(f.fixable for f in run_repo(root).findings)
    assert apply_repo(root) == offered
    return "model.export(out)" in (root / "train.py").read_text()


@pytest.mark.parametrize("reader", READERS)
def test_each_reader_keeps_the_save_and_is_named(reader: str, tmp_path: Path) -> None:
    root = copy_repo("saved_model_hub", tmp_path)
    (root / "serve.py").write_text(READERS[reader])
    line = READERS[reader].count("\n")  # each reads on its last line
    fixable, message = _km404(root)
    assert not fixable
    assert f"`serve.py` reloads SavedModels with {reader} (line {line})" in message
    assert not _applied(root)


def test_the_save_is_rewritten_when_nothing_reloads(tmp_path: Path) -> None:
    root = copy_repo("saved_model_hub", tmp_path)
    # tensorflow_hub's path lookup reads nothing, a model loader on a saved file reads
    # no SavedModel: no reader left
    (root / "serve.py").write_text(
        "import tensorflow_hub as hub\nfrom tensorflow import keras\n\n"
        "path = hub.resolve('x')\nmodel = keras.models.load_model(filepath='model.h5')\n"
    )
    assert _km404(root)[0]
    assert _applied(root)


def test_a_reader_in_the_saving_file_is_named_with_its_line(tmp_path: Path) -> None:
    root = copy_repo("saved_model_hub", tmp_path)
    (root / "serve.py").unlink()
    train = root / "train.py"
    train.write_text(train.read_text() + "\n\ndef serve(d):\n    return hub.load(d)\n")
    train.write_text("import tensorflow_hub as hub\n" + train.read_text())
    (found,) = [f for f in run_repo(root).findings if f.rule == "KM404"]
    assert not found.fixable
    assert "this file reloads SavedModels with hub.load (line 12)" in found.message
    assert not _applied(root)


def test_a_model_loader_in_the_saving_file_counts_on_a_literal_folder(tmp_path: Path) -> None:
    root = copy_repo("saved_model_hub", tmp_path)
    (root / "serve.py").unlink()
    train = root / "train.py"
    text = train.read_text()
    train.write_text(text + "\n\ndef serve():\n    return tf.keras.models.load_model('m.h5')\n")
    assert _km404(root)[0]
    train.write_text(text + "\n\ndef serve():\n    return tf.keras.models.load_model('out')\n")
    fixable, message = _km404(root)
    assert not fixable
    assert "this file reloads SavedModels with tf.keras.models.load_model (line 11)" in message


def test_a_notebook_that_reads_with_hub_keeps_the_save(tmp_path: Path) -> None:
    root = copy_repo("saved_model_hub", tmp_path)
    (root / "serve.py").unlink()
    cells = ["import tensorflow_hub as hub", "layer = hub.KerasLayer('exported')"]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": []} for c in cells],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    reader = root / "serve.ipynb"
    reader.write_text(json.dumps(notebook))
    fixable, message = _save_finding(root)  # the CLI: notebooks are found by discovery
    assert not fixable and "`serve.ipynb` reloads SavedModels with hub.KerasLayer" in message
    reader.unlink()
    assert _save_finding(root)[0]
    reader.write_text(json.dumps(notebook))
    assert not _applied(root)
