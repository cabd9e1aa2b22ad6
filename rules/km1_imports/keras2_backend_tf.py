"""What a Keras 2 backend function executed, as TensorFlow code: KM108's fix table.

Outside model code kmigrate keeps TensorFlow (a ``tf.data`` map must stay TensorFlow),
so ``K.cast(x, "float32")`` there becomes the TensorFlow call ``K.cast`` made. Each entry
was read from tf_keras 2.21's ``tf_keras/src/backend.py``, the Keras 2 that TensorFlow
2.16+ keeps (standalone Keras's TensorFlow backend changed between releases: its old
``K.dtype`` read ``x.dtype.name``). Entries use the ops catalog's vocabulary (``OpEntry``:
the Keras 2 signature as ``inspect.signature`` shows it, then ``out`` or ``template``; see
``rules/ops_catalog/__init__.py``), with ``tf.x`` standing for the TensorFlow name the
editor spells (``import tensorflow as tf`` added or reused). A function whose TensorFlow
form would differ for some input (a dtype check, a Python-side branch, a Variable) has a
manual entry saying why. ``tests/rules/test_keras2_backend_tf_backends.py`` checks every
automatic entry against tf_keras on the same inputs.

Data only: read by ``keras2_backend_removed`` (KM108), imported by ``scan``.
"""

from __future__ import annotations

import functools
import re

from kmigrate.rules.ops_catalog import OpEntry

_TF_NAME = re.compile(r"(?<![\w.{])tf((?:\.[A-Za-z_]\w*)+)")


def _spelled(text: str) -> str:
    """``tf.cast`` -> ``{name:tensorflow.cast}``: the editor spells it from the imports."""
    return _TF_NAME.sub(lambda m: "{name:tensorflow" + m.group(1) + "}", text)


def _tf(symbol: str, sig: str, target: str, out: str | None = None) -> OpEntry:
    """``K.<symbol>(...)`` is the call ``tf.<target>(out)``; arguments not given stay
    absent."""
    return OpEntry(
        symbols=("K." + symbol,),
        sig=sig,
        target="tensorflow." + target,
        out_text=out,
        drop=frozenset(),
        suggestion=f"write `tf.{target}` by hand",
    )


def _expr(symbol: str, sig: str, template: str) -> OpEntry:
    """``K.<symbol>(...)`` is the expression ``template`` (``{x}``: argument ``x``)."""
    shown = template.replace("{(", "").replace(")}", "").replace("{", "").replace("}", "")
    return OpEntry(
        symbols=("K." + symbol,),
        sig=sig,
        template=_spelled(template),
        suggestion=f"write `{shown}` by hand",
    )


def _manual(symbol: str, reason: str, suggestion: str) -> OpEntry:
    return OpEntry(symbols=("K." + symbol,), reason=reason, suggestion=suggestion)


_REDUCE = "x, axis=None, keepdims=False"
_REDUCE_OUT = "x, axis=axis, keepdims=keepdims"
_ELEMENTWISE = {  # K.<name>(x) is tf.<op>(x)
    "abs": "abs",
    "exp": "exp",
    "log": "math.log",
    "round": "round",
    "sign": "sign",
    "square": "square",
    "tanh": "tanh",
    "shape": "shape",
    "transpose": "transpose",
}
_BINARY = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")
_BINARY += ("maximum", "minimum")

ENTRIES: tuple[OpEntry, ...] = (
    _tf("cast", "x, dtype", "cast"),
    *(_tf(k, "x", t) for k, t in _ELEMENTWISE.items()),
    *(_tf(k, "x, y", k) for k in _BINARY),
    _tf("pow", "x, a", "pow"),
    _tf("sum", _REDUCE, "reduce_sum", _REDUCE_OUT),
    _tf("max", _REDUCE, "reduce_max", _REDUCE_OUT),
    _tf("min", _REDUCE, "reduce_min", _REDUCE_OUT),
    _tf("prod", _REDUCE, "reduce_prod", _REDUCE_OUT),
    _tf("logsumexp", _REDUCE, "reduce_logsumexp", _REDUCE_OUT),
    _tf("argmax", "x, axis=-1", "argmax", "x, axis | -1"),  # tf.argmax's default is 0
    _tf("argmin", "x, axis=-1", "argmin", "x, axis | -1"),
    _tf("cumsum", "x, axis=0", "cumsum", "x, axis=axis"),
    _tf("reshape", "x, shape", "reshape"),
    _tf("expand_dims", "x, axis=-1", "expand_dims", "x, axis | -1"),  # required in tf
    _tf("stack", "x, axis=0", "stack", "x, axis=axis"),
    _tf("gather", "reference, indices", "gather"),
    _tf("permute_dimensions", "x, pattern", "transpose", "x, pattern"),
    _tf("one_hot", "indices, num_classes", "one_hot", "indices, num_classes"),
    _tf("zeros_like", "x, dtype=None, name=None", "zeros_like", "x, dtype=dtype, name=name"),
    _tf("ones_like", "x, dtype=None, name=None", "ones_like", "x, dtype=dtype, name=name"),
    _tf(  # Keras 2's floatx is Keras 3's keras.config.floatx once migrated
        "constant",
        "value, dtype=None, shape=None, name=None",
        "constant",
        "value, dtype=dtype | keras.config.floatx(), shape=shape, name=name",
    ),
    # Keras 2 optimizers' state updates and graph helpers: the same TensorFlow 1 calls
    _tf("update", "x, new_x", "compat.v1.assign"),
    _tf("update_add", "x, increment", "compat.v1.assign_add"),
    _tf("update_sub", "x, decrement", "compat.v1.assign_sub"),
    _tf("name_scope", "name", "name_scope"),
    _expr(
        "gradients",
        "loss, variables",
        "tf.compat.v1.gradients({loss}, {variables}, colocate_gradients_with_ops=True)",
    ),
    _expr("sqrt", "x", "tf.sqrt(tf.maximum({x}, 0.0))"),  # negatives clipped to 0 first
    _expr("flatten", "x", "tf.reshape({x}, [-1])"),
    _expr("squeeze", "x, axis", "tf.squeeze({x}, [{axis}])"),
    _expr("dtype", "x", "{(x)}.dtype.base_dtype.name"),  # a string, not a tf.DType
    *(
        _manual(
            name,
            f"K.{name} casts a boolean tensor to floatx before tf.{op}, which refuses "
            "booleans; which one `x` is cannot be seen here",
            f"write `tf.{op}(x, axis, keepdims)`, with `tf.cast(x, tf.float32)` first if "
            "`x` can be boolean",
        )
        for name, op in (
            ("mean", "reduce_mean"),
            ("var", "math.reduce_variance"),
            ("std", "math.reduce_std"),
        )
    ),
    *(
        _manual(
            name,
            f"K.{name} casts `x` to bool before tf.reduce_{name}",
            f"write `tf.reduce_{name}(tf.cast(x, tf.bool), axis, keepdims)`",
        )
        for name in ("any", "all")
    ),
    # None for a tensor of unknown rank, where `tuple(x.shape)` raises: the project's
    # helper with Keras 2's meaning (plain Python, so TensorFlow code stays TensorFlow)
    OpEntry(symbols=("K.int_shape",), sig="x", builder="keras2_helper"),
    _manual(
        "concatenate",
        "K.concatenate concatenates sparse tensors with tf.sparse.concat and densifies a "
        "mix of sparse and dense ones; tf.concat does neither",
        "write `tf.concat(tensors, axis=-1)` where the tensors are dense or ragged",
    ),
    _manual(
        "cast_to_floatx",
        "K.cast_to_floatx returns a NumPy array for a NumPy or Python value and a tensor "
        "for a tensor",
        "write `tf.cast(x, keras.config.floatx())` for a tensor, "
        "`np.asarray(x, keras.config.floatx())` otherwise",
    ),
    *(
        _manual(
            name,
            f"K.{name} creates a tf.Variable (state, with Keras 2's bookkeeping), not a tensor",
            "create the `tf.Variable` yourself, with dtype `keras.config.floatx()` where "
            "none was given",
        )
        for name in ("zeros", "ones", "variable")
    ),
    _manual(
        "clip",
        "K.clip raises `max_value` to `min_value` when it is smaller and reads None as "
        "an infinite bound before tf.clip_by_value",
        "write `tf.clip_by_value(x, min_value, max_value)` where max_value >= min_value",
    ),
    _manual(
        "sigmoid",
        "K.sigmoid keeps its input on the result (`_keras_logits`), which Keras 2's "
        "crossentropy reads",
        "write `tf.sigmoid(x)` where nothing reads the logits back",
    ),
    _manual(
        "softmax",
        "K.softmax refuses a 1-D tensor, handles a tuple axis by hand and keeps the logits",
        "write `tf.nn.softmax(x, axis=-1)` for a tensor of rank 2 or more",
    ),
    _manual(
        "relu",
        "K.relu chooses between tf.nn.relu, relu6, leaky_relu and a clip from the values "
        "of alpha, max_value and threshold",
        "write `tf.nn.relu(x)` when the defaults are used",
    ),
    _manual(
        "binary_crossentropy",
        "K.binary_crossentropy clips the probabilities with epsilon, or reads the logits "
        "K.sigmoid kept",
        "write the crossentropy in TensorFlow by hand "
        "(`tf.nn.sigmoid_cross_entropy_with_logits` for logits)",
    ),
)


@functools.cache
def tf_forms() -> dict[str, OpEntry]:
    """``K.cast`` -> its entry."""
    return {entry.symbol: entry for entry in ENTRIES}
