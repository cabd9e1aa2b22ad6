"""KM4xx edge cases beyond the rules' own examples: path shapes, pairing, heuristics."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from kmigrate.engine.model import ReplaceNode
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.km4_saving._paths import PathInfo, rewrite_literal_tail
from kmigrate.run.runner import scan_text


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def found(text: str, rule: str):
    return [f for f in scan_text(_code(text), select=[rule]) if f.rule.startswith(rule)]


def fixed(text: str, rule: str) -> str:
    result = apply_to_text(_code(text), select=[rule])
    assert apply_to_text(result, select=[rule]) == result, "not idempotent"
    return result


def test_editor_replaces_one_statement_with_several() -> None:
    """KM402 needs it (a folder created before the save): a capability, never optional."""
    from kmigrate.engine.editor import apply_plans
    from kmigrate.engine.model import EditPlan, Span

    plan = EditPlan((ReplaceNode(Span(1, 0, 1, 3), "a()\nb()", kind="stmt"),))
    assert apply_plans("f()\n", [plan], CONTEXT_SPEC.import_style).text == "a()\nb()\n"


# -- literals ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "old", "new", "expected"),
    [
        ('"m.h5"', "m.h5", "m.keras", '"m.keras"'),
        ("'m.h5'", "m.h5", "m.keras", "'m.keras'"),
        ('r"out\\m.h5"', "out\\m.h5", "out\\m.keras", None),  # backslash in the tail
        ('f"{out}/m.h5"', "/m.h5", "/m.keras", 'f"{out}/m.keras"'),
        ('"""ckpt"""', "ckpt", "ckpt.weights.h5", '"""ckpt.weights.h5"""'),
        ('"m\\x2eh5"', "m.h5", "m.keras", None),  # escaped dot: not spelled verbatim
    ],
)
def test_rewrite_literal_tail(source, old, new, expected) -> None:
    assert rewrite_literal_tail(source, old, new) == expected


@pytest.mark.parametrize(
    ("tail", "complete", "kind", "model", "weights"),
    [
        ("model.h5", True, "h5", "model.keras", "model.weights.h5"),
        ("model.hdf5", True, "h5", "model.keras", "model.weights.h5"),
        ("saved", True, "bare", "saved.keras", "saved.weights.h5"),
        ("w.ckpt", True, "bare", "w.ckpt.keras", "w.weights.h5"),
        ("/ckpt/weights", True, "bare", "/ckpt/weights.keras", "/ckpt/weights.weights.h5"),
        # bert4keras style: the name already says weights, so it only gains `.h5`
        ("best.weights", True, "bare", "best.weights.keras", "best.weights.h5"),
        ("w.weights.h5", True, "weights", None, None),
        ("_final", False, None, None, None),  # f"{name}_final": suffix unknown
    ],
)
def test_path_info_kinds(tail, complete, kind, model, weights) -> None:
    info = PathInfo(tail, complete, literal=None, key=())  # type: ignore[arg-type]
    assert info.legacy_kind() == kind
    if model is not None:
        assert info.new_tail("model") == model
        assert info.new_tail("weights") == weights


# -- KM401 -------------------------------------------------------------------------


def test_path_templates_are_rewritten_in_place() -> None:
    before = """
        from tensorflow import keras

        def save_all(model, out, run):
            model.save("%s/model.h5" % out)
            model.save("{}/final.hdf5".format(out))
            model.save(out + "/export")
            model.save(str(out / "model.h5"))
        """
    after = """
        from tensorflow import keras

        def save_all(model, out, run):
            model.save("%s/model.keras" % out)
            model.save("{}/final.keras".format(out))
            model.save(out + "/export.keras")
            model.save(str(out / "model.keras"))
        """
    assert fixed(before, "KM401") == _code(after)


def test_suffix_from_a_variable_is_manual() -> None:
    findings = found(
        """
        from tensorflow import keras

        def save(model, name):
            model.save(f"models/{name}", save_format="h5")
        """,
        "KM401",
    )
    assert len(findings) == 1 and not findings[0].fixable
    assert "manual" in findings[0].message


def test_variable_path_rewrites_its_single_assignment_and_the_paired_load() -> None:
    before = """
        import os
        import tensorflow as tf

        def roundtrip(model, out):
            path = os.path.join(out, "model.h5")
            model.save(path)
            return tf.keras.models.load_model(path)
        """
    after = fixed(before, "KM401")
    assert 'path = os.path.join(out, "model.keras")' in after
    assert "model.save(path)" in after and "load_model(path)" in after


def test_reassigned_variable_is_not_followed() -> None:
    findings = found(
        """
        from tensorflow import keras

        def save(model):
            path = "a.h5"
            path = "b.h5"
            model.save(path)
        """,
        "KM401",
    )
    assert findings == []  # nothing known about the path, no legacy clue on the call


def test_receivers_that_are_not_models_are_left_alone() -> None:
    code = """
        import tensorflow as tf
        from PIL import Image

        def dump(image, frame):
            image.save("preview")
            frame.save("thumbnail")
        """
    assert found(code, "KM401") == []


def test_model_like_receivers_and_keras_assignments_are_flagged() -> None:
    findings = found(
        """
        import tensorflow as tf

        def train(data):
            clf = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            clf.save("export/clf")
            self_net.save("net_dir")
        """,
        "KM401",
    )
    assert [f.span.line for f in findings] == [5, 6]


def test_no_finding_without_keras_imports() -> None:
    assert found('def f(model):\n    model.save("m.h5")\n', "KM401") == []


def test_save_format_next_to_keras_suffix_is_dropped() -> None:
    before = """
        import keras

        def save(model):
            model.save("m.keras", save_format="keras")
        """
    assert fixed(before, "KM401") == _code(
        """
        import keras

        def save(model):
            model.save("m.keras")
        """
    )


def test_unsupported_arguments_make_the_save_manual() -> None:
    findings = found(
        """
        import tensorflow as tf

        def save(model, fn):
            model.save("serving", signatures=fn)
        """,
        "KM401",
    )
    assert len(findings) == 1 and not findings[0].fixable
    assert "`signatures=`" in findings[0].message


def test_same_path_as_model_and_weights_is_a_conflict() -> None:
    findings = found(
        """
        from tensorflow import keras

        def save(model):
            model.save("state.h5")
            model.save_weights("state.h5")
        """,
        "KM4",
    )
    assert {f.rule for f in findings} == {"KM401", "KM402"}
    assert not any(f.fixable for f in findings)


def test_literal_subfolder_gets_created_first() -> None:
    code = """
        import os
        from tensorflow import keras

        def save(model, out):
            model.save_weights(os.path.join(out, "ckpt", "weights"))
        """
    (finding,) = found(code, "KM402")
    assert finding.fixable
    edits = finding.fix.edits
    assert any(isinstance(e, ReplaceNode) and e.kind == "stmt" for e in edits)
    statement = next(e for e in edits if e.kind == "stmt").text
    assert statement.splitlines() == [
        '{name:os.makedirs}(os.path.join(out, "ckpt"), exist_ok=True)',
        'model.save_weights(os.path.join(out, "ckpt", "weights.weights.h5"))',
    ]
    assert fixed(code, "KM402") == _code(
        """
        import os
        from tensorflow import keras

        def save(model, out):
            os.makedirs(os.path.join(out, "ckpt"), exist_ok=True)
            model.save_weights(os.path.join(out, "ckpt", "weights.weights.h5"))
        """
    )


def test_folder_given_by_a_variable_is_assumed_to_exist() -> None:
    (finding,) = found(
        """
        import os
        from tensorflow import keras

        def save(model, out):
            model.save_weights(os.path.join(out, "weights"))
        """,
        "KM402",
    )
    assert finding.fixable and all(e.kind == "expr" for e in finding.fix.edits)


# -- KM402 / KM403 pairing -----------------------------------------------------------


def test_paired_load_with_by_name_keeps_both_ends() -> None:
    findings = found(
        """
        from tensorflow import keras

        def roundtrip(model):
            model.save_weights("w.h5")
            model.load_weights("w.h5", by_name=True)
        """,
        "KM402",
    )
    assert len(findings) == 1 and not findings[0].fixable
    assert "by_name" in findings[0].message


def test_paired_load_model_gets_the_new_callee_and_the_save_moves_the_path() -> None:
    before = """
        import tensorflow as tf

        model = tf.keras.Sequential()
        model.save("m.h5")
        again = tf.keras.models.load_model("m.h5", compile=False)
        """
    (load,) = found(before, "KM403")
    assert "line 4" in load.message and load.fixable
    both = apply_to_text(_code(before), select=["KM401", "KM403"])
    assert 'model.save("m.keras")' in both
    assert 'again = keras.saving.load_model("m.keras", compile=False)' in both


def test_unpaired_checkpoint_load_is_an_error_with_conversion_advice() -> None:
    (finding,) = found(
        """
        import tensorflow as tf

        def restore(model):
            model.load_weights("checkpoints/my_checkpoint")
        """,
        "KM402",
    )
    assert finding.severity.value == "error" and "convert" in finding.message


def test_loading_keras_files_is_clean() -> None:
    code = """
        import keras

        model = keras.models.load_model("m.keras")
        model.load_weights("m.weights.h5")
        """
    assert found(code, "KM4") == []


# -- KM404 / KM405 ---------------------------------------------------------------------


def test_saved_model_save_with_keywords() -> None:
    before = """
        import tensorflow as tf

        def publish(path, out):
            model = tf.keras.models.load_model(path)
            tf.saved_model.save(obj=model, export_dir=out)
            return tf.constant(1)
        """
    assert "    model.export(out)\n" in fixed(before, "KM404")


def test_saved_model_save_reloaded_in_the_same_file_is_manual() -> None:
    """What model.export writes is called as `loaded.serve(x)`; tf.saved_model.save of a
    Keras model gave a callable. tf-keras' tests save, reload and call in one function."""
    (finding,) = found(
        """
        import tensorflow as tf
        from tensorflow import keras

        def roundtrip(path, x):
            model = keras.Sequential([keras.layers.Dense(2)])
            tf.saved_model.save(model, path)
            return tf.saved_model.load(path)(x)
        """,
        "KM404",
    )
    assert not finding.fixable and "`loaded.serve(x)`, not `loaded(x)`" in finding.message


def test_saved_model_save_of_an_object_not_shown_to_be_a_model_is_manual() -> None:
    """tensorflow_hub saves tf.train.Checkpoint and tf.Module objects, which have no
    `export`: rewriting those broke working code. A parameter named `model` is no proof
    either; a Keras layer bound from `keras.layers` has no `export` as well."""
    for source in (
        "def publish(model, out):\n    tf.saved_model.save(model, out)\n",
        "def publish(out):\n    obj = tf.train.Checkpoint()\n",
        "def publish(out):\n    obj = tf.keras.layers.Dense(3)\n",
    ):
        if "obj" in source:
            source += "    tf.saved_model.save(obj, out)\n"
        (finding,) = found("import tensorflow as tf\n\n" + source, "KM404")
        assert not finding.fixable and "nothing here shows" in finding.message


def test_checkpoint_with_computed_weights_only_flag_is_manual() -> None:
    (finding,) = found(
        """
        from tensorflow import keras

        def make(only_weights):
            return keras.callbacks.ModelCheckpoint("best.h5", save_weights_only=only_weights)
        """,
        "KM405",
    )
    assert not finding.fixable and "not a literal" in finding.message


def test_checkpoint_then_load_model_moves_together() -> None:
    before = """
        from tensorflow import keras

        def train(model, data):
            checkpoint = keras.callbacks.ModelCheckpoint("best.hdf5", save_best_only=True)
            model.fit(data, callbacks=[checkpoint])
            return keras.models.load_model("best.hdf5")
        """
    after = fixed(before, "KM405")
    assert after.count('"best.keras"') == 2


def test_a_load_whose_status_is_checked_keeps_its_save_manual() -> None:
    """tensorflow/hub: `load_weights(path).assert_consumed()` needs TF's checkpoint
    status, which Keras 3's load_weights (returning None) does not give."""
    code = (
        "import tensorflow as tf\n\n"
        "def train(model):\n"
        "    model.save_weights('ckpt')\n"
        "    status = model.load_weights('ckpt')\n"
        "    status.expect_partial()\n"
    )
    (finding,) = [f for f in scan_text(code, select=["KM402"])]
    assert not finding.fixable and "returns nothing" in finding.message
    assert apply_to_text(code, select=["KM402"]) == code


def test_a_load_that_is_keras_3_already_has_nothing_to_rename() -> None:
    """Real repositories kept a KM403 'fix' after apply: the rename to
    keras.saving.load_model was made, the save's path fix was not (its file name is used
    elsewhere), and the finding offered the same rename again."""
    code = (
        "import keras\n\n"
        "def run(model):\n"
        "    model.save('model.h5')\n"
        "    return keras.saving.load_model('model.h5')\n"
    )
    assert scan_text(code, select=["KM403"]) == []  # KM401 moves the path of both
    legacy = code.replace("import keras", "import tensorflow as tf").replace(
        "keras.saving.load_model", "tf.keras.models.load_model"
    )
    (finding,) = scan_text(legacy, select=["KM403"])
    assert finding.fixable and "the save's fix moves both" in finding.message
