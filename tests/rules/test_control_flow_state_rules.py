"""Control-flow calls given TensorFlow-only state stay manual (KM202): renamed to
keras.ops they would run only on TensorFlow. The same calls with tensors only are still
rewritten (KM201; they run on jax and torch: tests/rules/test_control_flow_state_backends.py)."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text


def _layer(*lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        "class L(keras.layers.Layer):\n"
        "    def step(self, i, acc):\n"
        "        return i + 1, acc.write(i, i)\n\n"
        f"    def call(self, x):\n        n = tf.shape(x)[1]\n{body}"
    )


CONTROL = ("tf.while_loop", "tf.cond", "tf.map_fn", "tf.scan", "tf.vectorized_map")
ARRAY = "ta = tf.TensorArray(tf.float32, size=n)"
REFUSED = {
    "loop variable": (
        ARRAY,
        "_, ta = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a.write(i, x[:, i])), "
        "[0, ta])",
        "return ta.stack()",
    ),
    "loop variables through a name": (
        ARRAY,
        "state = (0, ta)",
        "_, ta = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a.write(i, x[:, i])), "
        "state)",
        "return ta.stack()",
    ),
    "nested body writing a captured array": (
        ARRAY,
        "def body(i):",
        "    ta.write(i, x[:, i]).mark_used()",
        "    return i + 1",
        "tf.while_loop(lambda i: i < n, body, [0])",
        "return ta.stack()",
    ),
    "method body": (
        ARRAY,
        "_, ta = tf.while_loop(lambda i, a: i < n, self.step, (0, ta))",
        "return ta.stack()",
    ),
    "cond returning arrays": (
        ARRAY,
        "ta = tf.cond(n > 2, lambda: ta.write(0, x[:, 0]), lambda: ta)",
        "return ta.stack()",
    ),
    "map_fn building an array": (
        "def f(r):",
        "    a = tf.TensorArray(tf.float32, size=2)",
        "    return a.write(0, r).write(1, r).stack()",
        "return tf.map_fn(f, x)",
    ),
    "ragged output signature": (
        "return tf.map_fn(lambda r: r, x, "
        "fn_output_signature=tf.RaggedTensorSpec(shape=[None], dtype=tf.float32))",
    ),
    "scan over a sparse tensor": (
        "sp = tf.SparseTensor(indices=[[0, 0]], values=[1.0], dense_shape=[3, 4])",
        "return tf.scan(lambda a, r: a + r, sp, initializer=x[0])",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_control_flow_given_tf_state_stays_manual(case: str) -> None:
    source = _layer(*REFUSED[case])
    findings = [f for f in scan_text(source) if f.symbol in CONTROL]
    assert [f.rule for f in findings] == ["KM202"], [(f.rule, f.message) for f in findings]
    assert "TensorFlow-only state" in findings[0].message, findings[0].message
    assert "carries only on TensorFlow" in findings[0].message
    assert findings[0].symbol in apply_to_text(source)


def test_the_message_names_the_state_and_what_to_write() -> None:
    (finding,) = [
        f for f in scan_text(_layer(*REFUSED["loop variable"])) if f.symbol == "tf.while_loop"
    ]
    assert "`ta` (a loop variable or argument, line 12), a tf.TensorArray" in finding.message
    assert "keras.ops.while_loop" in finding.message
    assert "ops.stack" in finding.message and "ops.scan" in finding.message


KEPT = {
    # the stacked array is a tensor: no state left
    "stacked array captured": (
        "ta = tf.TensorArray(tf.float32, size=3)",
        "for i in range(3):",
        "    ta = ta.write(i, x[:, i])",
        "y = ta.stack()",
        "return tf.cond(n > 2, lambda: y, lambda: -y)",
    ),
    # a lambda's own parameter named like the array is its own
    "parameter named like the array": (
        "ta = tf.TensorArray(tf.float32, size=3)",
        "for i in range(3):",
        "    ta = ta.write(i, x[:, i])",
        "y = ta.stack()",
        "return tf.map_fn(lambda ta: ta * 2.0, y)",
    ),
    "tensors only": (
        "_, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 2.0), (0, x))",
        "return s",
    ),
}


@pytest.mark.parametrize("case", sorted(KEPT))
def test_control_flow_with_tensors_is_still_rewritten(case: str) -> None:
    out = apply_to_text(_layer(*KEPT[case]))
    for symbol in ("tf.while_loop", "tf.cond", "tf.map_fn"):
        assert symbol not in out, out


def test_state_bound_later_or_stored_in_a_container_taints_nothing_before() -> None:
    """Found on keras-cv's Mosaic: a ragged map result bound after the call, then stored
    into a dict the inputs came from, once made every name of the function 'ragged'."""
    source = _layer(
        "inputs = {'x': x}",
        "images = inputs['x']",
        "centers = images * 2.0",
        "images = tf.vectorized_map(lambda i: images[i] + centers[i], tf.range(3))",
        "boxes = tf.map_fn(lambda i: images[i], tf.range(3), "
        "fn_output_signature=tf.RaggedTensorSpec(shape=[None], dtype=tf.float32))",
        "inputs['boxes'] = boxes",
        "return images",
    )
    found = {f.symbol: f for f in scan_text(source) if f.symbol in CONTROL}
    assert found["tf.vectorized_map"].rule == "KM201", found["tf.vectorized_map"].message
    assert found["tf.map_fn"].rule == "KM202"
    assert "builds a tf.RaggedTensorSpec" in found["tf.map_fn"].message
