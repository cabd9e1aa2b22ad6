"""The input batch of a parity run, made once by the reference and read by every target.

Shapes and dtypes come from the model's declared inputs (or ``--input-shape`` /
``--input-dtype``); value ranges per input from ``--input`` / ``--input-spec``
(`kmigrate.parity.inputs`), else, for an integer input that feeds an ``Embedding``
directly, from that layer's ``input_dim``, else ``[0, --int-high)``. The batch goes to an
``.npz`` file; the result records each input's shape, dtype, range and where the range
came from, for the report.
"""

from __future__ import annotations

import numpy as np

from kmigrate.parity.inputs import InputSpec, match_specs
from kmigrate.parity.plan import ParityUsageError  # a user-facing message, no traceback


class InputBatch:
    """Makes or reads the batch inside a worker (`worker` is a `worker.Worker`)."""

    def __init__(self, worker):
        self.worker = worker
        self.int_high = int((worker.task.get("inputs") or {}).get("int_high", 10))

    def prepare(self, options: dict) -> list[np.ndarray]:
        """The batch: read back (targets), or made and written (the reference)."""
        if not options.get("write"):
            with np.load(options["path"]) as data:
                return [data[f"x{i}"] for i in range(len(data.files))]
        if options.get("source"):
            inputs = self.read_inputs_file(options["source"])
        else:
            inputs = self.generate_inputs(options)
        np.savez(options["path"], **{f"x{i}": x for i, x in enumerate(inputs)})
        names = [name for name, _, _ in self.worker.model_input_specs() or []]
        ranges = self.worker.result.get("input_ranges") or []
        self.worker.result["inputs"] = []
        for i, x in enumerate(inputs):
            entry = {"shape": list(x.shape), "dtype": str(x.dtype)}
            if i < len(names) and len(inputs) > 1:
                entry["name"] = names[i]
            if x.dtype.kind in "iu":
                entry["low"], entry["high"] = 0, self.int_high
                if i < len(ranges) and ranges[i]["high"] is not None:
                    entry["low"], entry["high"] = ranges[i]["low"], ranges[i]["high"]
                    entry["range_from"] = ranges[i]["from"]
            self.worker.result["inputs"].append(entry)
        return inputs

    def read_inputs_file(self, path: str) -> list[np.ndarray]:
        if path.endswith(".npy"):
            return [np.load(path)]
        with np.load(path) as data:
            return [data[name] for name in data.files]

    def generate_inputs(self, options: dict) -> list[np.ndarray]:
        specs = self.worker.model_input_specs()
        shapes = options.get("shapes")
        dtypes = options.get("dtypes")
        batch = int(options["batch_size"])
        user = [InputSpec.from_dict(d) for d in options.get("specs") or []]
        if user:
            names = [name for name, _, _ in specs] if specs else [u.name for u in user]
            per_input = match_specs(names, user)
            shapes = shapes or (
                [list(u.shape) for u in per_input]
                if all(u is not None and u.shape for u in per_input)
                else None
            )
            if any(u is not None and u.dtype for u in per_input):
                model_dtypes = [s[2] for s in specs] if specs else ["float32"] * len(per_input)
                dtypes = [
                    (u.dtype if u is not None and u.dtype else d)
                    for u, d in zip(per_input, model_dtypes)
                ]
        else:
            per_input = None
        if shapes:
            if specs and len(specs) != len(shapes):
                raise ParityUsageError(
                    f"the model has {len(specs)} inputs but {len(shapes)} --input-shape "
                    f"options were given; give one per input, in order"
                )
            full = [(batch, *shape) for shape in shapes]
        elif specs:
            full = []
            for name, dims, _ in specs:
                if any(d is None for d in dims[1:]):
                    raise ParityUsageError(
                        f"input '{name}' has shape {tuple(dims)} with unknown sizes besides "
                        f"the batch axis; give them with --input-shape (e.g. --input-shape "
                        f"{','.join('16' if d is None else str(d) for d in dims[1:])})"
                    )
                full.append((batch, *dims[1:]))
        else:
            raise ParityUsageError(
                "the model does not declare its inputs (a subclassed model before its first "
                "call); give them with --input-shape 16,32 [--input-dtype float32]"
            )
        if not dtypes:
            dtypes = [s[2] for s in specs] if specs else ["float32"] * len(full)
        elif len(dtypes) == 1:
            dtypes = list(dtypes) * len(full)
        ranges = self.input_ranges(per_input, len(full), int(options["int_high"]))
        self.worker.result["input_ranges"] = [
            {"low": r[0], "high": r[1], "from": r[2]} for r in ranges
        ]
        rng = np.random.default_rng(int(options["seed"]))
        return [
            self.random_array(rng, shape, dtype, low, high)
            for shape, dtype, (low, high, _) in zip(full, dtypes, ranges)
        ]

    def input_ranges(
        self, per_input: list | None, count: int, int_high: int
    ) -> list[tuple[float | None, float | None, str]]:
        """(low, high, where the range came from) per input: the user's spec, else the
        ``input_dim`` of the Embedding the input feeds, else ``[0, --int-high)``."""
        embedding = self.embedding_ranges()
        ranges = []
        for i in range(count):
            spec = per_input[i] if per_input else None
            if spec is not None and spec.low is not None:
                ranges.append((spec.low, spec.high, "--input"))
            elif i in embedding:
                dim, layer = embedding[i]
                ranges.append((0, dim, f"input_dim of Embedding '{layer}'"))
            else:
                ranges.append((None, None, "default"))
        self.int_high = int_high
        return ranges

    def embedding_ranges(self) -> dict[int, tuple[int, str]]:
        """Model input index -> (smallest input_dim, layer name) of the Embedding layers it
        feeds directly (functional models; others give nothing)."""
        try:
            inputs = list(self.worker.model.inputs or [])
        except (AttributeError, ValueError):
            return {}
        found: dict[int, tuple[int, str]] = {}
        for _, layer in self.worker.layers.tree():
            dim = getattr(layer, "input_dim", None)
            if not isinstance(dim, int) or "Embedding" not in type(layer).__name__:
                continue
            for node in getattr(layer, "_inbound_nodes", []) or []:
                tensors = getattr(node, "input_tensors", None)
                tensors = tensors if isinstance(tensors, list | tuple) else [tensors]
                for tensor in tensors:
                    for i, model_input in enumerate(inputs):
                        if tensor is model_input and dim < found.get(i, (dim + 1, ""))[0]:
                            found[i] = (dim, layer.name)
        return found

    def random_array(
        self, rng, shape: tuple, dtype: str, low: float | None, high: float | None
    ) -> np.ndarray:
        kind = np.dtype(dtype).kind if dtype in np.sctypeDict else "f"
        if kind == "b":
            return rng.random(shape) < 0.5
        if kind in "iu":
            low = 0 if low is None else int(low)
            high = self.int_high if high is None else int(high)
            return rng.integers(low, high, size=shape).astype(dtype)
        if low is not None and high is not None:
            values = rng.uniform(low, high, size=shape)
            return values.astype(dtype if dtype in np.sctypeDict else np.float32)
        values = rng.standard_normal(shape)
        if dtype not in np.sctypeDict:  # bfloat16: feed float32, the model casts
            self.worker.result["notes"].append(f"inputs of dtype {dtype} are fed as float32")
            return values.astype(np.float32)
        return values.astype(dtype)
