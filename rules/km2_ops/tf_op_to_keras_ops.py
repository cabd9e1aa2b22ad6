"""KM201: a TensorFlow or Keras 2 backend op in model code with an exact ``keras.ops`` form."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, EditPlan, ReferenceSite, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report
from kmigrate.rules.common.catalog.catalog_rule import (
    OUTSIDE,
    CatalogRule,
    passed_function,
    plan_for,
)
from kmigrate.rules.common.catalog.plan import Rewrite
from kmigrate.rules.common.keras2_backend import removed_backend_function


class TfOpToKerasOps(CatalogRule):
    id = "KM201"
    name = "tf-op-to-keras-ops"
    summary = "A TensorFlow or Keras 2 backend op in model code that has an exact keras.ops form."
    rationale = (
        "Keras 3 runs a layer's call() on TensorFlow, JAX or PyTorch tensors; tf.* and "
        "tf.keras.backend functions only accept TensorFlow tensors (and the K.* functions "
        "are gone from Keras 3). keras.ops is the NumPy-style API every backend implements."
    )
    fix_safety = (
        "The rewrite is exact: arguments are mapped through TensorFlow's real signature "
        '(positional or keyword, old keyword names), values are translated ("SAME" -> '
        '"same", tf.float32 -> "float32", [1, s, s, 1] -> s, split sizes -> split '
        "indices) and defaults that differ are written out (tf.argmax axis=0, "
        "approximate=False for tf.nn.gelu, K.concatenate axis=-1). When a value the rewrite "
        "depends on is not a literal, the call is left alone and KM202 says why. Every "
        "automatic catalog entry is proven by a differential test on the tensorflow, jax "
        "and torch backends. Only model code (layers, models, losses, metrics and what they "
        "call) is rewritten. A Keras 2 function no single keras.ops call replaces for every "
        "input (K.batch_dot when the ranks are not written in the code, K.cast_to_floatx) "
        "becomes a call to a helper with its Keras 2 meaning on keras.ops, which apply "
        "writes into `_keras2_compat.py` beside the file (one per folder, only the helpers "
        "used; each proven against tf_keras on the three backends): the product of a "
        "shape's dimensions (K.prod(K.shape(x)[1:3]): `shape_prod`, a Python int where they "
        "are known) and tf.split with a count or sizes that are not literals (`split`). A "
        "tf.shape / K.shape result becomes keras.ops.shape (a tuple) where every read of it "
        "takes a tuple: followed through local names (also when rebound later), loops over "
        "range() or enumerate(), and into a function or method of the module it is passed "
        "to. keras.ops.shape reads `x.shape`, which a Python number or list does not have "
        "on JAX and PyTorch (Keras 2 converted them): where the code does not show that x "
        "is a tensor (a layer's input in `call` not used as a list, a result of a tensor "
        "function, arithmetic on one) nor that it has a shape (`x.shape[0] or "
        "tf.shape(x)[0]`), the shape is the helper `shape_of(x)`, which converts only such "
        "values."
    )
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class RMSNorm(keras.layers.Layer):
                def call(self, x):
                    ms = tf.reduce_mean(tf.square(x), axis=-1, keep_dims=True)
                    return x * tf.math.rsqrt(ms + 1e-6)
            """,
            """
            from keras import ops
            from tensorflow import keras


            class RMSNorm(keras.layers.Layer):
                def call(self, x):
                    ms = ops.mean(ops.square(x), axis=-1, keepdims=True)
                    return x * ops.rsqrt(ms + 1e-6)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras


            class Heads(keras.layers.Layer):
                def call(self, qkv):
                    q, k, v = tf.split(qkv, 3, axis=-1)
                    a, b = tf.split(v, [8, 24], axis=-1)
                    scores = tf.matmul(q, k, transpose_b=True)
                    top = tf.argmax(a)
                    return tf.nn.gelu(scores), top, tf.cast(b, tf.float32)
            """,
            """
            from keras import ops
            from tensorflow import keras


            class Heads(keras.layers.Layer):
                def call(self, qkv):
                    q, k, v = ops.split(qkv, 3, axis=-1)
                    a, b = ops.split(v, [8], axis=-1)
                    scores = ops.matmul(q, ops.swapaxes(k, -1, -2))
                    top = ops.argmax(a, axis=0)
                    return ops.gelu(scores, approximate=False), top, ops.cast(b, "float32")
            """,
        ),
        Flagged(
            """
            import keras
            from tensorflow.keras import backend as K


            def rmse(y_true, y_pred):
                err = K.square(y_pred - y_true)
                return K.sqrt(K.mean(err, axis=-1) + K.epsilon())


            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(loss=rmse)
            """,
            """
            import keras


            def rmse(y_true, y_pred):
                err = keras.ops.square(y_pred - y_true)
                return keras.ops.sqrt(keras.ops.maximum(keras.ops.mean(err, axis=-1) + keras.config.epsilon(), 0.0))


            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(loss=rmse)
            """,  # noqa: E501
        ),
        Flagged(
            """
            import tensorflow as tf
            import keras


            def build_model():
                inputs = keras.Input(shape=(8,))
                x = keras.layers.Dense(16, activation=tf.nn.leaky_relu)(inputs)
                return keras.Model(inputs, keras.layers.Lambda(tf.math.square)(x))
            """,
            """
            import keras


            def build_model():
                inputs = keras.Input(shape=(8,))
                x = keras.layers.Dense(16, activation=keras.ops.leaky_relu)(inputs)
                return keras.Model(inputs, keras.layers.Lambda(keras.ops.square)(x))
            """,
        ),
        Flagged(  # no single keras.ops call: Keras 2's function, written beside the file
            """
            import keras
            from tensorflow.keras import backend as K


            class Attention(keras.layers.Layer):
                def call(self, inputs):
                    query, key = inputs
                    return K.batch_dot(query, key, axes=[2, 2]) * K.cast_to_floatx(0.5)
            """,
            """
            import keras

            from _keras2_compat import batch_dot, cast_to_floatx


            class Attention(keras.layers.Layer):
                def call(self, inputs):
                    query, key = inputs
                    return batch_dot(query, key, axes=[2, 2]) * cast_to_floatx(0.5)
            """,
        ),
        Flagged(  # a shape followed through a rebound name; its product; tf.split's sizes
            """
            import tensorflow as tf
            from tensorflow import keras
            from tensorflow.keras import backend as K


            class Heads(keras.layers.Layer):
                def __init__(self, heads, **kwargs):
                    super().__init__(**kwargs)
                    self.heads = heads

                def call(self, x):
                    shape = K.shape(x)
                    shape = [d or shape[i] for i, d in enumerate(K.int_shape(x))]
                    flat = K.reshape(x, [shape[0], K.prod(shape[1:])])
                    return tf.split(flat, self.heads, axis=-1)
            """,
            """
            from keras import ops
            from tensorflow import keras

            from _keras2_compat import shape_prod, split


            class Heads(keras.layers.Layer):
                def __init__(self, heads, **kwargs):
                    super().__init__(**kwargs)
                    self.heads = heads

                def call(self, x):
                    shape = ops.shape(x)
                    shape = [d or shape[i] for i, d in enumerate(tuple(x.shape))]
                    flat = ops.reshape(x, [shape[0], shape_prod(shape[1:])])
                    return split(flat, self.heads, axis=-1)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf
            from tensorflow import keras
            from tensorflow.keras import backend as K


            def fill_like(x, value):
                # value may be a Python number: Keras 2 converts it, ops.shape does not
                return tf.broadcast_to(value, K.shape(x))


            class Pad(keras.layers.Layer):
                def call(self, inputs):
                    return fill_like(inputs[:, :1], 0.0) + tf.ones(K.shape(inputs))
            """,
            """
            from keras import ops
            from tensorflow import keras

            from _keras2_compat import shape_of


            def fill_like(x, value):
                # value may be a Python number: Keras 2 converts it, ops.shape does not
                return ops.broadcast_to(value, shape_of(x))


            class Pad(keras.layers.Layer):
                def call(self, inputs):
                    return fill_like(inputs[:, :1], 0.0) + ops.ones(ops.shape(inputs))
            """,
        ),
        Clean(
            """
            import tensorflow as tf


            def preprocess(image, label):
                return tf.image.resize(image, (32, 32)), tf.cast(label, tf.int64)


            ds = tf.data.Dataset.from_tensor_slices(([0.0], [1])).map(preprocess)
            """
        ),
        Clean(
            """
            import keras


            class Block(keras.layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    # the Keras 3 function already (folds to K.get_uid like tf.keras's)
                    self.tag = keras.backend.get_uid("block")
            """
        ),
        Clean(
            """
            from keras import layers, ops


            class Scale(layers.Layer):
                def call(self, x):
                    tf = ops  # a local name `tf` is not TensorFlow
                    return tf.mean(x, axis=-1)
            """
        ),
        Clean(  # Keras 3's own `keras.backend` functions: nothing to port
            """
            import keras


            class Scale(keras.layers.Layer):
                def call(self, x):
                    eps = keras.backend.epsilon()
                    return keras.ops.cast(x, keras.backend.floatx()) + eps
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        found = plan_for(site)
        if found is None or not isinstance(found[1], Rewrite):
            return
        entry, rewrite = found
        more = f" (see `kmigrate explain {site.symbol}`)" if entry.note else ""
        if site.context is Context.MODEL:
            message = f"`{site.symbol}` is TensorFlow-only: use `{rewrite.target}`{more}"
            yield Report(site, message, fix=rewrite.plan)
        elif removed_backend_function(site) is not None:
            return  # KM108's: it fails on Keras 3 wherever it is
        elif site.context is Context.UNDECIDED:  # the analysis says why (both callers)
            message = f"`{site.symbol}` is TensorFlow-only; its Keras 3 form is `{rewrite.target}`"
            yield Report(site, message, severity=Severity.WARNING)
        else:
            message = f"`{site.symbol}` has a Keras 3 form, `{rewrite.target}`{OUTSIDE}"
            yield Report(site, message, severity=Severity.INFO)

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        entry = passed_function(site)
        if entry is None or not entry.renames_only:
            return
        assert entry.target is not None
        fix = EditPlan((ReplaceNode(site.span, "{name:" + entry.target + "}"),))
        message = (
            f"`{site.symbol}` passed as a function only accepts TensorFlow tensors: "
            f"pass `{entry.target}`"
        )
        yield Report(site, message, fix=fix)
