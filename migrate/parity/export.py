"""``--export``: the model as a TF SavedModel (``model.export``), served back through
``tf.saved_model.load`` and its ``serving_default`` signature, whose outputs the parent
compares with the reference's."""

from __future__ import annotations

import time

from kmigrate.parity.tracebacks import StageError, error_info


class SavedModelExport:
    """Inside a worker on a backend that exports SavedModels (`worker.Worker`)."""

    def __init__(self, worker):
        self.worker = worker

    def run(self) -> None:
        """SavedModel via model.export, served back through tf.saved_model.load."""
        started = time.perf_counter()
        directory = self.worker.task["export_dir"]
        info: dict = {"status": "ok", "dir": directory}
        try:
            self.worker.model.export(directory, format="tf_saved_model", verbose=False)
            import tensorflow as tf  # noqa: PLC0415 - only on the tensorflow backend

            loaded = tf.saved_model.load(directory)
            if "serving_default" not in loaded.signatures:
                raise StageError(
                    f"the SavedModel in {directory} has no serving_default signature "
                    f"(signatures: {', '.join(loaded.signatures) or 'none'})"
                )
            serve = loaded.signatures["serving_default"]
            _, spec = serve.structured_input_signature
            feed = self.signature_feed(spec, tf)
            served = serve(**feed)
            keys = sorted(served, key=_output_key)
            info["signature_inputs"] = sorted(spec)
            info["outputs"] = [
                self.worker.store(f"export{i}", served[key], key) for i, key in enumerate(keys)
            ]
        except BaseException as exc:  # noqa: BLE001 - an export failure is a result too
            info["status"] = "error"
            info["error"] = error_info("export", exc)
        self.worker.result["export"] = info
        self.worker.add_timing("export", started)

    def signature_feed(self, spec: dict, tf) -> dict:
        names = [name for name, _, _ in (self.worker.model_input_specs() or [])]
        if len(spec) != len(self.worker.inputs):
            raise StageError(
                f"serving_default takes {len(spec)} inputs ({', '.join(sorted(spec))}), "
                f"the model {len(self.worker.inputs)}"
            )
        if names and set(names) == set(spec):
            order = names
        else:  # unnamed inputs: the signature lists them in sorted order
            order = sorted(spec)
            if len(order) > 1:
                self.worker.result["notes"].append(
                    "serving_default inputs matched to model inputs by sorted name"
                )
        return {
            name: tf.cast(tf.constant(x), spec[name].dtype)
            for name, x in zip(order, self.worker.inputs)
        }


def _output_key(key: str):
    """'output_10' sorts after 'output_2'."""
    stem, _, number = key.rpartition("_")
    return (stem, int(number)) if number.isdigit() else (key, -1)
