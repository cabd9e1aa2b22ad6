"""PyTorch: its own generator to seed, and autograd errors that surface in ``backward()``,
far from the layer that made the tensor."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

from kmigrate.parity.backends.profile import BackendProfile

FRAME_LINE = re.compile(r'File "([^"]+)", line (\d+)')


@dataclass(frozen=True)
class TorchProfile(BackendProfile):
    def seed(self, seed: int) -> None:
        import torch  # noqa: PLC0415 - in the torch worker only

        torch.manual_seed(seed)

    def device(self) -> str:
        """Keras's torch backend puts tensors on cuda, then mps, when torch sees one."""
        import torch  # noqa: PLC0415 - in the torch worker only

        if torch.cuda.is_available():
            return f"cuda ({torch.cuda.get_device_name(0)})"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        # intra-op threads: on a busy machine (more runnable processes than cores) torch's
        # default of one per core can be 10-20x slower than one thread (benchmarks/RESULTS.md)
        threads = torch.get_num_threads()
        return f"cpu ({threads} thread{'' if threads == 1 else 's'})"

    def explain_train_error(self, check, exc: Exception, y) -> None:
        """An autograd error (an in-place ``x -= y`` on a tensor that backward needs) is
        raised in ``backward()``. Replaying the step in torch's anomaly mode gives the
        forward line that made the tensor; `exc` gets that line and its layer."""
        import torch  # noqa: PLC0415 - in the torch worker only

        with warnings.catch_warnings(record=True) as caught, torch.autograd.detect_anomaly():
            warnings.simplefilter("always")
            try:
                check.model.train_on_batch(check.worker.model_args(), y)
            except Exception:  # noqa: BLE001, S110 - the first error is the one reported
                pass
        text = "\n".join(str(w.message) for w in caught if "forward call" in str(w.message))
        for file, line in reversed(FRAME_LINE.findall(text)):
            layer = check.worker.layers.layer_at(file, int(line))
            if layer:
                exc.kmigrate_layer = layer
                exc.kmigrate_forward = f"{file}:{line}"
                return


PROFILE = TorchProfile(
    name="torch",
    keras_backend="torch",
    modules=("torch",),
    pip="torch",
    aliases=("pytorch",),
    watch_tensorflow=True,
)
