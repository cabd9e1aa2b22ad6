"""No rewrite moves a use of a Keras name whose Keras 3 call computes something else
(`rules/common/call_differences.py`: Lion's default rate, sparse_categorical_crossentropy's
fourth parameter) onto Keras 3, whichever route moves it: KM101's rename of `tf.keras.X`
and of module values, and the import swaps of KM102 (`tensorflow.keras`,
`tensorflow.python.keras`, TensorFlow 2's `tf.optimizers`), KM103 (standalone Keras 2
module paths), KM104 (`tf_keras`) and KM106 (`keras_core`). Each is reported as manual and
`apply` leaves the module as it is; the same modules whose calls show what Keras 3 needs
are rewritten."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text

_LION = "write `learning_rate=1e-4`"
_AXIS = "pass `axis=` by keyword"
_UNCALLED = "without a call whose arguments can be read"

# (rule, module, what the finding says: the use and what to write)
REFUSED = [
    (
        "KM104",
        "import tf_keras as keras\n\nopt = keras.optimizers.Lion()\n",
        ["`keras.optimizers.Lion` (line 3)", _LION],
    ),
    (
        "KM104",
        "from tf_keras import optimizers\n\nopt = optimizers.Lion(beta_1=0.8)\n",
        ["`optimizers.Lion` (line 3)", _LION],
    ),
    ("KM104", "from tf_keras.optimizers import Lion\n\nopt = Lion()\n", ["`Lion` (line 3)", _LION]),
    (
        "KM104",
        "from tf_keras.losses import sparse_categorical_crossentropy as scce\n\n"
        "loss = scce(y, p, False, 1)\n",
        ["`scce` (line 3)", "`keras.losses.sparse_categorical_crossentropy`", _AXIS],
    ),
    (
        "KM104",
        "import tf_keras as keras\n\n"
        "a = keras.metrics.sparse_categorical_crossentropy(*args)\n"
        "b = keras.losses.sparse_categorical_crossentropy(y, p, True, 0)\n",
        ["(line 3, and 1 more such use)", _AXIS],
    ),
    (  # passed on as a class: the arguments of its call are not here
        "KM104",
        "import tf_keras as keras\n\nopt_cls = keras.optimizers.Lion\nopt = opt_cls()\n",
        ["`keras.optimizers.Lion` (line 3)", _UNCALLED, _LION],
    ),
    (
        "KM104",
        "import tf_keras as keras\n\nloss_fn = keras.losses.sparse_categorical_crossentropy\n",
        [_UNCALLED, _AXIS],
    ),
    ("KM102", "from tensorflow.python import keras\n\nopt = keras.optimizers.Lion()\n", [_LION]),
    (
        "KM102",
        "import tensorflow.python.keras as tfk\n\n"
        "loss = tfk.losses.sparse_categorical_crossentropy(y, p, False, 1)\n",
        ["`tfk.losses.sparse_categorical_crossentropy` (line 3)", _AXIS],
    ),
    ("KM102", "from tensorflow import keras\n\nopt = keras.optimizers.Lion()\n", [_LION]),
    ("KM102", "from tensorflow.keras.optimizers import Lion\n\nopt = Lion()\n", [_LION]),
    ("KM102", "from tensorflow.keras import optimizers\n\nopt = optimizers.Lion()\n", [_LION]),
    ("KM102", "from tensorflow import optimizers\n\nopt = optimizers.Lion()\n", [_LION]),
    (
        "KM101",
        "import tensorflow as tf\n\nO = tf.keras.optimizers\nopt = O.Lion()\n",
        ["`O.Lion` (line 4)", _LION],
    ),
    (
        "KM101",
        "import tensorflow as tf\n\nK = tf.keras\nopt = K.optimizers.Lion()\n",
        ["`K.optimizers.Lion` (line 4)", _LION],
    ),
    (
        "KM101",
        "import tensorflow as tf\n\nopt = tf.keras.optimizers.experimental.Lion()\n",
        [_LION],
    ),
    (
        "KM101",
        "import tensorflow as tf\n\n\nclass Slow(tf.optimizers.Lion):\n    pass\n",
        [_UNCALLED, _LION],
    ),
    (
        "KM103",
        "from keras.optimizers.lion import Lion\n\nopt = Lion()\n",
        ["`from keras.optimizers import Lion` in Keras 3", "`Lion` (line 3)", _LION],
    ),
    (
        "KM103",
        "import keras\n\nopt = keras.optimizers.optimizer_experimental.lion.Lion()\n",
        [_LION],
    ),
    (
        "KM106",
        "import keras_core as keras\n\n"
        "loss = keras.losses.sparse_categorical_crossentropy(y, p, False, 1)\n",
        ["(line 3)", "keras_core before 0.1.6", _AXIS],
    ),
    ("KM104", "from tf_keras.optimizers import *\n\nopt = Lion()\n", ["star import"]),
]


@pytest.mark.parametrize(("rule", "text", "said"), REFUSED)
def test_a_use_whose_keras3_call_differs_keeps_the_module_as_it_is(rule, text, said) -> None:
    findings = [f for f in scan_text(text, select=["KM1"]) if f.rule == rule]
    assert findings and not any(f.fixable for f in findings)
    first = min(findings, key=lambda f: f.span.line)  # KM103 also reports the use itself
    for words in said:
        assert words in first.message, first.message
    assert apply_to_text(text, select=["KM1"]) == text


SWAPPED = [
    (
        "from tf_keras.optimizers import Lion\n\nopt = Lion(learning_rate=1e-4)\nlo = Lion(3e-5)\n",
        "from keras.optimizers import Lion\n\nopt = Lion(learning_rate=1e-4)\nlo = Lion(3e-5)\n",
    ),
    (
        "import tf_keras as keras\n\n"
        "loss = keras.losses.sparse_categorical_crossentropy(y, p, False, axis=1)\n"
        "lion = isinstance(opt, keras.optimizers.Lion)\n",
        "import keras\n\n"
        "loss = keras.losses.sparse_categorical_crossentropy(y, p, False, axis=1)\n"
        "lion = isinstance(opt, keras.optimizers.Lion)\n",
    ),
    (  # Keras 2 knows no "lion": its `optimizers.get` raises, so no working code changes
        'import tf_keras as keras\n\nopt = keras.optimizers.get("lion")\n',
        'import keras\n\nopt = keras.optimizers.get("lion")\n',
    ),
    (  # Keras calls a loss or a metric with two arguments
        "import tf_keras as keras\n\n"
        "model.compile(loss=keras.losses.sparse_categorical_crossentropy, "
        "metrics=[keras.metrics.sparse_categorical_crossentropy])\n",
        "import keras\n\n"
        "model.compile(loss=keras.losses.sparse_categorical_crossentropy, "
        "metrics=[keras.metrics.sparse_categorical_crossentropy])\n",
    ),
    (  # keras_core's Lion defaulted to 1e-3 in every release that had it
        "import keras_core as keras\n\nopt = keras.optimizers.Lion()\n",
        "import keras\n\nopt = keras.optimizers.Lion()\n",
    ),
    (
        "import tensorflow as tf\n\nO = tf.keras.optimizers\nopt = O.Lion(learning_rate=1e-4)\n",
        "import keras\n\nO = keras.optimizers\nopt = O.Lion(learning_rate=1e-4)\n",
    ),
]


@pytest.mark.parametrize(("before", "after"), SWAPPED)
def test_a_call_that_shows_what_keras3_needs_is_swapped(before, after) -> None:
    findings = scan_text(before, select=["KM1"])
    assert findings and all(f.fixable for f in findings)
    assert apply_to_text(before, select=["KM1"]) == after


def test_lion_built_with_lr_is_left_whole() -> None:
    """Keras 2's Lion ignored `lr=` (1e-4 it was): KM502 does not turn it into the rate,
    so the swap is not unblocked by a later round either, and scan and apply agree."""
    text = "import tf_keras as keras\n\nopt = keras.optimizers.Lion(lr=3e-4, jit_compile=False)\n"
    findings = scan_text(text)
    assert {f.rule for f in findings} >= {"KM104", "KM502"}
    assert not any(f.fixable for f in findings)
    assert apply_to_text(text) == text
