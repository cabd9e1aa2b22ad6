"""Where tf_keras keeps what a standalone Keras 2.x module held: the table the Keras 2
reference's ``keras`` alias (`keras2_alias`) reads.

Legacy code imports Keras 2.x's own module paths: ``from keras.engine import Layer``
(2.0-2.3), ``from keras.utils.generic_utils import get_custom_objects`` (2.2-2.12),
``from keras.layers.recurrent import LSTM`` (2.0-2.5). tf_keras (Keras 2.13+, the Keras
2 TensorFlow still ships) keeps that code, under other names: its public API
(``tf_keras.layers``) and its internals under ``tf_keras.src`` (where Keras 2.6-2.12
had them at ``keras.X``). So a ``keras.X`` is served from, in order:

1. `MOVED_MODULES`: Keras 2.x paths whose contents tf_keras keeps elsewhere or split
   over several modules (``keras.engine``'s ``Layer`` is ``tf_keras.src.engine.
   base_layer.Layer``, its ``InputSpec`` is in ``input_spec``);
2. ``tf_keras.X`` (the public API: ``keras.layers`` is ``tf_keras.layers``);
3. ``tf_keras.src.X`` (Keras 2.6-2.12's internals: ``keras.engine.base_layer``);
4. else it fails: `REMOVED_MODULES` says why for the Keras 2.x modules tf_keras has no
   equivalent of (the Theano backend, Keras 1 argument converters).

Each `MovedModule` lists the names legacy code imports from it (`uses`);
tests/parity/test_parity_keras2_paths.py imports every entry in a Keras 2 process and checks
each of those names is there.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MovedModule:
    """A Keras 2.x module served from tf_keras: `module` holds most of its names; `moved`
    the ones tf_keras keeps elsewhere (name -> ``"tf_keras.module:attribute"``)."""

    module: str
    uses: tuple[str, ...]  # names legacy code imports from the Keras 2.x path (tested)
    moved: dict[str, str] = field(default_factory=dict)


_ENGINE = "tf_keras.src.engine"
_LAYERS = "tf_keras.src.layers"
_UTILS = "tf_keras.src.utils"
_HDF5 = "tf_keras.src.saving.legacy.hdf5_format"
_REGISTRY = "tf_keras.src.saving.object_registration"
_SERIALIZATION = "tf_keras.src.saving.legacy.serialization"  # Keras 2's {class_name, config}

_LAYER_CLASSES = {
    "Layer": f"{_ENGINE}.base_layer:Layer",
    "InputSpec": f"{_ENGINE}.input_spec:InputSpec",
    "Node": f"{_ENGINE}.node:Node",
    "Input": f"{_ENGINE}.input_layer:Input",
    "InputLayer": f"{_ENGINE}.input_layer:InputLayer",
}
_NETWORK = {
    "Network": f"{_ENGINE}.functional:Functional",  # tf.keras 2.4 renamed Network
    "get_source_inputs": f"{_UTILS}.layer_utils:get_source_inputs",
}
_HDF5_WEIGHTS = (
    "load_weights_from_hdf5_group",
    "load_weights_from_hdf5_group_by_name",
    "save_weights_to_hdf5_group",
    "preprocess_weights_for_loading",
)

MOVED_MODULES: dict[str, MovedModule] = {
    # keras.engine (2.0-2.3): the base classes, re-exported by the package
    "keras.engine": MovedModule(
        _ENGINE,
        uses=("Layer", "InputSpec", "Input", "InputLayer", "Model", "get_source_inputs"),
        moved={**_LAYER_CLASSES, **_NETWORK, "Model": f"{_ENGINE}.training:Model"},
    ),
    "keras.engine.topology": MovedModule(  # 2.0-2.2
        f"{_ENGINE}.base_layer",
        uses=(*_LAYER_CLASSES, *_NETWORK, *_HDF5_WEIGHTS),
        moved={
            **_LAYER_CLASSES,
            **_NETWORK,
            **{name: f"{_HDF5}:{name}" for name in _HDF5_WEIGHTS},
        },
    ),
    "keras.engine.base_layer": MovedModule(
        f"{_ENGINE}.base_layer",
        uses=("Layer", "InputSpec", "Node"),
        moved={name: _LAYER_CLASSES[name] for name in ("InputSpec", "Node")},
    ),
    "keras.engine.network": MovedModule(
        f"{_ENGINE}.functional", uses=tuple(_NETWORK), moved=_NETWORK
    ),
    "keras.engine.saving": MovedModule(_HDF5, uses=_HDF5_WEIGHTS),
    "keras.engine.input_layer": MovedModule(f"{_ENGINE}.input_layer", uses=("Input", "InputLayer")),
    "keras.engine.training": MovedModule(f"{_ENGINE}.training", uses=("Model",)),
    "keras.engine.sequential": MovedModule(f"{_ENGINE}.sequential", uses=("Sequential",)),
    # keras.layers.<kind> (2.0-2.5): one module per kind of layer
    "keras.layers.core": MovedModule(
        f"{_LAYERS}.core",
        uses=(
            "Dense",
            "Dropout",
            "Activation",
            "Flatten",
            "Reshape",
            "Lambda",
            "Masking",
            "Permute",
            "RepeatVector",
            "SpatialDropout1D",
        ),
    ),
    "keras.layers.convolutional": MovedModule(
        f"{_LAYERS}.convolutional",
        uses=(
            "Conv1D",
            "Conv2D",
            "Convolution2D",
            "Conv2DTranspose",
            "SeparableConv2D",
            "UpSampling2D",
            "ZeroPadding2D",
            "Cropping2D",
        ),
    ),
    "keras.layers.pooling": MovedModule(
        f"{_LAYERS}.pooling",
        uses=("MaxPooling2D", "AveragePooling2D", "GlobalAveragePooling2D", "GlobalMaxPooling1D"),
    ),
    "keras.layers.recurrent": MovedModule(
        f"{_LAYERS}.rnn",
        uses=(
            "RNN",
            "SimpleRNN",
            "GRU",
            "LSTM",
            "SimpleRNNCell",
            "GRUCell",
            "LSTMCell",
            "StackedRNNCells",
        ),
    ),
    "keras.layers.cudnn_recurrent": MovedModule(
        f"{_LAYERS}.rnn",
        uses=("CuDNNGRU", "CuDNNLSTM"),
        moved={
            "CuDNNGRU": f"{_LAYERS}.rnn.cudnn_gru:CuDNNGRU",
            "CuDNNLSTM": f"{_LAYERS}.rnn.cudnn_lstm:CuDNNLSTM",
        },
    ),
    "keras.layers.convolutional_recurrent": MovedModule(
        f"{_LAYERS}.rnn.conv_lstm2d", uses=("ConvLSTM2D",)
    ),
    "keras.layers.wrappers": MovedModule(
        f"{_LAYERS}.rnn",
        uses=("Wrapper", "Bidirectional", "TimeDistributed"),
        moved={"Wrapper": f"{_LAYERS}.rnn.base_wrapper:Wrapper"},
    ),
    "keras.layers.normalization": MovedModule(
        f"{_LAYERS}.normalization",
        uses=("BatchNormalization",),
        moved={
            "BatchNormalization": f"{_LAYERS}.normalization.batch_normalization:BatchNormalization"
        },
    ),
    "keras.layers.merge": MovedModule(
        f"{_LAYERS}.merging",
        uses=(
            "Add",
            "add",
            "Concatenate",
            "concatenate",
            "Multiply",
            "multiply",
            "Average",
            "Maximum",
            "Dot",
            "dot",
            "Subtract",
            "_Merge",
        ),
        moved={"_Merge": f"{_LAYERS}.merging.base_merge:_Merge"},
    ),
    "keras.layers.advanced_activations": MovedModule(
        f"{_LAYERS}.activation",
        uses=("LeakyReLU", "PReLU", "ELU", "ThresholdedReLU", "Softmax", "ReLU"),
    ),
    "keras.layers.embeddings": MovedModule(f"{_LAYERS}.core.embedding", uses=("Embedding",)),
    "keras.layers.noise": MovedModule(
        f"{_LAYERS}.noise", uses=("GaussianNoise", "GaussianDropout", "AlphaDropout")
    ),
    "keras.layers.local": MovedModule(
        f"{_LAYERS}.locally_connected", uses=("LocallyConnected1D", "LocallyConnected2D")
    ),
    # keras.backend (2.0-2.3): a package with one module per backend
    "keras.backend.tensorflow_backend": MovedModule(
        "tf_keras.src.backend",
        uses=("tf", "int_shape", "get_session", "set_session", "epsilon", "floatx"),
    ),
    "keras.backend.common": MovedModule(
        "tf_keras.src.backend_config",
        uses=(
            "epsilon",
            "floatx",
            "image_data_format",
            "set_epsilon",
            "set_floatx",
            "set_image_data_format",
        ),
    ),
    # keras.utils.<kind>_utils (2.0-2.12)
    "keras.utils.generic_utils": MovedModule(
        f"{_UTILS}.generic_utils",
        uses=(
            "get_custom_objects",
            "CustomObjectScope",
            "custom_object_scope",
            "Progbar",
            "serialize_keras_object",
            "deserialize_keras_object",
            "has_arg",
            "to_list",
            "func_dump",
            "func_load",
        ),
        moved={
            "get_custom_objects": f"{_REGISTRY}:get_custom_objects",
            "CustomObjectScope": f"{_REGISTRY}:CustomObjectScope",
            "custom_object_scope": f"{_REGISTRY}:custom_object_scope",
            "serialize_keras_object": f"{_SERIALIZATION}:serialize_keras_object",
            "deserialize_keras_object": f"{_SERIALIZATION}:deserialize_keras_object",
        },
    ),
    "keras.utils.conv_utils": MovedModule(
        f"{_UTILS}.conv_utils",
        uses=(
            "conv_output_length",
            "conv_input_length",
            "deconv_output_length",
            "normalize_tuple",
            "normalize_data_format",
            "normalize_padding",
        ),
    ),
    "keras.utils.np_utils": MovedModule(f"{_UTILS}.np_utils", uses=("to_categorical", "normalize")),
    "keras.utils.data_utils": MovedModule(
        f"{_UTILS}.data_utils",
        uses=("get_file", "Sequence", "GeneratorEnqueuer", "OrderedEnqueuer"),
    ),
    "keras.utils.layer_utils": MovedModule(
        f"{_UTILS}.layer_utils", uses=("get_source_inputs", "print_summary", "count_params")
    ),
    "keras.utils.io_utils": MovedModule(
        f"{_UTILS}.io_utils", uses=("ask_to_proceed_with_overwrite",)
    ),
    "keras.utils.vis_utils": MovedModule(f"{_UTILS}.vis_utils", uses=("plot_model",)),
    "keras.utils.tf_utils": MovedModule(f"{_UTILS}.tf_utils", uses=("shape_type_conversion",)),
    # keras.applications.imagenet_utils (2.0-2.3 wrapped keras_applications)
    "keras.applications.imagenet_utils": MovedModule(
        "tf_keras.src.applications.imagenet_utils",
        uses=("preprocess_input", "decode_predictions", "_obtain_input_shape"),
        moved={
            "_obtain_input_shape": "tf_keras.src.applications.imagenet_utils:obtain_input_shape"
        },
    ),
    # old public modules
    "keras.objectives": MovedModule(
        "tf_keras.losses", uses=("categorical_crossentropy", "mean_squared_error")
    ),
    "keras.callbacks.callbacks": MovedModule(
        "tf_keras.src.callbacks", uses=("Callback", "ModelCheckpoint", "EarlyStopping")
    ),
    "keras.callbacks.tensorboard_v1": MovedModule(
        "tf_keras.src.callbacks_v1", uses=("TensorBoard",)
    ),
    "keras.initializers": MovedModule(
        "tf_keras.initializers",
        uses=("Initializer", "Orthogonal", "VarianceScaling", "glorot_uniform"),
    ),
    "keras.regularizers": MovedModule(
        "tf_keras.regularizers", uses=("Regularizer", "l1", "l2", "l1_l2")
    ),
    "keras.constraints": MovedModule(
        "tf_keras.constraints", uses=("Constraint", "max_norm", "MaxNorm")
    ),
}

# Keras 2.x modules tf_keras has no equivalent of (a path covers its submodules)
REMOVED_MODULES: dict[str, str] = {
    "keras.legacy": "Keras 1 argument converters, dropped in Keras 2.4",
    "keras.backend.theano_backend": "the Theano backend; tf_keras runs on TensorFlow only",
    "keras.backend.cntk_backend": "the CNTK backend; tf_keras runs on TensorFlow only",
    "keras.backend.numpy_backend": "Keras 2.2's NumPy test backend",
    "keras.backend.load_backend": "Keras 2.2-2.3's backend switch (tf_keras: TensorFlow only)",
    "keras.utils.multi_gpu_utils": "multi_gpu_model, removed in TensorFlow 2.4 (tf.distribute)",
    "keras.wrappers": "the scikit-learn wrappers, removed from tf_keras (SciKeras replaces them)",
    "keras.engine.training_arrays": "Keras 2.2-2.3's fit loop internals",
    "keras.engine.training_generator": "Keras 2.2-2.3's fit_generator internals",
}


def removed_reason(fullname: str) -> str | None:
    """Why tf_keras has no `fullname`, if it is (under) a Keras 2.x module it dropped."""
    for path, reason in REMOVED_MODULES.items():
        if fullname == path or fullname.startswith(path + "."):
            return reason
    return None
