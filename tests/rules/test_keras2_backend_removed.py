"""KM108: Keras 2 backend functions outside model code, which Keras 3 no longer has.

A `K.cast` in a `tf.data` map fails once Keras 3 is installed (Keras 3's `keras.backend`
has no `cast`): there it becomes the TensorFlow code it ran. Everywhere else a backend
call is Keras code: model code by default (KM201/KM202/KM205), its keras.ops form in a
training loop; never `tf.*` added to a module that did not import TensorFlow. Found on
qqwweee/keras-yolo3's box decoding and keras-contrib's optimizers.
"""

from __future__ import annotations

from pathlib import Path

from repo_fixtures import run_repo

from kmigrate.api import apply_to_text
from kmigrate.engine.model import Context, Severity
from kmigrate.report.summary import is_manual
from kmigrate.run.runner import scan_text

DATA_MAP = """
import tensorflow as tf
{imports}


def decode(boxes, shape):
    shape = {k}.cast(shape, {k}.dtype(boxes))
    return boxes * {k}.min(shape)


def pipeline(items):
    return tf.data.Dataset.from_tensor_slices(items).map(decode)
"""


def km108(code: str) -> list:
    return [f for f in scan_text(code) if f.rule == "KM108"]


def test_backend_functions_in_a_data_map_become_the_tensorflow_code_they_ran() -> None:
    code = DATA_MAP.format(imports="from keras import backend as K", k="K")
    findings = km108(code)
    assert [f.symbol for f in findings] == ["K.cast", "K.dtype", "K.min"]
    assert {f.context for f in findings} == {Context.DATA}
    assert all(f.severity is Severity.WARNING and not is_manual(f) for f in findings)
    cast = findings[0]
    assert "has no `cast`" in cast.message and "`tf.cast`" in cast.message
    # no "TensorFlow runs it as it is" note left on the same call
    assert not [f for f in scan_text(code) if f.rule.startswith("KM2")]
    # the fixes free the import: KM104 rewrites it in the same apply
    assert apply_to_text(code) == DATA_MAP.format(imports="", k="K").replace(
        "K.cast(shape, K.dtype(boxes))", "tf.cast(shape, boxes.dtype.base_dtype.name)"
    ).replace("K.min(shape)", "tf.reduce_min(shape)").replace("tf\n\n\n\n", "tf\n\n\n")


MAPPED = "\n\ndef pipeline(dataset):\n    return dataset.map({name})\n"


def test_outside_data_code_a_backend_call_is_keras_code_never_tensorflow() -> None:
    """A plain function of a Keras module is model code unless proven otherwise: `K.sqrt`
    becomes keras.ops (KM201), never `tf.sqrt` with an added `import tensorflow`."""
    code = "from keras import backend as K\n\n\ndef scale(x):\n    return K.square(x)\n"
    (finding,) = scan_text(code)
    assert (finding.rule, finding.context, finding.fixable) == ("KM201", Context.MODEL, True)
    assert apply_to_text(code) == (
        "from keras import ops\n\n\ndef scale(x):\n    return ops.square(x)\n"
    )


def test_in_a_data_map_of_a_module_without_tensorflow_nothing_imports_it() -> None:
    code = (
        "from keras import backend as K\n\n\ndef scale(x):\n    return K.square(x)\n"
        + MAPPED.format(name="scale")
    )
    (finding,) = km108(code)
    assert finding.context is Context.DATA and is_manual(finding)
    assert "does not import `tensorflow`" in finding.message
    assert apply_to_text(code) == code


def test_in_a_training_loop_a_backend_call_becomes_keras_ops() -> None:
    code = (
        "import tensorflow as tf\nfrom keras import backend as K\n\n\n"
        "def step(model, x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = K.sum(K.square(model(x)))\n"
        "    return tape.gradient(loss, model.trainable_variables)\n"
    )
    found = km108(code)
    assert {f.context for f in found} == {Context.TRAINING_LOOP} and len(found) == 2
    assert all(f.fixable and "`keras.ops." in f.message for f in found)
    fixed = apply_to_text(code)
    assert "loss = ops.sum(ops.square(model(x)))" in fixed and "K." not in fixed


def test_a_call_whose_arguments_cannot_be_matched_stays_manual() -> None:
    code = (
        "import tensorflow as tf\nfrom keras import backend as K\n\n\n"
        "def total(args):\n    return K.sum(*args)\n" + MAPPED.format(name="total")
    )
    (finding,) = km108(code)
    assert is_manual(finding) and "*args" in finding.message and "tf.reduce_sum" in finding.message
    assert apply_to_text(code) == code


def test_functions_the_table_keeps_manual_say_why() -> None:
    code = (
        "import tensorflow as tf\nfrom keras import backend as K\n\n\n"
        "def stats(x, mask):\n    return K.mean(mask), K.clip(x, 0, None)\n"
        + MAPPED.format(name="stats")
    )
    found = {f.symbol: f for f in km108(code)}
    assert all(is_manual(f) for f in found.values())
    assert "casts a boolean tensor" in found["K.mean"].message
    assert "infinite bound" in found["K.clip"].message
    assert apply_to_text(code) == code


def test_int_shape_calls_the_keras2_helper_outside_model_code_too() -> None:
    """K.int_shape returns None for a tensor of unknown rank where `tuple(x.shape)`
    raises: the helper keeps that, in plain Python (TensorFlow code stays TensorFlow;
    tests/rules/test_keras2_helpers_backends.py proves it against tf_keras)."""
    code = (
        "import tensorflow as tf\nfrom keras import backend as K\n\n\n"
        "def size(x):\n    return K.int_shape(x)[1]\n\n\ntf.data.Dataset.range(3).map(size)\n"
    )
    (found,) = km108(code)
    assert found.fix is not None and "`int_shape` from `_keras2_compat.py`" in found.message
    assert apply_to_text(code) == (
        "import tensorflow as tf\n\nfrom _keras2_compat import int_shape\n\n\n"
        "def size(x):\n    return int_shape(x)[1]\n\n\ntf.data.Dataset.range(3).map(size)\n"
    )


def test_a_function_used_without_a_call_stays_manual() -> None:
    code = (
        "import tensorflow as tf\nfrom keras import backend as K\n\n\n"
        "def pipeline():\n    return tf.data.Dataset.range(3).map(K.square)\n"
    )
    (finding,) = km108(code)
    assert is_manual(finding)
    assert apply_to_text(code) == code


def test_through_tf_keras_the_message_names_tensorflow_2_16() -> None:
    code = DATA_MAP.format(imports="", k="tf.keras.backend")
    findings = km108(code)
    assert len(findings) == 3 and "TensorFlow 2.16+" in findings[0].message


def test_imports_that_keep_keras2_are_not_reported() -> None:
    for imports in (
        "from tf_keras import backend as K",
        "from tensorflow.python.keras import backend as K",
    ):
        assert km108(DATA_MAP.format(imports=imports, k="K")) == [], imports


def test_names_keras3_keeps_and_names_other_rules_own_are_not_reported() -> None:
    code = (
        "from keras import backend as K\n\n\n"
        "def report(x):\n"
        "    print(K.floatx(), K.epsilon())\n"
        "    return K.eval(x)\n"
    )
    rules = sorted(f.rule for f in scan_text(code))
    assert "KM108" not in rules and "KM507" in rules  # K.eval: KM507 says more


def test_model_code_is_left_to_the_ops_rules() -> None:
    code = (
        "import keras\nfrom keras import backend as K\n\n\n"
        "class Scale(keras.layers.Layer):\n"
        "    def call(self, x):\n"
        "        return K.cast(x, 'float32')\n"
    )
    rules = [f.rule for f in scan_text(code)]
    assert "KM108" not in rules and "KM201" in rules


def test_a_function_the_project_assigns_onto_the_backend_is_a_note(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "backend.py").write_text(
        "import tensorflow as tf\nfrom keras import backend as K\n\n\n"
        "def where(cond, x, y):\n    return tf.where(cond, x, y)\n\n\n"
        "K.where = where\n"
    )
    (package / "steps.py").write_text(
        "from pkg.backend import K\n\n\n"
        "def clip(x):\n    return K.where(x > 0, x, K.zeros_like(x))\n" + MAPPED.format(name="clip")
    )
    found = {
        f.symbol: f for f in run_repo(tmp_path).findings if f.rule == "KM108" and "steps" in f.path
    }
    assert (
        found["K.where"].severity is Severity.INFO and "pkg/backend.py" in found["K.where"].message
    )
    assert found["K.zeros_like"].severity is Severity.WARNING


def test_once_the_calls_are_tensorflow_the_import_swap_follows_in_the_same_apply() -> None:
    code = (
        "import tensorflow as tf\nfrom tensorflow.keras import backend as K\n\n\n"
        "def normalize(image):\n    return K.cast(image, K.floatx()) + K.epsilon()\n"
        + MAPPED.format(name="normalize")
    )
    (swap,) = [f for f in scan_text(code) if f.rule == "KM102"]
    assert swap.fixed_later  # scan counts it as fixable: it waits only for KM108's fix
    assert apply_to_text(code) == (
        "import tensorflow as tf\nfrom keras import backend as K\n\n\n"
        "def normalize(image):\n    return tf.cast(image, K.floatx()) + K.epsilon()\n"
        + MAPPED.format(name="normalize")
    )


def test_where_tf_names_tensorflow_compat_v1_the_call_is_spelled_in_full() -> None:
    code = (
        "import tensorflow.compat.v1 as tf\nfrom keras import backend as K\n\n\n"
        "def total(x):\n    return K.sum(x, axis=0), tf.placeholder\n" + MAPPED.format(name="total")
    )
    assert apply_to_text(code) == (
        "import tensorflow\nimport tensorflow.compat.v1 as tf\n\n\n"
        "def total(x):\n    return tensorflow.reduce_sum(x, axis=0), tf.placeholder\n"
        + MAPPED.format(name="total")
    )


def test_a_function_the_module_swaps_in_inside_a_method_keeps_its_calls() -> None:
    # bert4keras's optimizers wrap `K.update` around a parent's `get_updates`: rewriting
    # the parent's calls to `tf.compat.v1.assign` would skip the wrapper. Data code here
    # (a map), where the TensorFlow form is the rewrite.
    code = (
        "import tensorflow as tf\nfrom keras import backend as K\n\n\n"
        "def get_updates(m, g):\n"
        "    return [K.update(m, m - g), K.square(g)]\n\n\n"
        "def decayed(m, g):\n"
        "    old_update = K.update\n"
        "    K.update = lambda x, new_x: old_update(x, new_x * 0.99)\n"
        "    updates = get_updates(m, g)\n"
        "    K.update = old_update\n"
        "    return updates\n" + MAPPED.format(name="decayed")
    )
    call = next(f for f in km108(code) if f.symbol == "K.update" and f.span.line == 6)
    assert is_manual(call) and "assigns a function of its own" in call.message
    assert apply_to_text(code) == code.replace("K.square(g)", "tf.square(g)")


def test_in_model_code_the_same_classes_get_keras_ops() -> None:
    """The same optimizer classes as plain code of a Keras module: model code, so
    `K.square` becomes `ops.square` and `K.update` is KM202's (manual)."""
    code = (
        "from keras import backend as K\n\n\n"
        "class Base:\n"
        "    def get_updates(self, m, g):\n"
        "        return [K.update(m, m - g), K.square(g)]\n"
    )
    rules = {f.symbol: f.rule for f in scan_text(code)}
    assert rules == {"K.update": "KM202", "K.square": "KM201"}
    assert "ops.square(g)" in apply_to_text(code)
