"""The call a fix's edit is at, as the TensorFlow-free prediction finds it
(``report/footprint.py``): from the tree index's list of calls when the scan has one
(a walk of the whole tree per file cost a tenth of a scan), exactly the call a
breadth-first walk finds last at that place, also where calls share a place."""

from __future__ import annotations

import ast
import textwrap

from kmigrate.engine.tree_index import TreeIndex
from kmigrate.report.footprint import _CallsAt

_TEXT = textwrap.dedent(
    """
    import tensorflow as tf
    x = tf.cast(tf.ones(3), tf.float32)
    y = make(tf.int32)(tf.zeros(2))(z)        # three calls start here
    w = model.layer(a).output.get(b).numpy()  # a chain: calls sharing the start
    s = f"{tf.shape(x)} é {tf.rank(x)}"         # a non-ASCII line
    def f():
        return [g(i) for i in h(tf.range(3))]
    """
)


def test_the_index_finds_the_walks_call_at_every_place() -> None:
    tree = ast.parse(_TEXT)
    lines = _TEXT.splitlines()
    walked = _CallsAt(tree, lines, None)
    indexed = _CallsAt(tree, lines, TreeIndex(tree))
    places = {walked._place(n) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    places |= {(line, column) for line, column in places for column in (column + 1, 0)}
    assert len(places) > 12
    for place in sorted(places):
        assert indexed.get(place) is walked.get(place), place
    shared = walked._place(ast.parse(_TEXT).body[2].value)
    assert ast.unparse(indexed.get(shared)) == "make(tf.int32)"  # the innermost
