"""Ops catalog section "Neural-network ops": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import RAGGED, same_signature

NN = [
    *same_signature(
        [
            ("tf.nn.relu", "relu"),
            ("tf.nn.relu6", "relu6"),
            ("tf.nn.elu", "elu"),
            ("tf.nn.selu", "selu"),
        ],
        "features, name=None",
    ),
    *same_signature(
        [
            ("K.abs", "abs"),
            ("K.sigmoid", "sigmoid"),
            ("K.tanh", "tanh"),
            ("K.softplus", "softplus"),
            ("K.softsign", "softsign"),
            ("K.exp", "exp"),
            ("K.log", "log"),
            ("K.square", "square"),
            ("K.round", "round"),
            ("K.sign", "sign"),
            ("K.sin", "sin"),
            ("K.cos", "cos"),
        ],
        "x",
    ),
    *same_signature(
        [
            ("K.equal", "equal"),
            ("K.not_equal", "not_equal"),
            ("K.greater", "greater"),
            ("K.greater_equal", "greater_equal"),
            ("K.less", "less"),
            ("K.less_equal", "less_equal"),
            ("K.maximum", "maximum"),
            ("K.minimum", "minimum"),
        ],
        "x, y",
    ),
    op(
        "K.sqrt",
        "x",
        template="ops.sqrt(ops.maximum({x}, 0.0))",
        note="Keras 2's K.sqrt clips negative inputs to 0 first: 0 where ops.sqrt gives nan.",
    ),
    op("K.pow", "x, a", "power", "x, a"),
    op(
        "K.dot",
        "x, y",
        "dot",
        "x, y",
        note="K.dot follows np.dot for N-D inputs, as keras.ops.dot does.",
    ),
    op(
        "tf.nn.gelu",
        "features, approximate=False, name=None",
        "gelu",
        "features, approximate=lit(approximate) | False",
        note="tf.nn.gelu is the exact (erf) GELU by default, keras.ops.gelu the tanh "
        "approximation: the rewrite always writes approximate=.",
    ),
    op(
        "tf.nn.silu tf.nn.swish",
        "features, beta=1.0",
        "silu",
        "features",
        accept={"beta": [1.0]},
    ),
    op(
        "tf.nn.leaky_relu",
        "features, alpha=0.2, name=None",
        "leaky_relu",
        "features, negative_slope=alpha",
    ),
    op(
        "tf.nn.softmax tf.math.softmax",
        "logits, axis=None, name=None",
        "softmax",
        "logits, axis=none_to(axis, -1)",
        legacy={"dim": "axis"},
    ),
    op(
        "tf.nn.log_softmax tf.math.log_softmax",
        "logits, axis=None, name=None",
        "log_softmax",
        "logits, axis=none_to(axis, -1)",
        legacy={"dim": "axis"},
    ),
    op("K.softmax", "x, axis=-1", "softmax", "x, axis=axis"),
    op("K.elu", "x, alpha=1.0", "elu", "x, alpha=alpha"),
    op(
        "K.relu",
        "x, alpha=0.0, max_value=None, threshold=0.0",
        "relu",
        "x",
        accept={"alpha": [0, 0.0], "max_value": [None], "threshold": [0, 0.0]},
        reason="K.relu with alpha/max_value/threshold is a leaky/capped/thresholded ReLU",
        suggestion="ops.leaky_relu(x, negative_slope=alpha), ops.relu6(x) or "
        "ops.minimum(ops.relu(x), max_value); keras.layers.ReLU(max_value, negative_slope, "
        "threshold) has all three",
    ),
    manual(
        "K.hard_sigmoid",
        "K.hard_sigmoid is clip(0.2 * x + 0.5, 0, 1); keras.ops.hard_sigmoid is "
        "relu6(x + 3) / 6 (slope 1/6): different numbers",
        "ops.clip(0.2 * x + 0.5, 0.0, 1.0)",
    ),
    manual(
        "tf.nn.crelu",
        "keras.ops has no concatenated ReLU",
        "ops.concatenate([ops.relu(x), ops.relu(-x)], axis=-1)",
    ),
    op(
        "tf.nn.l2_normalize tf.math.l2_normalize tf.linalg.l2_normalize",
        "x, axis=None, epsilon=1e-12, name=None, dim=None",
        "normalize",
        "x, axis=axis | None, epsilon=sqrt_eps(epsilon) | 1e-06",
        legacy={"dim": "axis"},
        drop=["dim"],
        note="TF bounds the squared norm below by epsilon, keras.ops.normalize the norm: "
        "the rewrite writes epsilon=sqrt(epsilon) (1e-6 for TF's 1e-12) and axis=None "
        "(all axes) when absent, TF's default.",
    ),
    op(
        "K.l2_normalize",
        "x, axis=None",
        "normalize",
        "x, axis=axis | None, epsilon=1e-06",
        note="As tf.math.l2_normalize (epsilon 1e-12 on the squared norm).",
    ),
    op(
        "tf.nn.moments",
        "x, axes, shift=None, keepdims=False, name=None",
        "moments",
        "x, axes, keepdims=keepdims",
        note="Returns (mean, variance) as TF does.",
    ),
    op(
        "tf.nn.bias_add",
        "value, bias, data_format=None, name=None",
        "add",
        "value, bias",
        accept={"data_format": [None, "NHWC", "NWC", "NDHWC", "N..C"]},
    ),
    op(
        "K.bias_add",
        "x, bias, data_format=None",
        "add",
        "x, bias",
        accept={"data_format": [None, "channels_last"]},
        note="data_format=None means keras.config.image_data_format() (channels_last "
        "unless changed); a channels-first bias needs reshaping.",
    ),
    op(
        "tf.nn.embedding_lookup",
        "params, ids, max_norm=None, name=None",
        "take",
        "params, ids, axis=0",
        when="`params` is one tensor (not a list of shards)",
    ),
    op(
        "tf.nn.l2_loss",
        "t, name=None",
        template="ops.multiply(ops.sum(ops.square({t})), 0.5)",
    ),
    op(
        "tf.nn.softmax_cross_entropy_with_logits",
        "labels, logits, axis=-1, name=None",
        "categorical_crossentropy",
        "labels, logits, from_logits=True, axis=axis",
    ),
    op(
        "tf.nn.sigmoid_cross_entropy_with_logits",
        "labels=None, logits=None, name=None",
        "binary_crossentropy",
        "labels, logits, from_logits=True",
        needs=("labels", "logits"),
    ),
    op(
        "tf.nn.sparse_softmax_cross_entropy_with_logits",
        "labels, logits, name=None",
        "sparse_categorical_crossentropy",
        "labels, logits, from_logits=True",
    ),
    op(
        "K.binary_crossentropy",
        "target, output, from_logits=False",
        "binary_crossentropy",
        "target, output, from_logits=from_logits",
        note="tf_keras adds epsilon inside the log and, in graph mode, reads logits back "
        "from a Sigmoid op; keras.ops clips to [epsilon, 1 - epsilon]. Within 1e-6 for "
        "probabilities away from 0 and 1.",
    ),
    op(
        "K.categorical_crossentropy",
        "target, output, from_logits=False, axis=-1",
        "categorical_crossentropy",
        "target, output, from_logits=from_logits, axis=axis",
    ),
    op(
        "K.sparse_categorical_crossentropy",
        "target, output, from_logits=False, axis=-1, ignore_class=None",
        "sparse_categorical_crossentropy",
        "target, output, from_logits=from_logits, axis=axis",
    ),
    manual(
        "K.binary_focal_crossentropy K.categorical_focal_crossentropy",
        "no keras.ops equivalent",
        "keras.losses.binary_focal_crossentropy / categorical_focal_crossentropy",
    ),
    manual(
        "tf.nn.weighted_cross_entropy_with_logits",
        "no keras.ops equivalent",
        "write it: (1 - z) * x + (1 + (q - 1) * z) * ops.softplus(-x) with z=labels, "
        "x=logits, q=pos_weight",
    ),
    manual(
        "tf.nn.log_poisson_loss",
        "no keras.ops equivalent",
        "ops.exp(log_input) - targets * log_input (add the Stirling term for full loss)",
    ),
    op(
        "tf.nn.batch_normalization",
        "x, mean, variance, offset, scale, variance_epsilon, name=None",
        builder="keras2_helper",
        note="A call to `batch_normalization`, TensorFlow's tf.nn.batch_normalization on "
        "keras.ops (mean, variance, offset and scale broadcast against x, as TensorFlow "
        "reads them; keras.ops.batch_normalization takes vectors along one axis), which "
        "apply writes into `_keras2_compat.py` beside the file (unless the module uses the "
        "name itself).",
    ),
    manual(
        "tf.compat.v1.nn.fused_batch_norm K.batch_normalization K.normalize_batch_in_training",
        "fused/backend batch norm",
        "keras.layers.BatchNormalization, or ops.moments + ops.batch_normalization",
    ),
    manual(
        "tf.nn.local_response_normalization tf.nn.lrn",
        "keras.ops has no LRN",
        "write it with ops.conv over the squared channels, or drop it (modern nets do)",
    ),
    manual(
        "tf.nn.zero_fraction",
        "no keras.ops equivalent",
        'ops.mean(ops.cast(ops.equal(x, 0), "float32"))',
    ),
    manual(
        "tf.nn.compute_average_loss tf.nn.scale_regularization_loss",
        "tf.distribute loss scaling",
        "let model.fit reduce the loss (keras.losses reduction) or use keras.distribution",
    ),
    manual(
        "tf.nn.nce_loss tf.nn.sampled_softmax_loss",
        "candidate-sampling losses have no keras.ops equivalent",
        "use a full softmax (ops.sparse_categorical_crossentropy) or keep a TF-only loss",
    ),
    manual(
        "tf.nn.embedding_lookup_sparse tf.nn.safe_embedding_lookup_sparse",
        RAGGED,
        "pad the ids, ops.take the rows and reduce with a mask",
    ),
    manual(
        "tf.nn.ctc_loss K.ctc_batch_cost",
        "keras.ops.ctc_loss takes batch-major probabilities and lengths (target, output, "
        "target_length, output_length)",
        "ops.ctc_loss(labels, ops.softmax(logits), label_length, logit_length) after "
        "moving time to axis 1",
    ),
    manual(
        "tf.nn.ctc_greedy_decoder tf.nn.ctc_beam_search_decoder K.ctc_decode",
        "TF returns SparseTensors",
        'ops.ctc_decode(inputs, lengths, strategy="greedy" | "beam_search")',
    ),
    manual(
        "tf.nn.normalize_moments tf.nn.sufficient_statistics tf.nn.weighted_moments",
        "no keras.ops equivalent",
        "compute with ops.sum / ops.mean and the weights",
    ),
    manual(
        "tf.nn.isotonic_regression",
        "no keras.ops equivalent",
        "keep it in a backend-specific helper",
    ),
]
