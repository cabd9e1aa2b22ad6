"""``tf.cond`` whose branches change state stays manual (KM202) with what to write instead;
a predicate that is a Keras weight is passed as its value (rules/common/catalog/cond_branches.py;
the rewrites run on tensorflow, jax and torch in tests/rules/test_cond_branches_backends.py)."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def _layer(*lines: str, build: tuple[str, ...] = (), methods: tuple[str, ...] = ()) -> str:
    built = "".join(f"        {line}\n" for line in build) or "        pass\n"
    extra = "".join(f"    {line}\n" for line in methods)
    body = "".join(f"        {line}\n" for line in lines)
    return (
        "import tensorflow as tf\nfrom tensorflow import keras\n"
        "from tensorflow.keras import backend as K\n\n\n"
        "class L(keras.layers.Layer):\n"
        f"    def build(self, input_shape):\n{built}\n{extra}\n"
        f"    def call(self, x):\n{body}"
    )


WEIGHTS = (
    'self.g = self.add_weight(name="g", shape=(3,), initializer="ones")',
    'self.flag = self.add_weight(name="flag", shape=(), initializer="zeros", dtype=tf.bool, '
    "trainable=False)",
)
# (call lines, class methods, what the message names)
REFUSED = {
    "one-time init under control_dependencies (WeightNormalization)": (
        (
            "def _do_nothing():",
            "    return tf.identity(self.g)",
            "def _update_weights():",
            "    with tf.control_dependencies(self._initialize_weights()):",
            "        return tf.identity(self.g)",
            "g = tf.cond(self.flag, _do_nothing, _update_weights)",
            "return x * g",
        ),
        (
            "def _initialize_weights(self):",
            "    return [self.g.assign(tf.ones_like(self.g) * 2.0), self.flag.assign(True)]",
        ),
        "runs `tf.control_dependencies`",
    ),
    "assign in a lambda": (
        ("return x * tf.cond(self.flag, lambda: self.g, lambda: self.g.assign(self.g * 2.0))",),
        (),
        "updates a variable (`self.g.assign`",
    ),
    "assign_add two calls deep in methods": (
        ("return x * tf.cond(tf.reduce_sum(x) > 0, self._grow, lambda: self.g)",),
        (
            "def _grow(self):",
            "    return self._bump() * 1.0",
            "def _bump(self):",
            "    self.g.assign_add(tf.ones_like(self.g))",
            "    return self.g",
        ),
        "updates a variable (`self.g.assign_add`",
    ),
    "K.update in a nested function": (
        (
            "def bump():",
            "    K.update(self.g, self.g * 2.0)",
            "    return self.g * 1.0",
            "return x * tf.cond(tf.reduce_sum(x) > 0, bump, lambda: self.g)",
        ),
        (),
        "runs `K.update`",
    ),
    "a loss added in a branch": (
        (
            "def more():",
            "    self.add_loss(tf.reduce_sum(x))",
            "    return x",
            "return tf.cond(tf.reduce_sum(x) > 0, more, lambda: x)",
        ),
        (),
        "records layer state (`self.add_loss`",
    ),
    "an attribute set in a branch": (
        (
            "def more():",
            "    self.seen = True",
            "    return x",
            "return tf.cond(tf.reduce_sum(x) > 0, more, lambda: x)",
        ),
        (),
        "sets `self.seen`",
    ),
    "an assertion in a branch": (
        (
            "check = lambda: tf.debugging.assert_equal(x, x)",
            "return tf.cond(tf.reduce_sum(x) > 0, lambda: x, check)",
        ),
        (),
        "runs `tf.debugging.assert_equal`",
    ),
}


def _refused(source: str) -> str:
    """The message of the one KM202 finding at the tf.cond of ``source``, which apply
    leaves as it is."""
    findings = [f for f in scan_text(source) if f.rule == "KM202" and f.symbol == "tf.cond"]
    assert len(findings) == 1, [(f.rule, f.symbol, f.message) for f in scan_text(source)]
    assert "ops.cond(" not in apply_to_text(source)
    return findings[0].message


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_cond_whose_branch_changes_state_is_reported_and_left(case: str) -> None:
    lines, methods, named = REFUSED[case]
    message = _refused(_layer(*lines, build=WEIGHTS, methods=methods))
    assert named in message and "branches must be pure" in message, message
    assert "keras.ops.where" in message and "build()" in message, message


def test_a_weight_predicate_is_passed_as_its_value() -> None:
    source = _layer(
        "return x * tf.cond(self.flag, lambda: self.g * 2.0, lambda: self.g - 3.0)",
        build=WEIGHTS,
    )
    assert not [f for f in scan_text(source) if f.rule == "KM202"]
    out = apply_to_text(source)
    assert "ops.cond(self.flag.value, lambda: self.g * 2.0, lambda: self.g - 3.0)" in out, out


def test_a_predicate_of_another_variable_kind_is_reported() -> None:
    """A flag from tf.Variable in call (no layer weight KM2xx turns it into) stays."""
    source = (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        "class L(keras.layers.Layer):\n"
        "    def __init__(self, flag, **kwargs):\n"
        "        super().__init__(**kwargs)\n"
        "        self.flag = flag\n\n"
        "    def call(self, x):\n"
        "        self.state = tf.Variable(False)\n"
        "        return tf.cond(self.state, lambda: x * 2.0, lambda: x)\n"
    )
    findings = [f for f in scan_text(source) if f.rule == "KM202" and f.symbol == "tf.cond"]
    assert len(findings) == 1, [(f.rule, f.symbol) for f in scan_text(source)]
    assert "is a variable made by `tf.Variable`" in findings[0].message
    assert "self.state.value" not in apply_to_text(source)


def test_pure_branches_and_plain_predicates_are_rewritten_as_before() -> None:
    source = _layer(
        "y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)",
        "return tf.cond(self.flag_given, lambda: y, lambda: -y)",
        build=("self.flag_given = True",),
    )
    out = apply_to_text(source).replace("keras.ops.", "ops.")
    assert "ops.cond(ops.sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)" in out, out
    assert "ops.cond(self.flag_given, lambda: y, lambda: -y)" in out, out


STRUCTURES = {
    "tuples of different lengths": (
        "return tf.cond(tf.reduce_sum(x) > 0, lambda: (x, x), lambda: (x,))[0]",
    ),
    "a tuple and one tensor, through a def": (
        "def pair():",
        "    return x, x * 2.0",
        "return tf.cond(tf.reduce_sum(x) > 0, pair, lambda: x - 1.0)",
    ),
}


@pytest.mark.parametrize("case", sorted(STRUCTURES))
def test_branches_of_different_structures_are_reported_and_left(case: str) -> None:
    message = _refused(_layer(*STRUCTURES[case], build=WEIGHTS))
    assert "return different structures" in message, message


def test_branches_of_one_structure_or_unknown_ones_are_rewritten() -> None:
    source = _layer(
        "a = tf.cond(tf.reduce_sum(x) > 0, lambda: (x, x - 1.0), lambda: (x * 2.0, x))",
        "b = tf.cond(tf.reduce_sum(x) > 0, lambda: x - 1.0, lambda: -x)",
        "c = tf.cond(tf.reduce_sum(x) > 0, lambda: x + x, lambda: (x, x)[0])",
        "return a[0] + b + c",
        build=WEIGHTS,
    )
    assert not [f for f in scan_text(source) if f.rule == "KM202"]
    assert apply_to_text(source).count("ops.cond(") == 3
