"""``name = tf.stack(values)`` read only as a shape becomes ``tuple(values)`` (KM201); read
as a tensor anywhere, or returned to a caller that may read it, the shape stays manual
(KM202). The rewrite runs on tensorflow, jax and torch in
tests/rules/test_stacked_shape_backends.py."""

from __future__ import annotations

import pytest

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text

HEAD = "import tensorflow as tf\nfrom tensorflow import keras\n\n\nclass L(keras.layers.Layer):\n"
SPLIT = (
    "    def {name}(self, x):\n"
    "        dims = tf.shape(x)\n"
    "        shape = [dims[i] for i in range(4)]\n"
    "        shape[-1] = x.shape[-1] // 2\n"
    "        shape.insert(-1, 2)\n"
    "        if x.shape[-1] > 2:\n"
    "            shape = tf.stack(shape)\n"
    "            {use}\n"
    "            return tf.reshape(x, shape), shape\n"
    "        else:\n"
    "            return x, shape\n\n"
)


def _layer(use: str = "pass", name: str = "_split", caller: str = "y, _ = self._split(x)") -> str:
    return (
        HEAD
        + SPLIT.format(name=name, use=use)
        + f"    def call(self, x):\n        {caller}\n        return y\n"
    )


def _stack_and_reshape(source: str) -> tuple[list[str], str]:
    found = [f"{f.rule} {f.symbol}" for f in scan_text(source)]
    return found, apply_to_text(source)


@pytest.mark.parametrize(
    "caller",
    ["y, _ = self._split(x)", "y, unused = self._split(x)"],
)
def test_a_stack_read_only_as_a_shape_and_returned_unread_becomes_a_tuple(caller: str) -> None:
    found, out = _stack_and_reshape(_layer(caller=caller))
    assert "KM202 tf.reshape" not in found, found
    assert "shape = tuple(shape)\n" in out and "ops.reshape(x, shape), shape" in out, out


def test_a_literal_list_stacked_into_a_name_becomes_the_tuple() -> None:
    source = HEAD + (
        "    def call(self, x):\n"
        "        shape = tf.stack([tf.shape(x)[0], -1])\n"
        "        return tf.reshape(x, shape) + tf.zeros(shape)\n"
    )
    out = apply_to_text(source)
    assert "        shape = (keras.ops.shape(x)[0], -1)\n" in out, out
    assert "tf." not in out, out


REFUSED = {
    "read as a tensor": {"use": "size = tf.reduce_prod(shape)"},
    "the returned shape is read": {
        "caller": "y, s = self._split(x)\n        y = y + tf.cast(s[0], y.dtype)"
    },
    "a public method": {"name": "split", "caller": "y, _ = self.split(x)"},
    "the method passed as a value": {"caller": "y, _ = self._split(x)\n        f = self._split"},
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_stack_read_otherwise_keeps_the_reshape_manual(case: str) -> None:
    found, out = _stack_and_reshape(_layer(**REFUSED[case]))
    assert "KM202 tf.reshape" in found, found
    assert "tuple(shape)" not in out and "tf.reshape(x, shape)" in out, out


def test_a_stacked_tensor_name_is_not_turned_into_a_tuple() -> None:
    source = HEAD + (
        "    def call(self, x, dims):\n"
        "        shape = tf.stack(dims)\n"
        "        return tf.reshape(x, shape)\n"
    )
    assert "tuple(dims)" not in apply_to_text(source)
