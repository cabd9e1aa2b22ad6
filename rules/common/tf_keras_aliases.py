"""TensorFlow 2's other names for four `tf.keras` modules, and the TensorFlow 1 names
that share their spelling.

In every TensorFlow 2 release `tf.losses`, `tf.metrics`, `tf.optimizers` and
`tf.initializers` (and the same under `tf.compat.v2`) are the modules `tf.keras.losses`,
`tf.keras.metrics`, `tf.keras.optimizers` and `tf.keras.initializers` themselves: the
package's `__init__` binds them to lazy loaders of the Keras submodules (TensorFlow 2.21:
`_KerasLazyLoader(globals(), submodule="losses")`; 2.0-2.15 a `_LazyLoader` of
`keras.api._v2.keras.losses`). So `tf.losses.MeanSquaredError` is
`tf.keras.losses.MeanSquaredError`, and kmigrate spells it that way (see
``rules/context_spec.py``) so that every `tf.keras` rule sees it.

TensorFlow 1 had modules of the same names with other contents: `tf.losses.log_loss`,
`tf.metrics.auc`, `tf.initializers.global_variables` (kept as `tf.compat.v1.losses`...;
TensorFlow 1 had no `tf.optimizers`). The lists below are the public names of
`tf.compat.v1.losses`, `.metrics` and `.initializers` in TensorFlow 2.21 (the frozen
TensorFlow 1.15 API), split by whether Keras 2 (`tf_keras` 2.21) has the same name:

- a name only TensorFlow 1 has can only mean TensorFlow 1's function (in TensorFlow 2 it
  raises AttributeError): it is spelled `tf.compat.v1.losses.log_loss`;
- a name both have (`tf.losses.mean_squared_error`) means one thing in TensorFlow 1 code
  (`mean_squared_error(labels, predictions, weights=1.0, ...)`, a weighted scalar) and
  another in TensorFlow 2 code (Keras's per-sample `mean_squared_error(y_true, y_pred)`):
  it keeps its `tf.losses.` spelling and KM107 reports it for a person to decide.
"""

from __future__ import annotations

# The modules TensorFlow 2 aliases to `tf.keras.<module>`.
ALIAS_MODULES = ("losses", "metrics", "optimizers", "initializers")

TF1_ONLY: dict[str, frozenset[str]] = {
    "losses": frozenset(
        "absolute_difference add_loss compute_weighted_loss cosine_distance get_losses "
        "get_regularization_loss get_regularization_losses get_total_loss hinge_loss "
        "huber_loss log_loss mean_pairwise_squared_error sigmoid_cross_entropy "
        "softmax_cross_entropy sparse_softmax_cross_entropy".split()
    ),
    "metrics": frozenset(
        "accuracy auc average_precision_at_k false_negatives "
        "false_negatives_at_thresholds false_positives false_positives_at_thresholds mean "
        "mean_cosine_distance mean_iou mean_per_class_accuracy mean_relative_error "
        "mean_tensor percentage_below precision precision_at_k precision_at_thresholds "
        "precision_at_top_k recall recall_at_k recall_at_thresholds recall_at_top_k "
        "root_mean_squared_error sensitivity_at_specificity sparse_average_precision_at_k "
        "sparse_precision_at_k specificity_at_sensitivity true_negatives "
        "true_negatives_at_thresholds true_positives true_positives_at_thresholds".split()
    ),
    "initializers": frozenset(
        "global_variables local_variables tables_initializer uniform_unit_scaling variables".split()
    ),
}

TF1_AND_KERAS: dict[str, frozenset[str]] = {
    "losses": frozenset({"Reduction", "mean_squared_error"}),
    "metrics": frozenset({"mean_absolute_error", "mean_squared_error"}),
    "initializers": frozenset(
        "constant glorot_normal glorot_uniform he_normal he_uniform identity lecun_normal "
        "lecun_uniform ones orthogonal random_normal random_uniform truncated_normal "
        "variance_scaling zeros".split()
    ),
}


def alias_canonical_prefixes() -> tuple[tuple[str, str], ...]:
    """Canonical-spelling entries for the aliases, most specific first: TensorFlow 1's
    own names, then the names both mean, then the whole modules."""
    entries: list[tuple[str, str]] = []
    for module, names in TF1_ONLY.items():
        entries += [
            (f"tensorflow.{module}.{n}", f"tf.compat.v1.{module}.{n}") for n in sorted(names)
        ]
    for module, names in TF1_AND_KERAS.items():
        entries += [(f"tensorflow.{module}.{n}", f"tf.{module}.{n}") for n in sorted(names)]
    for module in ALIAS_MODULES:
        entries.append((f"tensorflow.{module}", f"tf.keras.{module}"))
        entries.append((f"tensorflow.compat.v2.{module}", f"tf.keras.{module}"))
    return tuple(entries)


# The spellings left ambiguous: `tf.losses.mean_squared_error` and the like.
AMBIGUOUS_PREFIXES = tuple(f"tf.{module}." for module in TF1_AND_KERAS)
