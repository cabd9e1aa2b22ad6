"""Fast tests of the ops catalog (KM2xx): the table's integrity, the known traps,
argument handling, contexts, census coverage and the differential-case count.

No TensorFlow here: the backends run in ``tests/differential/`` (marked ``backends``).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from kmigrate.api import apply_to_text
from kmigrate.engine.model import EnsureHelper, Severity
from kmigrate.rules.common.catalog.builders import BUILDERS
from kmigrate.rules.common.catalog.translators import TRANSLATORS
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.ops_catalog import (
    CATALOG,
    REFUSING_TRANSLATORS,
    SAFE_TRANSLATORS,
    Status,
    by_symbol,
    catalog_markdown,
    catalog_stats,
    explain_entry,
    lookup,
)
from kmigrate.run.runner import scan_text

ROOT = Path(__file__).resolve().parents[2]
canonical = CONTEXT_SPEC.canonical
sys.path.insert(0, str(ROOT / "tests"))

from differential.cases import CASES  # noqa: E402
from differential.harness import case_module, make_inputs  # noqa: E402

HEADER = "import keras\nimport tensorflow as tf\nfrom tensorflow.keras import backend as K\n"


def layer(expr: str, header: str = HEADER) -> str:
    body = f"    def call(self, x, y, n):\n        return {expr}\n"
    return f"{header}\n\nclass L(keras.layers.Layer):\n{body}"


def rewrite(expr: str) -> str:
    """The rewritten return expression of a one-layer module (KM2 rules only)."""
    text = apply_to_text(layer(expr), select=["KM2"])
    tree = ast.parse(text)
    ret = tree.body[-1].body[0].body[0]
    return ast.get_source_segment(text, ret.value)


def km2_findings(code: str) -> list:
    return [f for f in scan_text(code, select=["KM2"]) if f.rule.startswith("KM2")]


def manual_reason(expr: str) -> str:
    found = [f for f in km2_findings(layer(expr)) if f.rule == "KM202"]
    assert found, f"{expr} was not reported as manual"
    assert all(f.fix is None for f in found)
    return found[0].message


# ---------------------------------------------------------------------------
# The table itself.
# ---------------------------------------------------------------------------


def test_catalog_size() -> None:
    stats = catalog_stats()
    assert stats["symbols covered"] >= 200
    assert stats["tf.* symbols"] >= 200
    assert stats["exact"] + stats["conditional"] + stats["manual"] == stats["symbols covered"]
    assert stats["automatic entries"] >= 200


def test_every_entry_is_well_formed() -> None:
    assert set(REFUSING_TRANSLATORS) | SAFE_TRANSLATORS == set(TRANSLATORS)
    for entry in CATALOG:
        assert entry.section, entry.symbol
        if not entry.automatic:
            assert entry.reason and entry.suggestion, f"{entry.symbol}: manual needs both"
            continue
        assert entry.params is not None
        names = set(entry.param_names)
        if entry.builder:
            assert entry.builder in BUILDERS or entry.builder == "variable"
        for out in entry.out:
            assert out.param is None or out.param in names, (entry.symbol, out)
            assert out.translator is None or out.translator in TRANSLATORS
        for old, new in entry.legacy.items():
            assert new in names, (entry.symbol, old)
        for name in (*entry.accept, *entry.needs):
            assert name in names, (entry.symbol, name)
        if entry.target:
            assert entry.target.startswith("keras."), entry.symbol


def test_positional_arguments_never_follow_an_omitted_one() -> None:
    """``ops.arange(5, 2)`` would be wrong for ``tf.range(5, delta=2)``: after a positional
    argument that may be left out, every Keras argument must be a keyword."""
    for entry in CATALOG:
        may_be_missing = False
        for out in entry.out:
            if out.keyword is not None:
                continue
            assert not may_be_missing, f"{entry.symbol}: positional after an optional one"
            param = entry.param(out.param) if out.param else None
            optional = param is not None and param.default is not None
            if optional and out.default is None and param.name not in entry.needs:
                may_be_missing = True


def test_aliases_are_unique_and_canonical() -> None:
    index = by_symbol()
    for symbol in index:
        assert canonical(symbol) == symbol or symbol.startswith("tf.compat.v1."), symbol


def test_explain_and_stats_for_the_cli() -> None:
    text = explain_entry("tf.reduce_mean")
    assert "keras.ops.mean" in text and "tf.math.reduce_mean" in text
    assert "keep_dims -> keepdims" in text
    assert explain_entry("tensorflow.math.reduce_mean") == text
    assert "manual" in explain_entry("tf.signal.rfft")
    assert "conditional" in explain_entry("tf.split")
    assert explain_entry("tf.no_such_op") is None
    assert set(catalog_stats()) >= {"symbols covered", "exact", "conditional", "manual"}


def test_docs_page_is_up_to_date() -> None:
    page = (ROOT / "docs" / "ops.md").read_text(encoding="utf-8")
    assert page == catalog_markdown(), "run: python scripts/gen_ops_doc.py"


# ---------------------------------------------------------------------------
# The differential cases: one per automatic entry (the count check), all rewritten.
# ---------------------------------------------------------------------------


# Entries whose rewrite depends on the call around them, which the differential harness
# (each case a `call(self, *tensors)` called directly) cannot give: each is proven on the
# three backends by its own test, through Keras's own `__call__`.
PROVEN_BY_OWN_TEST = {
    "K.in_train_phase": "test_train_phase_backends.py",
    "K.cast_to_floatx": "test_keras2_helpers_backends.py",
    "K.resize_images": "test_resize_images_backends.py",
    "tf.compat.v1.image.resize_images": "test_tf1_resize_backends.py",
    "tf.compat.v1.image.resize_bilinear": "test_tf1_resize_backends.py",
    "tf.TensorArray": "test_tensor_array_backends.py",
    "K.rnn": "test_keras2_rnn_backends.py",
    "tf.broadcast_dynamic_shape": "test_broadcast_dynamic_shape_backends.py",
    "tf.nn.batch_normalization": "test_batch_normalization_helper_backends.py",
}


def test_every_automatic_entry_has_a_differential_case() -> None:
    for symbol, test in PROVEN_BY_OWN_TEST.items():
        assert symbol in (Path(__file__).parent / test).read_text()
    proven = {case.proves for case in CASES} | set(PROVEN_BY_OWN_TEST)
    unknown = [s for s in proven if lookup(s) is None]
    assert not unknown, f"cases prove symbols not in the catalog: {unknown}"
    automatic = [e for e in CATALOG if e.automatic]
    missing = [e.symbol for e in automatic if not set(e.symbols) & proven]
    assert not missing, f"automatic catalog entries without a differential case: {missing}"
    covered = {lookup(s).symbol for s in proven}
    assert len(covered & {e.symbol for e in automatic}) == len(automatic)


def test_every_differential_case_is_rewritten_automatically() -> None:
    text = case_module(CASES)
    findings = scan_text(text, select=["KM2"])
    manual = [f for f in findings if f.rule in ("KM202",) or (f.rule == "KM203" and not f.fix)]
    assert not manual, [f"{f.span.line}: {f.message}" for f in manual]
    fixed_lines = {f.span.line for f in findings if f.fix is not None}
    for index, case in enumerate(CASES):
        line = next(
            n for n, t in enumerate(text.splitlines(), 1) if t.startswith(f"class Case{index}(")
        )
        body = range(line, line + 8 + case.init.count("\n"))
        assert fixed_lines & set(body), f"case {index} ({case.expr}) has no automatic fix"


def test_case_inputs_are_deterministic() -> None:
    first, second = make_inputs(CASES[:20]), make_inputs(CASES[:20])
    assert first.keys() == second.keys()
    assert all((first[k] == second[k]).all() for k in first)


# ---------------------------------------------------------------------------
# Traps: a TensorFlow op whose Keras 3 twin differs in a default, one test each.
# ---------------------------------------------------------------------------


def test_trap_gelu_exact_by_default() -> None:
    assert rewrite("tf.nn.gelu(x)") == "keras.ops.gelu(x, approximate=False)"
    assert rewrite("tf.nn.gelu(x, approximate=True)") == "keras.ops.gelu(x, approximate=True)"
    assert rewrite("tf.nn.gelu(x, False)") == "keras.ops.gelu(x, approximate=False)"
    assert "not a literal" in manual_reason("tf.nn.gelu(x, approximate=self.approx)")


def test_trap_split_sizes_become_indices() -> None:
    assert rewrite("tf.split(x, 3, axis=-1)") == "keras.ops.split(x, 3, axis=-1)"
    assert rewrite("tf.split(x, [8, 24], axis=-1)") == "keras.ops.split(x, [8], axis=-1)"
    assert rewrite("tf.split(x, [2, 3, 5])") == "keras.ops.split(x, [2, 5])"
    assert rewrite("tf.split(x, (4, -1), 1)") == "keras.ops.split(x, [4], axis=1)"
    # sizes that are not literals, or a -1 before the last size: tf.split's meaning in
    # the project's `split` helper (tests/rules/test_shape_helpers_backends.py)
    assert rewrite("tf.split(x, self.sizes)") == "split(x, self.sizes)"
    assert rewrite("tf.split(x, [-1, 4])") == "split(x, [-1, 4])"
    assert rewrite("tf.split(x, self.heads, axis=1)") == "split(x, self.heads, axis=1)"
    # ... but never a tensor, nor with `num`
    assert "tensor" in manual_reason("tf.split(x, tf.shape(x)[1:3])")
    assert "tensor" in manual_reason('tf.split(x, tf.cast(self.sizes, "int32"))')
    assert "not a literal" in manual_reason("tf.split(x, self.sizes, num=2)")


def test_trap_product_of_a_shape_stays_a_python_int() -> None:
    """ops.prod of a shape is a tensor (traced under jit on JAX, where ops.reshape needs
    ints): the product of a shape's dimensions is the `shape_prod` helper."""
    assert rewrite("K.prod(K.shape(x)[1:3])") == "shape_prod(keras.ops.shape(x)[1:3])"
    assert rewrite("tf.reduce_prod(tf.shape(x)[1:])") == "shape_prod(keras.ops.shape(x)[1:])"
    assert rewrite("K.prod(x)") == "keras.ops.prod(x)"  # not a shape
    flat = "(lambda s: K.prod([d or s[i] for i, d in enumerate(K.int_shape(x))]))(K.shape(x))"
    assert "keras.ops.prod(" in rewrite(flat)  # a lambda's parameter: not followed
    assert rewrite("K.prod(K.shape(x)[1:], axis=0)").startswith("keras.ops.prod(")
    assert rewrite("keras.layers.Lambda(lambda t: K.prod(K.shape(t)[1:]))(x)") == (
        "keras.layers.Lambda(lambda t: keras.ops.prod(keras.ops.shape(t)[1:]))(x)"
    )  # a layer's output: a tensor (Keras 3 takes no int there)


def test_trap_argmax_axis_zero_and_index_dtype() -> None:
    assert rewrite("tf.argmax(x)") == "keras.ops.argmax(x, axis=0)"
    assert rewrite("tf.argmax(x, None)") == "keras.ops.argmax(x, axis=0)"
    assert rewrite("tf.math.argmin(x, 1)") == "keras.ops.argmin(x, axis=1)"
    assert rewrite("tf.argmax(x, -1, output_type=tf.int32)") == "keras.ops.argmax(x, axis=-1)"
    assert rewrite("tf.argmax(x, axis=1, output_type=tf.int64)") == (
        "keras.ops.argmax(x, axis=1)"
    )  # int32 indices: documented, proven equal in value by the differential test
    assert "output_type" in manual_reason("tf.argmax(x, output_type=self.index_dtype)")
    assert rewrite("K.argmax(x)") == "keras.ops.argmax(x, axis=-1)"


def test_trap_gather_axis_zero() -> None:
    assert rewrite("tf.gather(x, n)") == "keras.ops.take(x, n, axis=0)"
    assert rewrite("tf.gather(x, n, axis=1)") == "keras.ops.take(x, n, axis=1)"
    assert rewrite("tf.gather(x, n, None, 2)") == "keras.ops.take(x, n, axis=2)"
    assert rewrite("K.gather(x, n)") == "keras.ops.take(x, n, axis=0)"
    assert "batch_dims" in manual_reason("tf.gather(x, n, axis=1, batch_dims=1)")


def test_trap_backend_defaults_to_the_last_axis() -> None:
    assert rewrite("K.concatenate([x, y])") == "keras.ops.concatenate([x, y], axis=-1)"
    assert rewrite("K.concatenate([x, y], 0)") == "keras.ops.concatenate([x, y], axis=0)"
    assert rewrite("K.expand_dims(x)") == "keras.ops.expand_dims(x, -1)"
    assert rewrite("tf.concat([x, y], 1)") == "keras.ops.concatenate([x, y], axis=1)"


def test_trap_where_with_one_argument_is_manual() -> None:
    assert rewrite("tf.where(x > 0, x, y)") == "keras.ops.where(x > 0, x, y)"
    reason = manual_reason("tf.where(x > 0)")
    assert "index" not in reason or "coordinates" in reason
    assert "ops.where(c, x, y)" in reason


def test_trap_matmul_transpose_swaps_the_last_two_axes() -> None:
    assert rewrite("tf.matmul(x, y)") == "keras.ops.matmul(x, y)"
    assert rewrite("tf.matmul(x, y, transpose_b=True)") == (
        "keras.ops.matmul(x, keras.ops.swapaxes(y, -1, -2))"
    )
    assert rewrite("tf.linalg.matmul(x, y, True)") == (
        "keras.ops.matmul(keras.ops.swapaxes(x, -1, -2), y)"
    )
    assert rewrite("tf.matmul(x, y, transpose_b=False, name='mm')") == "keras.ops.matmul(x, y)"
    assert "not a literal" in manual_reason("tf.matmul(x, y, transpose_b=self.t)")
    assert "adjoint_b" in manual_reason("tf.matmul(x, y, adjoint_b=True)")


def test_trap_pad_modes_are_lower_case() -> None:
    assert rewrite('tf.pad(x, [[1, 1], [0, 0]], "CONSTANT")') == (
        'keras.ops.pad(x, [[1, 1], [0, 0]], mode="constant")'
    )
    assert rewrite('tf.pad(x, n, mode="REFLECT")') == 'keras.ops.pad(x, n, mode="reflect")'
    assert rewrite("tf.pad(x, n)") == "keras.ops.pad(x, n)"
    symmetric = manual_reason('tf.pad(x, n, "SYMMETRIC")')
    assert 'mode="SYMMETRIC"` is not one of CONSTANT, REFLECT' in symmetric  # names the mode
    assert "ops.flip" in symmetric  # and says how to write it by hand
    assert "not one of" in manual_reason("tf.pad(x, n, mode=self.mode)")


# ---------------------------------------------------------------------------
# Argument handling.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        # positional and keyword forms, renames, dropped name=
        ("tf.reduce_sum(x, 1, True)", "keras.ops.sum(x, axis=1, keepdims=True)"),
        ("tf.reduce_mean(input_tensor=x, axis=-1)", "keras.ops.mean(x, axis=-1)"),
        ("tf.reduce_mean(x, keep_dims=True, name='m')", "keras.ops.mean(x, keepdims=True)"),
        ("tf.math.reduce_max(x, reduction_indices=[1])", "keras.ops.max(x, axis=[1])"),
        ("tf.compat.v1.reduce_sum(x, 0, None)", "keras.ops.sum(x, axis=0, keepdims=False)"),
        ("tf.transpose(x, perm=[0, 2, 1])", "keras.ops.transpose(x, axes=[0, 2, 1])"),
        ("tf.transpose(x, [1, 0], name='t')", "keras.ops.transpose(x, axes=[1, 0])"),
        ("tf.squeeze(x, squeeze_dims=[1])", "keras.ops.squeeze(x, axis=[1])"),
        ("tf.nn.leaky_relu(x, alpha=0.1)", "keras.ops.leaky_relu(x, negative_slope=0.1)"),
        ("tf.nn.softmax(x)", "keras.ops.softmax(x)"),  # TF axis=None is -1
        ("tf.nn.softmax(x, dim=1)", "keras.ops.softmax(x, axis=1)"),
        ("K.in_top_k(x, y, 3)", "keras.ops.in_top_k(y, x, 3)"),  # reordered
        ("tf.range(5, delta=2)", "keras.ops.arange(5, step=2)"),
        ("tf.eye(3, 4)", "keras.ops.eye(3, M=4)"),
        # value translation
        ("tf.cast(x, tf.float32)", 'keras.ops.cast(x, "float32")'),
        ("tf.cast(x, dtype=tf.dtypes.int64)", 'keras.ops.cast(x, "int64")'),
        ("tf.cast(x, 'float16')", "keras.ops.cast(x, 'float16')"),
        ("tf.cast(x, y.dtype)", "keras.ops.cast(x, y.dtype)"),
        ("tf.zeros((2, 3), dtype=tf.int32)", 'keras.ops.zeros((2, 3), dtype="int32")'),
        (
            "tf.constant([1.0, 2.0], tf.float32)",
            'keras.ops.convert_to_tensor([1.0, 2.0], dtype="float32")',
        ),
        ("tf.convert_to_tensor(x)", "keras.ops.convert_to_tensor(x)"),
        (
            "tf.nn.conv2d(x, y, strides=[1, 2, 2, 1], padding='SAME')",
            'keras.ops.conv(x, y, strides=2, padding="same", data_format="channels_last")',
        ),
        (
            "tf.nn.conv2d(x, y, [1, 1, 2, 2], 'VALID', data_format='NCHW')",
            'keras.ops.conv(x, y, strides=2, padding="valid", data_format="channels_first")',
        ),
        (
            "tf.nn.max_pool2d(x, ksize=[1, 3, 3, 1], strides=[1, 2, 1, 1], padding='SAME')",
            'keras.ops.max_pool(x, 3, strides=(2, 1), padding="same", data_format="channels_last")',
        ),
        ("tf.nn.l2_normalize(x, axis=-1)", "keras.ops.normalize(x, axis=-1, epsilon=1e-06)"),
        ("tf.math.l2_normalize(x, 1, 1e-10)", "keras.ops.normalize(x, axis=1, epsilon=1e-05)"),
        ("tf.math.l2_normalize(x)", "keras.ops.normalize(x, axis=None, epsilon=1e-06)"),
        ("K.l2_normalize(x, axis=1)", "keras.ops.normalize(x, axis=1, epsilon=1e-06)"),
        ("tf.norm(x, axis=[0, 1])", "keras.ops.norm(x, axis=(0, 1))"),
        ("tf.norm(x, ord='euclidean', keepdims=None)", "keras.ops.norm(x, keepdims=False)"),
        ("tf.fill([2], 3)", 'keras.ops.full([2], 3, dtype="int32")'),
        ("tf.fill([2], 0.5)", "keras.ops.full([2], 0.5)"),
        (
            "tf.image.resize(x, (4, 4), method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)",
            'keras.ops.image.resize(x, (4, 4), interpolation="nearest", '
            'data_format="channels_last")',
        ),
        # templates and builders
        ("tf.math.squared_difference(x, y)", "keras.ops.square(keras.ops.subtract(x, y))"),
        ("K.int_shape(x)", "tuple(x.shape)"),
        ("K.int_shape(x + y)[-1]", "tuple((x + y).shape)[-1]"),
        ("tf.linalg.band_part(x, -1, 0)", "keras.ops.tril(x)"),
        ("tf.linalg.band_part(x, 0, -1)", "keras.ops.triu(x)"),
        ("tf.linalg.band_part(x, 2, 1)", "keras.ops.triu(keras.ops.tril(x, 1), -2)"),
        (
            "tf.sort(x, direction='DESCENDING')",
            "keras.ops.flip(keras.ops.sort(x, axis=-1), axis=-1)",
        ),
        ("tf.math.top_k(x, 2).indices", "keras.ops.top_k(x, 2)[1]"),
        ("tf.nn.top_k(x)", "keras.ops.top_k(x, 1)"),
        ("tf.shape(x)[0]", "keras.ops.shape(x)[0]"),
        ("tf.slice(x + y, [0, 1], [-1, 2])", "(x + y)[:, 1:3]"),
        ("tf.slice(x, n, [2, 2])", "keras.ops.slice(x, n, [2, 2])"),
        ("tf.reshape(y, tf.shape(x))", "keras.ops.reshape(y, keras.ops.shape(x))"),
        # y, a second argument of call, may be a Python number or list (Keras passes it
        # as it is): the helper converts those before reading the shape
        ("tf.reshape(x, tf.shape(y))", "keras.ops.reshape(x, shape_of(y))"),
        ("tf.signal.hann_window(8)", "keras.ops.hanning(8 + 1)[:-1]"),
        ("tf.signal.hann_window(n, periodic=False)", "keras.ops.hanning(n)"),
        ("K.epsilon()", "keras.config.epsilon()"),
        ("K.constant(1)", "keras.ops.convert_to_tensor(1, dtype=keras.config.floatx())"),
        ("tf.nest.flatten(x)", "keras.tree.flatten(x)"),
        ("tf.compat.dimension_value(x.shape[1])", "x.shape[1]"),
        (
            "tf.map_fn(lambda t: t * 2, x, dtype=tf.float32, parallel_iterations=4)",
            "keras.ops.map(lambda t: t * 2, x)",
        ),
        ("tf.cond(n > 0, lambda: x, lambda: y)", "keras.ops.cond(n > 0, lambda: x, lambda: y)"),
    ],
)
def test_argument_handling(expr: str, expected: str) -> None:
    assert rewrite(expr) == expected


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("tf.slice(x, n, [-1, 2])", "size"),
        ("tf.slice(x, [0, 0], [-2, 2])", "size"),
        ("tf.transpose(x, conjugate=True)", "conjugate"),
        ("tf.reduce_sum(x, foo=1)", "unknown argument"),
        ("tf.reduce_sum(*x)", "*args"),
        ("tf.shape(x) * 2", "tuple"),
        ("K.relu(x, alpha=0.1)", "leaky"),
        ("K.hard_sigmoid(x)", "0.2 * x + 0.5"),
        ("tf.nn.conv2d(x, y, strides=self.s, padding='SAME')", "strides"),
        ("tf.nn.conv2d(x, y, 1, [[0, 0], [1, 1], [1, 1], [0, 0]])", "padding"),
        ("tf.image.resize(x, (4, 4), method='bicubic')", "bilinear"),
        ("tf.image.resize(x, (4, 4), preserve_aspect_ratio=True)", "preserve_aspect_ratio"),
        ("tf.one_hot(n, 3, on_value=2.0)", "on_value"),
        ("tf.fill([2], n)", "literal"),
        ("tf.linalg.band_part(x, n, 0)", "literal"),
        ("tf.scan(lambda a, b: a + b, x)", "initializer"),
        ("tf.math.segment_sum(x, n)", "num_segments"),
        ("tf.signal.rfft(x)", "(real, imag)"),
        ("tf.sequence_mask(n)", "maxlen"),
        ("K.clip(x, None, 1.0)", "None"),
    ],
)
def test_manual_findings_say_why(expr: str, fragment: str) -> None:
    assert fragment in manual_reason(expr)


def test_nested_calls_are_all_rewritten() -> None:
    assert rewrite("tf.reduce_mean(tf.square(tf.nn.relu(x)), axis=-1)") == (
        "keras.ops.mean(keras.ops.square(keras.ops.relu(x)), axis=-1)"
    )
    assert rewrite("tf.matmul(x, tf.transpose(y), transpose_b=True)") == (
        "keras.ops.matmul(x, keras.ops.swapaxes(keras.ops.transpose(y), -1, -2))"
    )


def test_apply_is_idempotent_and_spells_imports() -> None:
    code = layer("tf.reduce_mean(x, axis=-1) + K.epsilon()")
    once = apply_to_text(code, select=["KM2"])
    assert apply_to_text(once, select=["KM2"]) == once
    assert "import tensorflow" not in once  # every use rewritten away
    assert "keras.ops.mean(x, axis=-1) + keras.config.epsilon()" in once


def test_aliases_of_tensorflow_and_backend_resolve() -> None:
    header = (
        "import tensorflow as tfx\nfrom tensorflow import math as tfm\n"
        "from tensorflow.keras import backend\nimport keras\n"
    )
    code = layer("tfm.reduce_sum(tfx.abs(x)) + backend.sum(y)", header)
    out = apply_to_text(code, select=["KM2"])
    assert "keras.ops.sum(keras.ops.abs(x)) + keras.ops.sum(y)" in out


# ---------------------------------------------------------------------------
# Contexts.
# ---------------------------------------------------------------------------


def test_only_model_code_is_rewritten() -> None:
    code = (
        "import tensorflow as tf\n\n\n"
        "def preprocess(image):\n    return tf.cast(image, tf.float32) / 255.0\n\n\n"
        "def helper(x):\n    return tf.reduce_mean(x)\n\n\n"
        "ds = tf.data.Dataset.range(3).map(preprocess)\n"
    )
    findings = km2_findings(code)
    assert [f.symbol for f in findings] == ["tf.reduce_mean"]  # tf.data map fn: nothing
    assert findings[0].severity is Severity.INFO and findings[0].fix is None
    assert apply_to_text(code, select=["KM2"]) == code


def test_local_variable_named_tf_is_not_tensorflow() -> None:
    code = (
        "from keras import layers, ops\n\n\nclass L(layers.Layer):\n"
        "    def call(self, x):\n        tf = ops\n        return tf.mean(x)\n"
    )
    assert km2_findings(code) == []


def test_functions_called_from_a_layer_are_model_code() -> None:
    code = (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        "def norm(x):\n    return x / tf.norm(x, axis=-1, keepdims=True)\n\n\n"
        "class L(keras.layers.Layer):\n    def call(self, x):\n        return norm(x)\n"
    )
    out = apply_to_text(code, select=["KM2"])
    assert "from keras import ops" in out
    assert "ops.norm(x, axis=-1, keepdims=True)" in out


# ---------------------------------------------------------------------------
# State, dtypes and shapes (KM203, KM204).
# ---------------------------------------------------------------------------


def test_variables_become_add_weight() -> None:
    code = (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        "class L(keras.layers.Layer):\n"
        "    def __init__(self, **kwargs):\n"
        "        super().__init__(**kwargs)\n"
        "        self.steps = tf.Variable(0, trainable=False, name='steps')\n"
        "        self.w = tf.Variable(tf.zeros([3, 4], dtype=tf.float32))\n"
        "        self.g = tf.Variable(tf.keras.initializers.GlorotUniform()(shape=(4, 2)))\n"
        "        self.c = tf.Variable(2.0, constraint=None)\n"
    )
    out = apply_to_text(code, select=["KM203"])
    assert (
        'self.steps = self.add_weight(shape=(), initializer="zeros", dtype="int32", '
        "trainable=False, name='steps')" in out
    )
    assert 'self.w = self.add_weight(shape=[3, 4], initializer="zeros", dtype="float32")' in out
    assert (
        "self.g = self.add_weight(shape=(4, 2), "
        "initializer=tf.keras.initializers.GlorotUniform())" in out
    )
    assert (
        "self.c = self.add_weight(shape=(), initializer=keras.initializers.Constant(2.0), "
        "constraint=None)" in out
    )


@pytest.mark.parametrize(
    "statement",
    [
        "        v = tf.Variable(x)\n",  # not an attribute
        "        self.v = tf.Variable(x * 2)\n",  # initial value is computed
        "        self.v = tf.Variable(tf.zeros(3), synchronization=s)\n",  # no add_weight arg
    ],
)
def test_variables_that_stay_manual(statement: str) -> None:
    code = (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        "class L(keras.layers.Layer):\n    def build(self, x, s=None):\n" + statement
    )
    found = [f for f in km2_findings(code) if f.rule == "KM203"]
    assert found and found[0].fix is None and "Instead" in found[0].message


def test_dtype_constants_and_shape_helpers() -> None:
    code = (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n\n"
        "class L(keras.layers.Layer):\n"
        "    def build(self, input_shape):\n"
        "        self.n = input_shape.as_list()[-1]\n"
        "        self.w = self.add_weight(shape=(self.n,), dtype=tf.float32)\n\n"
        "    def call(self, x):\n"
        "        d = tf.float16.name\n"
        "        k = x.get_shape()[-1]\n"
        "        return tf.cast(x, tf.float32) * x.shape.as_list()[-1]\n"
    )
    out = apply_to_text(code, select=["KM2"])
    assert "self.n = list(input_shape)[-1]" in out
    assert 'dtype="float32")' in out
    assert 'd = "float16"' in out
    assert "k = x.shape[-1]" in out
    assert 'ops.cast(x, "float32") * list(x.shape)[-1]' in out
    # the tf.float32 inside tf.cast is translated by KM201, not reported twice by KM204
    km204 = [f for f in km2_findings(code) if f.rule == "KM204"]
    assert not any(f.span.line == 13 and "float32" in f.message for f in km204)


def test_dtype_comparisons_are_reported_not_rewritten() -> None:
    code = layer("x.dtype == tf.float32")
    found = [f for f in km2_findings(code) if f.rule == "KM204"]
    assert found and found[0].fix is None
    assert "standardize_dtype" in found[0].message


# ---------------------------------------------------------------------------
# Census coverage.
# ---------------------------------------------------------------------------

CENSUS = ROOT / "tests" / "differential" / "tf_census.tsv"

# Census rows that are not ops, and who handles them.
NOT_OPS = (
    (re.compile(r"^(tf\.keras|keras)\."), "namespace move (KM1xx)"),
    (re.compile(r"^tf\.random\."), "random numbers (KM3xx)"),
    (re.compile(r"^K\.(get_value|set_value|batch_get_value|batch_set_value)$"), "KM506"),
    (re.compile(r"^K\.(eval|function|learning_phase)$"), "KM507"),
    (re.compile(r"^tf\.TensorShape$"), "KM510"),
    (re.compile(r"^tf\.(function|GradientTape|py_function)$"), "backend structure (KM6xx)"),
    (re.compile(r"^tf\.(compat\.v1\.)?(distribute|summary)\."), "backend structure (KM6xx)"),
    (re.compile(r"^tf\.io\.FixedLenFeature$"), "tf.data input pipeline (left as is)"),
    (re.compile(r"^tf\.python\."), "private TensorFlow module (tpu_function)"),
    (re.compile(r"^tfa\."), "TensorFlow Addons, a third-party library"),
)


def census_symbols() -> list[str]:
    rows = []
    for line in CENSUS.read_text().splitlines():
        if line.startswith("#") or line.startswith("symbol\t"):
            continue
        rows.append(line.split("\t")[0])
    return rows


def test_every_census_op_is_in_the_catalog() -> None:
    missing = []
    for symbol in census_symbols():
        spelled = canonical("tensorflow." + symbol[3:]) if symbol.startswith("tf.") else symbol
        if lookup(spelled) is not None or lookup(symbol) is not None:
            continue
        if any(pattern.search(spelled) for pattern, _ in NOT_OPS):
            continue
        missing.append(symbol)
    assert not missing, f"census symbols that are neither catalogued nor owned: {missing}"


def test_catalog_status_counts_match_entries() -> None:
    statuses = {e.status for e in CATALOG}
    assert statuses == {Status.EXACT, Status.CONDITIONAL, Status.MANUAL}


def test_functions_passed_by_reference() -> None:
    code = (
        "import keras\nimport tensorflow as tf\n\n\ndef build_model():\n"
        "    inputs = keras.Input(shape=(4,))\n"
        "    x = keras.layers.Dense(8, activation=tf.nn.relu)(inputs)\n"
        "    x = keras.layers.Lambda(tf.nn.gelu)(x)\n"
        "    y = tf.map_fn(tf.abs, x)\n"
        "    return keras.Model(inputs, keras.layers.Activation(tf.nn.crelu)(x + y))\n"
    )
    out = apply_to_text(code, select=["KM2"])
    assert "activation=keras.ops.relu" in out
    assert "keras.ops.map(keras.ops.abs, x)" in out
    assert "Lambda(tf.nn.gelu)" in out  # keras.ops.gelu(x) would be the approximation
    manual = {f.symbol: f.message for f in km2_findings(code) if f.rule == "KM202"}
    assert set(manual) == {"tf.nn.gelu", "tf.nn.crelu"}
    assert "used as a value" in manual["tf.nn.gelu"]


def test_shape_and_dtype_given_as_keywords() -> None:
    code = layer(
        "keras.random.normal(shape=tf.shape(x), dtype=tf.float32) + tf.cast(x, dtype=tf.int32)"
    )
    out = apply_to_text(code, select=["KM2"])
    assert 'keras.random.normal(shape=keras.ops.shape(x), dtype="float32")' in out
    assert 'keras.ops.cast(x, "int32")' in out
    lines = [f.span.column for f in km2_findings(code) if f.rule == "KM204"]
    assert len(lines) == 1  # the keras.random dtype; tf.cast's belongs to KM201


# ---------------------------------------------------------------------------
# Messages and `kmigrate explain` read as sentences with the real replacement.
# ---------------------------------------------------------------------------

# What a template or placeholder leaks when it is shown unrendered.
_LEFTOVER = re.compile(r"[{}]|its argument|\bname:|``")


def _every_catalog_call() -> list[str]:
    """Modules calling every catalog entry: each differential case in a layer (model
    code); then each in a plain function that a layer and a tf.data map both call
    (undecided code); then the TensorFlow ones in a module without Keras (other code);
    each manual symbol every way."""
    manual_calls = [f"{s}(x)" for e in CATALOG if not e.automatic for s in e.symbols]
    model = case_module(CASES)
    model += "\n\nclass Manual(keras.layers.Layer):\n    def call(self, x):\n"
    model += "".join(f"        {call}\n" for call in manual_calls)
    names = sorted({name for case in CASES for name in case.inputs} | {"x"})
    args = ", ".join(names)
    calls = [c.expr for c in CASES if not c.init] + manual_calls

    def plain(header: str, chosen: list[str]) -> str:
        return header + "".join(
            f"\n\ndef outside{index}({args}):\n    return {call}\n"
            for index, call in enumerate(chosen)
        )

    undecided = plain(HEADER, calls)
    undecided += "\n\nclass Both(keras.layers.Layer):\n    def call(self, x):\n"
    undecided += "".join(f"        outside{i}(x)\n" for i in range(len(calls)))
    undecided += "".join(f"\n\ntf.data.Dataset.range(1).map(outside{i})" for i in range(len(calls)))
    other = plain("import tensorflow as tf\n", [c for c in calls if c.startswith("tf.")])
    return [model, undecided, other]


def test_every_catalog_message_names_its_real_replacement() -> None:
    findings = [f for text in _every_catalog_call() for f in scan_text(text, select=["KM2"])]
    contexts = {f.context.value for f in findings}
    assert contexts == {"model", "undecided", "other"} and len(findings) > 2 * len(CASES)
    leaks = [f"{f.span.line}: {f.message}" for f in findings if _LEFTOVER.search(f.message)]
    assert not leaks, leaks
    undecided = [f for f in findings if f.context.value == "undecided"]
    assert undecided and all(
        not f.fixable and "undecided, not rewritten" in f.message for f in undecided
    )


def test_every_catalog_explanation_is_rendered() -> None:
    for entry in CATALOG:
        text = explain_entry(entry.symbol)
        assert text is not None and not _LEFTOVER.search(text), text


def test_template_entries_show_the_rewritten_call() -> None:
    assert "Keras 3:    tuple(x.shape)" in explain_entry("K.int_shape")
    code = (
        "import tensorflow as tf\nfrom tensorflow.keras import backend as K\n\n\ndef f(inputs):\n"
    )
    code += "    return K.int_shape(inputs)\n\n\ntf.data.Dataset.range(1).map(f)\n"
    # in data code the name is gone from Keras 3 (KM108), whose message names the form
    (finding,) = scan_text(code, select=["KM108"])
    assert "`int_shape` from `_keras2_compat.py`" in finding.message, finding.message
    (finding,) = km2_findings(layer("K.int_shape(x)"))
    assert "`tuple(x.shape)`" in finding.message, finding.message


def test_name_scope_becomes_keras_name_scope_only_where_exact() -> None:
    code = (
        f"{HEADER}\n\nclass L(keras.layers.Layer):\n"
        "    def call(self, x, name=None):\n"
        '        with tf.name_scope("scale"), K.name_scope("inner"):\n'
        "            x = x * 2.0\n"
        '        with tf.name_scope("a/b"):\n'
        "            x = x + 1.0\n"
        "        with tf.name_scope(name) as scope:\n"
        "            x = x - 1.0\n"
        '        step = tf.name_scope("loose")\n'
        "        return x\n"
    )
    after = apply_to_text(code, select=["KM2"])
    assert 'with keras.name_scope("scale"), keras.name_scope("inner"):' in after
    manual = {f.span.line: f.message for f in km2_findings(code) if f.rule == "KM202"}
    assert sorted(manual) == [10, 12, 14]
    assert "raises on a name containing '/'" in manual[10]
    assert "`as` binds the scope's name string" in manual[12]
    assert "not the expression of a `with` statement" in manual[14]


def test_tf1_random_normal_initializer_keeps_its_own_default() -> None:
    reason = manual_reason("tf.compat.v1.random_normal_initializer()")
    assert "stddev 1.0" in reason
    assert rewrite("tf.random_normal_initializer(seed=1)") == (
        "keras.initializers.RandomNormal(seed=1)"
    )


@pytest.mark.parametrize(
    "expr",
    [
        "tf.shape(x)[1:] * 2",  # a tuple slice repeats
        "tf.shape(x)[1:] + tf.shape(y)[1:]",  # and concatenates
        "tf.shape(x)[n]",  # n is a tensor here
        "tf.shape(x)[1:][0] + tf.shape(x)[::2]",
    ],
)
def test_shape_arithmetic_stays_a_tensor(expr: str) -> None:
    assert "a tuple" in manual_reason(expr)


def _shape_layer(*lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return f"{HEADER}\n\nclass L(keras.layers.Layer):\n    def call(self, x, y):\n{body}"


@pytest.mark.parametrize(
    ("lines", "fixed"),
    [
        (("s = tf.shape(x)", "b, h = s[0], s[-1]", "return tf.reshape(y, s)"), True),
        (("s = K.shape(x)", "g = [s[i] for i in range(len(s))]", "return g"), True),
        (("s = tf.shape(x)", "return tf.zeros(s[1:])"), True),
        (("s = tf.shape(x)", "return s * 2"), False),  # arithmetic on the whole shape
        (("s = tf.shape(x)", "s = s[1:]", "return s"), False),  # bound twice
        (("s = tf.shape(x)", "return self.helper(s)"), False),  # passed on
        (("s = tf.shape(x)", "return [s[i] for i in y]"), False),  # not a range index
        (("s = tf.shape(x)", "return tf.reshape(y, s[1:] + [1])"), False),
    ],
)
def test_shape_assigned_to_a_name_is_followed_to_its_uses(lines, fixed: bool) -> None:
    found = [f for f in km2_findings(_shape_layer(*lines)) if f.symbol in ("tf.shape", "K.shape")]
    assert len(found) == 1
    assert (found[0].fix is not None) is fixed, found[0].message


def _variable_layer(*statements: str) -> str:
    body = "".join(f"        {s}\n" for s in statements)
    return (
        f"import numpy as np\n{HEADER}\n\nclass L(keras.layers.Layer):\n"
        f"    def build(self, input_shape):\n{body}"
    )


@pytest.mark.parametrize(
    ("statement", "after"),
    [
        (
            "self.t = tf.Variable(self.table, dtype=tf.float16, name='t')",
            "self.t = keras.Variable(self.table, dtype=\"float16\", name='t')",
        ),
        (
            "self.t = K.variable(self.table)",
            "self.t = keras.Variable(self.table, dtype=keras.config.floatx())",
        ),
        (
            "self.i = tf.Variable(self.ids, dtype=tf.int64)",
            'self.i = keras.Variable(self.ids, dtype="int64", trainable=False)',
        ),
        (  # tf.zeros's default dtype is float32
            "self.z = tf.Variable(tf.ones(self.n))",
            'self.z = keras.Variable(keras.ops.ones(self.n), dtype="float32")',
        ),
        (  # NumPy's default dtype is float64; an int shape must become a tuple
            "self.w = tf.Variable(np.ones(4))",
            'self.w = self.add_weight(shape=(4,), initializer="ones", dtype="float64")',
        ),
        (  # K.variable casts everything to floatx, ints included
            "self.k = K.variable(5)",
            "self.k = self.add_weight(shape=(), initializer=keras.initializers.Constant(5))",
        ),
    ],
)
def test_variables_become_keras_variables(statement: str, after: str) -> None:
    out = apply_to_text(_variable_layer(statement), select=["KM2"])
    assert after in out, out


@pytest.mark.parametrize(
    ("statement", "why"),
    [
        ("self.t = tf.Variable(self.table)", "its dtype is not written"),
        ("self.t = tf.Variable(self.table, dtype=self.kind)", "its dtype is not written"),
        ("self.t = tf.Variable(self.table, dtype='float32', name='a/b')", "'/'"),
        ("self.t = tf.Variable(self.table, dtype='float32', constraint=abs)", "initial value"),
    ],
)
def test_keras_variable_needs_a_known_dtype_and_plain_name(statement: str, why: str) -> None:
    (found,) = [f for f in km2_findings(_variable_layer(statement)) if f.rule == "KM203"]
    assert found.fix is None and why in found.message, found.message


@pytest.mark.parametrize(
    "lines",
    [
        ("return K.batch_dot(x, y, axes=[2, 2])",),
        ("q = K.reshape(x, (-1, 3, 4))", "return K.batch_dot(q, y, 2)"),
        ("q = K.reshape(x, (-1, 3, 4))", "return K.batch_dot(q, q, axes=[1, 3])"),
        ("q = K.reshape(x, (-1, 3, 4))", "return K.batch_dot(q, q, axes=y)"),
        # bound twice: the rank at the call is not known
        ("q = K.reshape(x, (-1, 3, 4))", "q = K.sum(q, axis=1)", "return K.batch_dot(q, q)"),
    ],
)
def test_batch_dot_without_static_ranks_calls_the_keras2_helper(lines) -> None:
    """Ranks or axes the code does not state: the call goes to the helper with
    K.batch_dot's meaning for every rank (tests/rules/test_keras2_helpers_backends.py proves
    it), its arguments untouched, imported from the helper module beside the file."""
    (found,) = [f for f in km2_findings(_shape_layer(*lines)) if f.symbol == "K.batch_dot"]
    assert found.rule == "KM201" and found.fix is not None, found.message
    assert "`_keras2_compat.batch_dot`" in found.message, found.message
    (helper,) = [e for e in found.fix.edits if isinstance(e, EnsureHelper)]
    assert (helper.module, helper.name, helper.import_from) == (
        "_keras2_compat",
        "batch_dot",
        "_keras2_compat",
    )
    out = apply_to_text(_shape_layer(*lines), select=["KM2"])
    assert "from _keras2_compat import batch_dot\n" in out
    assert "return batch_dot(" in out and "K.batch_dot" not in out


def test_batch_dot_helper_refused_where_the_module_uses_its_name() -> None:
    code = _shape_layer("batch_dot = 3", "return K.batch_dot(x, y, axes=[2, 2]) * batch_dot")
    (found,) = [f for f in km2_findings(code) if f.symbol == "K.batch_dot"]
    assert found.rule == "KM202" and found.fix is None
    assert "uses the name `batch_dot` itself" in found.message, found.message


def test_helper_imported_relatively_inside_a_package() -> None:
    from kmigrate.engine.analyze import analyze_module_text
    from kmigrate.engine.rule_walk import RuleSet
    from kmigrate.rules.registry import select_rules

    code = _shape_layer("return K.cast_to_floatx(x) + K.batch_dot(x, y)")
    ruleset = RuleSet(select_rules(["KM2"]))
    findings = analyze_module_text("pkg/m.py", code, ruleset, CONTEXT_SPEC, "pkg").findings
    helpers = [e for f in findings if f.fix for e in f.fix.edits if isinstance(e, EnsureHelper)]
    assert sorted((h.name, h.import_from) for h in helpers) == [
        ("batch_dot", "._keras2_compat"),
        ("cast_to_floatx", "._keras2_compat"),
    ]


def test_batch_dot_ranks_from_inputs_and_einsum() -> None:
    code = (
        f"{HEADER}\n\ndef attention():\n"
        "    q = keras.Input(shape=(5, 8))\n"
        "    k = keras.Input((7, 8))\n"
        "    scores = keras.layers.Lambda(lambda t: K.batch_dot(t[0], t[1], [2, 2]))([q, k])\n"
        "    return keras.layers.Lambda(lambda t: K.batch_dot(q, k, axes=[2, 2]))(scores)\n"
    )
    out = apply_to_text(code, select=["KM2"])
    assert 'keras.ops.einsum("abc,adc->abd", q, k)' in out
    assert "batch_dot(t[0], t[1], [2, 2])" in out  # ranks of t[0], t[1] unknown: the helper


def test_variable_shape_held_in_an_attribute_is_followed() -> None:
    code = _variable_layer(
        "self.kshape = (1, input_shape[-1])",
        "self.a = K.variable(np.ones(self.kshape), name=self.name + '_a')",
        "self.b = tf.Variable(tf.zeros(self.n))",  # self.n may be an int: keras.Variable
    )
    out = apply_to_text(code, select=["KM2"])
    assert 'self.a = self.add_weight(shape=self.kshape, initializer="ones", name=' in out
    assert 'self.b = keras.Variable(keras.ops.zeros(self.n), dtype="float32")' in out


def test_shape_cast_to_a_dtype_is_exact() -> None:
    assert rewrite("K.cast(K.shape(x)[1:3], 'float32')") == (
        "keras.ops.cast(keras.ops.shape(x)[1:3], 'float32')"
    )
    assert "a tuple" in manual_reason("K.cast(K.shape(x)[1:3] * 32, 'float32')")


@pytest.mark.parametrize(
    ("expr", "after"),
    [
        (
            "K.tile(x, K.stack([1, K.shape(x)[1], 1]))",
            "keras.ops.tile(x, (1, keras.ops.shape(x)[1], 1))",
        ),
        ("tf.ones(tf.stack([K.shape(x)[0]]))", "keras.ops.ones((keras.ops.shape(x)[0],))"),
        ("K.reshape(x, K.stack([n, -1], axis=0))", "keras.ops.reshape(x, (n, -1))"),
        ("K.stack([x, y])", "keras.ops.stack([x, y])"),  # not a shape argument: a tensor
    ],
)
def test_a_stacked_shape_argument_becomes_a_tuple(expr: str, after: str) -> None:
    assert rewrite(expr) == after


@pytest.mark.parametrize(
    "expr",
    [
        "K.tile(x, [1, K.cast(n, 'int32'), 1])",
        "K.tile(x, [1, K.cast(K.shape(x)[1], 'int64'), 1])",
        "K.reshape(x, K.concatenate([K.shape(x)[:1], [-1]]))",
        "tf.ones(tf.constant([2, 3]))",
        "tf.broadcast_to(x, tf.stack([K.cast(n, 'int32'), 3]))",
    ],
)
def test_a_tensor_shape_argument_is_refused(expr: str) -> None:
    assert "holds a tensor" in manual_reason(expr)
