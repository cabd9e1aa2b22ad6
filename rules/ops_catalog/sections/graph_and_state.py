"""Ops catalog section "Graph, state and TensorFlow-only types": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import (
    COMPLEX,
    GRAPH_ONLY,
    RAGGED,
    RANDOM_INITIALIZER,
    TF1_INITIALIZER,
)

GRAPH_AND_STATE = [
    op(
        "tf.Variable",
        "initial_value=None, trainable=None, validate_shape=True, caching_device=None, "
        "name=None, variable_def=None, dtype=None, import_scope=None, constraint=None, "
        "synchronization=tf.VariableSynchronization.AUTO, "
        "aggregation=tf.VariableAggregation.NONE, shape=None, "
        "experimental_enable_variable_lifting=True",
        builder="variable",
        when="it is assigned to self.<attr> in __init__ or build of a layer; an initial "
        "value that is tf.zeros(shape)/tf.ones(shape), a number, or an initializer called "
        "with a shape becomes self.add_weight, any other keras.Variable(value, dtype=...) "
        "when the dtype is written or evident from the value; all of a layer's variables "
        "or none (rule KM203)",
    ),
    op(
        "K.variable",
        "value, dtype=None, name=None, constraint=None",
        builder="variable",
        when="as tf.Variable (rule KM203)",
    ),
    manual(
        "tf.control_dependencies",
        GRAPH_ONLY,
        "drop the block: Keras 3 runs ops in program order on every backend",
    ),
    manual("tf.group tf.tuple tf.no_op", GRAPH_ONLY, "drop it (program order applies)"),
    op(
        "tf.name_scope K.name_scope",
        "name",
        builder="name_scope",
        when="it opens a `with` block without `as` (TensorFlow binds the scope's name as "
        "a string, Keras the scope object) and `name` is a literal string without '/' "
        "(keras.name_scope raises on '/', TensorFlow's absolute-scope marker)",
        note="keras.name_scope prefixes the paths of variables created inside, as "
        "tf.name_scope prefixed their names; ops inside compute the same numbers.",
        suggestion="keras.name_scope(name) names variables created inside; otherwise drop it",
    ),
    manual("tf.init_scope", GRAPH_ONLY, "create state in __init__/build instead"),
    manual(
        "tf.device",
        "TensorFlow device placement",
        "Keras 3 places ops itself; use keras.distribution (JAX) for layouts",
    ),
    manual(
        "tf.executing_eagerly tf.inside_function",
        "TensorFlow execution mode",
        "drop the branch; Keras 3 code must work traced and eagerly",
    ),
    manual(
        "tf.print K.print_tensor",
        "TensorFlow graph print",
        "print() in eager code; jax.debug.print under jit on JAX",
    ),
    manual(
        "tf.debugging.assert_equal tf.debugging.assert_greater tf.debugging.assert_less "
        "tf.debugging.assert_rank tf.debugging.assert_shapes tf.debugging.check_numerics "
        "tf.debugging.assert_near tf.debugging.assert_non_negative "
        "tf.debugging.assert_positive tf.debugging.Assert tf.Assert tf.assert_equal "
        "tf.assert_rank tf.assert_less tf.assert_greater",
        "graph assertions have no keras.ops equivalent",
        "check static shapes in Python (x.shape), drop value checks or move them to tests",
    ),
    manual(
        "K.update K.update_add K.update_sub K.moving_average_update",
        "Keras 2 graph-mode variable updates",
        "variable.assign(new) / assign_add / assign_sub",
    ),
    manual("K.count_params", "Keras 2 backend helper", "int(np.prod(v.shape))"),
    manual(
        "K.pattern_broadcast",
        "Theano-era backend function (a no-op on TensorFlow); added to K by third-party libraries",
        "remove the call and keep its first argument",
    ),
    manual(
        "K.symbolic",
        "graph-mode decorator added to K by third-party libraries",
        "remove the decorator",
    ),
    manual(
        "K.where",
        "not a Keras 2 backend function (added to K by third-party libraries such as "
        "bert4keras); its semantics depend on that library",
        "if it is tf.where(c, x, y), write ops.where(c, x, y)",
    ),
    manual(
        "K.is_sparse K.to_dense tf.sparse.to_dense tf.sparse.from_dense tf.SparseTensor "
        "tf.sparse.sparse_dense_matmul",
        RAGGED,
        "use dense tensors (ops.convert_to_tensor) and masks",
    ),
    manual(
        "tf.RaggedTensor.from_tensor tf.RaggedTensor.from_row_splits "
        "tf.RaggedTensor.from_row_lengths tf.ragged.constant tf.ragged.stack",
        RAGGED,
        "pad to a dense tensor and carry a mask (keras.layers accept mask=)",
    ),
    manual(
        "tf.lookup.StaticHashTable tf.lookup.KeyValueTensorInitializer "
        "tf.lookup.StaticVocabularyTable",
        "TensorFlow lookup tables",
        "keras.layers.StringLookup / IntegerLookup, or do the lookup in the tf.data pipeline",
    ),
    manual(
        "tf.strings.split tf.strings.lower tf.strings.regex_replace tf.strings.to_number "
        "tf.strings.join tf.strings.length tf.strings.bytes_split tf.as_string",
        "string tensors exist only on the TensorFlow backend",
        "do text processing in the tf.data pipeline or with keras.layers.TextVectorization",
    ),
    manual(
        "tf.bitcast",
        "reinterpreting bits",
        "ops.view(x, dtype) (same size dtypes)",
    ),
    manual("tf.complex tf.dtypes.complex", COMPLEX, "keep real and imaginary parts apart"),
    op("tf.zeros_initializer", "", "keras.initializers.Zeros", ""),
    op("tf.ones_initializer", "", "keras.initializers.Ones", ""),
    op(
        "tf.constant_initializer",
        "value=0, support_partition=False",
        "keras.initializers.Constant",
        "value=scalar(value)",
        note="A scalar value (a literal number or a math.sqrt/exp/log... call): Keras's "
        "Constant broadcasts it, TensorFlow's reshapes a list.",
    ),
    op(
        "tf.random_normal_initializer",
        "mean=0.0, stddev=0.05, seed=None",
        "keras.initializers.RandomNormal",
        "mean=mean, stddev=stddev, seed=seed",
        note=RANDOM_INITIALIZER,
    ),
    # `tf.initializers.random_normal` is Keras's RandomNormal in TensorFlow 2 but TF1's
    # random_normal_initializer (stddev 1.0; minval 0, maxval 1) in TensorFlow 1 code:
    # the two agree only where the defaults that differ are written.
    op(
        "tf.initializers.random_normal",
        "mean=0.0, stddev=0.05, seed=None",
        "keras.initializers.RandomNormal",
        "mean=mean, stddev=stddev, seed=seed",
        needs=("stddev",),
        note=RANDOM_INITIALIZER,
        reason=TF1_INITIALIZER.format(tf1="stddev 1.0", tf2="RandomNormal, stddev 0.05"),
        suggestion="write stddev= and use keras.initializers.RandomNormal",
    ),
    op(
        "tf.random_uniform_initializer",
        "minval=-0.05, maxval=0.05, seed=None",
        "keras.initializers.RandomUniform",
        "minval=minval, maxval=maxval, seed=seed",
        note=RANDOM_INITIALIZER,
    ),
    op(
        "tf.initializers.random_uniform",
        "minval=-0.05, maxval=0.05, seed=None",
        "keras.initializers.RandomUniform",
        "minval=minval, maxval=maxval, seed=seed",
        needs=("minval", "maxval"),
        note=RANDOM_INITIALIZER,
        reason=TF1_INITIALIZER.format(
            tf1="minval 0, maxval 1", tf2="RandomUniform, minval -0.05, maxval 0.05"
        ),
        suggestion="write minval= and maxval= and use keras.initializers.RandomUniform",
    ),
    manual(
        "tf.compat.v1.random_normal_initializer tf.compat.v1.initializers.random_normal",
        "TF1's random_normal_initializer has stddev 1.0 by default (TF2's and Keras's "
        "0.05) and a dtype argument",
        "keras.initializers.RandomNormal(mean=..., stddev=1.0, seed=...) with stddev written",
    ),
    manual(
        "tf.io.gfile.exists tf.io.gfile.GFile tf.io.gfile.isdir tf.io.gfile.glob "
        "tf.io.gfile.listdir tf.io.gfile.makedirs tf.compat.v1.io.gfile.exists "
        "tf.compat.v1.io.gfile.GFile",
        "TensorFlow file I/O: it works while TensorFlow is installed, but a JAX or PyTorch "
        "deployment may not have TensorFlow",
        "open() / os.path / glob for local files; fsspec (gcsfs, s3fs) for gs:// and s3:// paths",
    ),
    manual(
        "tf.IndexedSlices",
        "sparse gradient slices are a TensorFlow type",
        "use dense tensors (ops.scatter / ops.take)",
    ),
    manual(
        "tf.compat.v1.add_to_collection tf.compat.v1.get_collection "
        "tf.compat.v1.trainable_variables tf.compat.v1.get_default_graph",
        GRAPH_ONLY,
        "layer.trainable_weights, layer.losses / self.add_loss, model.weights",
    ),
    manual(
        "tf.compat.v1.tpu.cross_replica_sum",
        "a TPU replica collective",
        "let model.fit aggregate across replicas, or use keras.distribution on JAX",
    ),
    manual(
        "tf.autograph.experimental.do_not_convert",
        "an AutoGraph decorator (TensorFlow's graph tracing)",
        "remove it: JAX and PyTorch trace plain Python",
    ),
]
