"""Which Keras layers hold variables, for the rules that ask what a sub-layer brings
(KM517: created in `call`; KM532: left unbuilt)."""

from __future__ import annotations

# Layers that hold no variable (no weights, no seed state): a new one at every call costs
# an object, never a weight or a traced variable. Checked on the three backends under
# `fit` (tests/rules/test_layer_created_in_call_backends.py). Dropout and the noise
# layers are not here: Keras 3 gives them a SeedGenerator, whose state is a variable.
WEIGHTLESS_LAYERS = frozenset(
    {
        *("Reshape", "Flatten", "Permute", "RepeatVector", "Activation", "Lambda"),
        *("Softmax", "ReLU", "LeakyReLU", "ELU", "ThresholdedReLU", "Identity", "Masking"),
        *("Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate"),
        "Dot",
        *(f"{kind}{d}D" for kind in ("ZeroPadding", "Cropping", "UpSampling") for d in (1, 2, 3)),
        *(
            f"{scope}{kind}{d}D"
            for scope in ("", "Global")
            for kind in ("MaxPooling", "MaxPool", "AveragePooling", "AvgPool")
            for d in (1, 2, 3)
        ),
    }
)

# Layers whose variables (if any) are not made by `build`: the dropout and noise layers
# make their seed state in `__init__`. Left unbuilt, they lose no weight.
NO_WEIGHTS_FROM_BUILD = WEIGHTLESS_LAYERS | frozenset(
    {
        *("Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D"),
        *("GaussianNoise", "GaussianDropout", "AlphaDropout", "ActivityRegularization"),
    }
)
