"""What the engine needs to know about TensorFlow/Keras: how symbols are spelled, how
code is classified into contexts, how new imports are written.

Kept here, as data, so that ``migrate/`` never names a TensorFlow symbol.
"""

from kmigrate.engine import ContextSpec, ImportStyle
from kmigrate.rules.common.namespaces import KERAS_NAMESPACES, in_keras_namespaces
from kmigrate.rules.common.tf_keras_aliases import alias_canonical_prefixes

_MODEL_BASES = (
    "layers.",
    "Layer",
    "Model",
    "Sequential",
    "models.",
    "losses.",
    "metrics.",
    "regularizers.",
    "constraints.",
    "initializers.",
    # Standalone Keras 2 spelled its bases through implementation modules:
    # `keras.engine.Layer`, `keras.engine.topology.Layer`, `keras.engine.base_layer.Layer`.
    "engine.",
    # Keras 2's internal bases (``tf.keras.__internal__.layers.BaseRandomLayer``,
    # ``BaseImageAugmentationLayer``): their subclasses are Keras 2 layers
    "__internal__.layers.",
)

# Standalone Keras 2 kept its base classes in implementation modules:
# ``from keras.engine import Layer``, ``keras.engine.topology.Layer`` (Keras <= 2.1),
# ``keras.engine.base_layer.Layer``, ``keras.engine.training.Model``.
_KERAS2_ENGINE_BASES = tuple(
    f"keras.engine.{module}{name}"
    for module in ("", "topology.", "base_layer.", "training.", "network.", "sequential.")
    for name in ("Layer", "Model", "Network", "Sequential")
)

# Keras-family packages re-export ``keras`` from a backend module of their own:
# ``from keras_nlp.backend import keras`` then ``keras.layers.Layer`` is Keras's.
# keras_nlp 0.6-0.8 and keras_cv 0.6+ (``keras_cv.backend.ops`` too); CyberZHG's
# packages (keras-bert, keras-xlnet... before 2022) bind ``keras`` by ``TF_KERAS`` and
# ``backend = keras.backend`` in their ``backend`` module.
_ZHG_PACKAGES = (
    "keras_bert",
    "keras_xlnet",
    "keras_transformer",
    "keras_multi_head",
    "keras_pos_embd",
    "keras_layer_normalization",
    "keras_self_attention",
    "keras_embed_sim",
    "keras_position_wise_feed_forward",
)
KERAS_FAMILY_REEXPORTS: tuple[tuple[str, str], ...] = (
    *(
        (f"{package}.{inner}backend.{name}", target)
        for package in ("keras_nlp", "keras_cv")
        for inner in ("", "src.")
        for name, target in (("keras", "keras"), ("ops", "keras.ops"))
    ),
    *((f"{package}.backend.backend", "K") for package in _ZHG_PACKAGES),
    *((f"{package}.backend.keras", "keras") for package in _ZHG_PACKAGES),
)

# Qualified prefix -> the canonical spelling rules and reports use, first match wins, so
# the longest, most specific prefixes come first. ``keras_core``, the 2023 preview of
# Keras 3, has Keras 3's API under another name. TensorFlow 2's ``tf.losses``,
# ``tf.metrics``, ``tf.optimizers`` and ``tf.initializers`` are ``tf.keras``'s modules
# (TensorFlow 1's names of the same spelling excepted: see ``tf_keras_aliases``).
CANONICAL_PREFIXES: tuple[tuple[str, str], ...] = (
    *KERAS_FAMILY_REEXPORTS,
    ("keras_core.backend", "K"),
    ("keras_core", "keras"),
    ("tensorflow.compat.v2.keras.backend", "K"),
    ("tensorflow.keras.backend", "K"),
    ("tensorflow.python.keras.backend", "K"),
    ("tf_keras.backend", "K"),
    ("keras.backend.common", "K"),  # Keras 2: re-exported by keras.backend as they are
    ("keras.backend", "K"),
    *alias_canonical_prefixes(),
    ("tensorflow.compat.v2", "tf"),
    ("tensorflow", "tf"),
    ("numpy", "np"),
    ("tensorflow_hub", "hub"),
)

# What writes a SavedModel of any object.
SAVED_MODEL_SAVE = frozenset({"tf.saved_model.save", "tf.compat.v1.saved_model.save"})
# What reads a SavedModel directory as ``tf.saved_model.save`` wrote it, and breaks when
# ``model.export`` writes it instead (KM404): the object itself is callable in the first
# and not in the second (its endpoint is ``loaded.serve``), and the serving signature's
# keys change (input ``dense_input`` -> ``keras_tensor``, output ``dense`` ->
# ``output_0`` for one Dense layer, TF 2.21 with tf_keras / Keras 3.15). TF2's load
# (``load_v2`` is it under its TF1 name), TF1's session loaders, which read those keys,
# and tensorflow_hub's readers (``hub.load`` is TF2's load; ``hub.KerasLayer`` calls the
# object, or a signature; ``hub.Module`` reads the TF1 Hub format, a SavedModel too).
SAVED_MODEL_LOAD = frozenset(
    {
        "tf.saved_model.load",
        "tf.compat.v1.saved_model.load_v2",
        "tf.compat.v1.saved_model.load",
        "tf.compat.v1.saved_model.loader.load",
        "tf.saved_model.loader.load",
        "hub.load",
        "hub.KerasLayer",
        "hub.Module",
    }
)
# ... and what reads one only when handed a folder (it reads `.h5` and `.keras` files
# too). ``load_model`` wants a Keras model back, which ``model.export`` never writes:
# such a save and its load move to `.keras` together (KM403 says so for the load).
# Exporting instead turns the load's clear error (tf_keras 2.21: "lacks the TF-Keras
# metadata"; Keras 3: "File format not supported") into a late one: tf_keras loads an
# exported folder as a bare object with no ``predict``.


def _rule_fact_providers() -> tuple:
    """The fact providers every registered rule declares (``Rule.facts``); imported
    when first asked, as the rules import this module."""
    from kmigrate.rules import registry

    return registry.fact_providers()


SAVED_MODEL_FOLDER_LOAD = in_keras_namespaces("models.load_model", "saving.load_model")

CONTEXT_SPEC = ContextSpec(
    model_base_prefixes=tuple(ns + base for ns in KERAS_NAMESPACES for base in _MODEL_BASES)
    + _KERAS2_ENGINE_BASES
    + ("tf.Module", "tf.experimental.ExtensionType"),
    # A base class imported from the user's own package cannot be resolved; these
    # name endings are how real code names its layer and model base classes.
    model_name_suffixes=("Layer", "Model", "Loss", "Metric", "Block"),
    model_function_keywords=frozenset(
        {
            "loss",
            "metrics",
            "weighted_metrics",
            "activation",
            "recurrent_activation",
            # ``load_model(path, custom_objects={"gelu": gelu})``: what Keras builds with
            "custom_objects",
        }
    ),
    custom_object_getters=(".get_custom_objects",),
    model_function_decorators=(".register_keras_serializable",),
    # keras_applications' convention (copied by efficientnet, classification_models,
    # segmentation_models): a builder gets Keras's modules as keyword arguments and
    # unpacks them; whichever Keras was injected, they are Keras's modules
    injected_modules=(
        (
            "get_submodules_from_kwargs",
            ("keras.backend", "keras.layers", "keras.models", "keras.utils"),
        ),
    ),
    model_function_callees=(".Lambda", ".Activation"),
    functional_input_suffixes=(
        "keras.Input",
        "keras.layers.Input",
        "keras.layers.InputLayer",
    ),
    data_methods=frozenset({"map", "filter", "flat_map", "interleave", "from_generator"}),
    # proof of data code: a tf.data pipeline or tf.io parsing. ``tf.image`` is not: layers
    # call it too (resize, crop): such a call is decided on its own, the function around
    # it stays model code
    data_symbol_prefixes=("tf.data.", "tf.io."),
    keras_namespaces=("K", "keras", "tf.keras", "tf_keras"),
    serving_symbols=("tf.saved_model.",),
    distribution_symbols=("tf.distribute.",),
    # A Keras 3 project that keeps TensorFlow for its tf.data preprocessing imports it
    # as optional; keras.ops inside a tf.data map fails on JAX and PyTorch.
    optional_imports=(
        (
            "tf",
            "as multi-backend projects do for the code their tf.data pipelines run: "
            "`tf` calls work there on every backend, keras.ops calls fail on JAX and PyTorch",
        ),
    ),
    training_symbols=("tf.GradientTape",),
    # TensorBoard logging: what a hand-written training loop does (a layer's own call
    # stays model code, and its tf.summary call gets KM606's error)
    training_call_prefixes=("tf.summary.",),
    saved_file_suffixes=(".h5", ".hdf5", ".keras", ".ckpt", ".weights.h5"),
    saved_model_saves=SAVED_MODEL_SAVE,
    saved_model_loads=SAVED_MODEL_LOAD,
    saved_model_folder_loads=SAVED_MODEL_FOLDER_LOAD,
    provider_source=_rule_fact_providers,
    canonical_prefixes=CANONICAL_PREFIXES,
    # a ``map`` or ``filter`` reached through TensorFlow or the Keras backend is not a
    # dataset's method: its function argument is not data code
    data_method_exempt_prefixes=("tf.", "K."),
    # Keras's own style: ``from keras import ops`` then ``ops.mean``; a ``keras`` bound by
    # ``from tensorflow import keras`` gives way to ``import keras``. ``keras.Operation``
    # (KM523, KM532) is imported by name where ``keras`` is bound to something else
    # (bert4keras: ``from bert4keras.backend import keras``), which no edit may spell through
    import_style=ImportStyle(
        from_imports=("keras.ops",),
        from_imports_where_root_taken=("keras.Operation",),
        superseded_parents=("tensorflow",),
        superseded_modules=("keras_core",),  # keras-core-import makes it `import keras`
        module_aliases=(("tensorflow", "tf"),),
        only_where_imported=(
            (
                "tensorflow",
                (
                    "tensorflow.keras",
                    "tensorflow.python.keras",
                    "tensorflow.compat.v1.keras",
                    "tensorflow.compat.v2.keras",
                ),
            ),
        ),
    ),
    # Re-exported or aliased by real projects (``from mypkg.backend import K``).
    namespace_symbols=frozenset(
        {
            "K",
            "tf",
            "tf.keras",
            "tf.nn",
            "tf.math",
            "tf.linalg",
            "tf.keras.layers",
            "tf.keras.activations",
            "keras",
            "keras.ops",
            "keras.layers",
            "keras.activations",
            "tf_keras",
            "tf_keras.layers",
        }
    ),
    # What KM102 and KM104 change to Keras 3 when a module imports it.
    swapped_namespaces=frozenset(
        {"K", "tf.keras", "tf.keras.layers", "tf.keras.activations", "tf_keras", "tf_keras.layers"}
    ),
)

# Bytes that any file with TensorFlow or Keras code contains; files without them are
# skipped before parsing (``keras`` also covers ``tf_keras``), and a builder that gets
# Keras's modules only through an unpacking helper may name neither.
SOURCE_MARKERS: tuple[bytes, ...] = (
    b"tensorflow",
    b"keras",
    *(helper.encode() for helper, _ in CONTEXT_SPEC.injected_modules),
)
