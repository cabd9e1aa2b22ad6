"""OpenVINO: inference only (``predict``), compiled in float32.

On CPUs with bfloat16 units (AMX, AVX512-BF16) OpenVINO runs float32 models in bfloat16 by
default, which moves float32 outputs by ~1e-3: a difference of the device setting, not of
the model. Keras's OpenVINO predict compiles with the default; parity asks for float32
(``INFERENCE_PRECISION_HINT=f32``) so the model's own numbers are compared.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kmigrate.parity.backends.profile import BackendProfile


@dataclass(frozen=True)
class OpenVinoProfile(BackendProfile):
    def after_import(self, keras, notes: list[str]) -> None:
        import openvino  # noqa: PLC0415 - in the openvino worker only

        original = openvino.compile_model

        @functools.wraps(original)
        def compile_model(model, device_name=None, config=None, *args, **kwargs):
            config = {"INFERENCE_PRECISION_HINT": "f32", **(config or {})}
            return original(model, device_name, config, *args, **kwargs)

        openvino.compile_model = compile_model
        notes.append("OpenVINO compiled with INFERENCE_PRECISION_HINT=f32")

    def call(self, model, args, batch_size: int):
        """No eager call on an inference-only backend: building the model predicts."""
        return self.predict(model, args, batch_size)


PROFILE = OpenVinoProfile(
    name="openvino",
    keras_backend="openvino",
    modules=("openvino",),
    pip="openvino",
    aliases=("ov",),
    checks=("predict",),
)
