"""Fingerprints: what keeps a baselined finding baselined, and what makes it new.

A fingerprint is path + rule + symbol + enclosing class/function + the node's
``ast.dump`` + its occurrence number among identical findings
(``kmigrate.engine.analyze.fingerprint_findings``). docs/precommit.md describes the same
behaviour for users; these tests are its proof.
"""

from __future__ import annotations

import textwrap

from kmigrate.run.runner import scan_text

# KM301 (tf.random.normal in a layer) is a call-site finding: its fingerprint
# covers the whole call, arguments included.
LAYER = textwrap.dedent(
    '''
    import tensorflow as tf


    class Noise(tf.keras.layers.Layer):
        """Adds Gaussian noise."""

        def call(self, x):
            scale = 0.1
            return x + tf.random.normal(tf.shape(x), stddev=scale)
    '''
).lstrip()
CALL = "tf.random.normal(tf.shape(x), stddev=scale)"


def fingerprints(text: str, path: str = "model.py") -> list[str]:
    """Fingerprints of the ``tf.random.normal`` findings, in source order."""
    findings = scan_text(text, select=["KM3"], path=path)
    return [f.fingerprint for f in findings if f.symbol == "tf.random.normal"]


def test_the_example_has_one_finding_with_a_fingerprint() -> None:
    (fingerprint,) = fingerprints(LAYER)
    assert len(fingerprint) == 16 and int(fingerprint, 16) >= 0


def test_lines_inserted_above_keep_the_fingerprint() -> None:
    shifted = LAYER.replace("import tensorflow as tf\n", "import os\nimport tensorflow as tf\n\n\n")
    shifted = shifted.replace(
        '"""Adds Gaussian noise."""', '"""Adds\n\n    Gaussian noise.\n    """'
    )
    assert fingerprints(shifted) == fingerprints(LAYER)


def test_reformatting_the_call_keeps_the_fingerprint() -> None:
    reformatted = LAYER.replace(
        CALL,
        "tf.random.normal(  # the noise\n"
        "            tf.shape( x ),\n"
        "            stddev = scale,   # keyword spacing\n"
        "        )",
    )
    assert reformatted != LAYER
    assert fingerprints(reformatted) == fingerprints(LAYER)


def test_moving_the_call_within_the_function_keeps_the_fingerprint() -> None:
    moved = LAYER.replace(
        "        scale = 0.1\n        return x + " + CALL,
        "        scale = 0.1\n        noise = "
        + CALL
        + "\n        y = x * 2\n        return y + noise",
    )
    assert fingerprints(moved) == fingerprints(LAYER)


def test_a_second_identical_call_is_a_new_fingerprint() -> None:
    (old,) = fingerprints(LAYER)
    doubled = LAYER.replace("return x + ", "x = x + " + CALL + "\n        return x + ")
    first, second = fingerprints(doubled)
    assert first != second
    assert old in {first, second}, "the baselined one stays baselined"


def test_removing_one_of_two_identical_calls_leaves_a_baselined_fingerprint() -> None:
    doubled = LAYER.replace("return x + ", "x = x + " + CALL + "\n        return x + ")
    assert set(fingerprints(LAYER)) <= set(fingerprints(doubled))


def test_renaming_the_enclosing_function_changes_the_fingerprint() -> None:
    renamed = LAYER.replace("def call(self, x):", "def forward(self, x):")
    assert fingerprints(renamed) != fingerprints(LAYER)


def test_renaming_the_enclosing_class_changes_the_fingerprint() -> None:
    renamed = LAYER.replace("class Noise(", "class GaussianNoise(")
    assert fingerprints(renamed) != fingerprints(LAYER)


def test_editing_the_call_itself_changes_the_fingerprint() -> None:
    edited = LAYER.replace("stddev=scale", "stddev=scale * 2")
    assert fingerprints(edited) != fingerprints(LAYER)


def test_quote_style_and_parentheses_do_not_matter() -> None:
    text = LAYER.replace(CALL, "tf.random.normal(tf.shape(x), stddev=scale, name='n')")
    other = LAYER.replace(CALL, '(tf.random.normal(tf.shape(x), stddev=scale, name="n"))')
    assert fingerprints(text) == fingerprints(other)


def test_the_path_is_part_of_the_fingerprint() -> None:
    assert fingerprints(LAYER, "a/model.py") != fingerprints(LAYER, "b/model.py")


def test_other_findings_in_the_file_do_not_shift_occurrence_numbers() -> None:
    before = fingerprints(LAYER)
    extra = LAYER + "\n\ndef make():\n    return tf.random.normal((2, 2))\n"
    assert fingerprints(extra)[0] == before[0]
