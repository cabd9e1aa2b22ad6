"""KM203 in undecided code: a tf.Variable in a helper that a layer and a tf.data map
both reach is reported as a warning (why, or its Keras 3 form), never rewritten (#30)."""

from __future__ import annotations

import textwrap

from kmigrate.api import apply_to_text, scan_text

_SHARED = textwrap.dedent(
    """
    import tensorflow as tf
    from tensorflow import keras


    {helper}


    class Offset(keras.layers.Layer):
        def call(self, x):
            return x + offsets(4)


    def pipeline(dataset):
        return dataset.map(offsets)
    """
)


def _km203(code: str) -> list:
    return [f for f in scan_text(code) if f["rule"] == "KM203"]


def test_a_variable_in_undecided_code_is_a_warning_that_says_why() -> None:
    helper = "def offsets(n):\n    return tf.Variable(tf.zeros((n,)), trainable=False)"
    code = _SHARED.format(helper=helper)
    (finding,) = _km203(code)
    assert finding["context"] == "undecided"
    assert finding["severity"] == "warning" and not finding["fixable"]
    message = finding["message"]
    assert "Keras 3 tracks (and saves) only state created with self.add_weight" in message
    assert "undecided, not rewritten: `offsets`" in message
    assert "TensorFlow runs it as it is" not in message
    assert "tf.Variable(" in apply_to_text(code)
