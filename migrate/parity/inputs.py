"""What each model input is fed: dtype, value range and shape, one spec per input.

One ``--int-high`` for every input cannot check a BERT-style model: token ids need
``[0, vocab)`` and segment ids ``{0, 1}``; with one range the reference crashes or the ids
touch only a corner of the embedding table. So each input gets its own spec, from the
command line (``--input ids:int32:0:30000``), from a spec file (JSON or TOML, for models
with many inputs), or, for an integer input that feeds an ``Embedding`` directly, from that
layer's ``input_dim`` (the worker infers it: `batch.InputBatch.embedding_ranges`).

This module is plain Python: the CLI parses specs here and the worker reads them back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kmigrate.parity.plan import ParityUsageError

SPEC_HELP = "NAME:DTYPE[:LOW:HIGH[:SHAPE]], e.g. ids:int32:0:30000 or image:float32"


@dataclass(frozen=True)
class InputSpec:
    """One model input: matched to the model's inputs by name (or by position if unnamed).

    Integers are drawn uniformly from ``[low, high)``; floats from a standard normal, or
    uniformly from ``[low, high)`` when a range is given. `shape` excludes the batch axis.
    """

    name: str
    dtype: str | None = None
    low: float | None = None
    high: float | None = None
    shape: tuple[int, ...] | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "dtype": self.dtype,
            "low": self.low,
            "high": self.high,
            "shape": list(self.shape) if self.shape else None,
        }

    @classmethod
    def from_dict(cls, data: dict) -> InputSpec:
        shape = data.get("shape")
        return cls(
            name=str(data.get("name") or ""),
            dtype=data.get("dtype"),
            low=data.get("low"),
            high=data.get("high"),
            shape=tuple(int(d) for d in shape) if shape else None,
        )

    def describe(self) -> str:
        text = f"{self.name}: {self.dtype or 'model dtype'}"
        if self.low is not None and self.high is not None:
            text += f" in [{_number(self.low)}, {_number(self.high)})"
        return text


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _parse_number(text: str, what: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ParityUsageError(f"--input '{spec}': {what} '{text}' is not a number") from None
    return int(value) if value.is_integer() else value


def parse_input_spec(text: str) -> InputSpec:
    """``ids:int32:0:30000`` / ``segments:int32:0:2:128`` / ``image:float32``."""
    parts = [p.strip() for p in str(text).split(":")]
    if len(parts) not in (2, 4, 5) or not parts[0]:
        raise ParityUsageError(f"--input '{text}': give {SPEC_HELP}")
    name, dtype = parts[0], parts[1] or None
    low = high = None
    shape = None
    if len(parts) >= 4:
        low = _parse_number(parts[2], "low", text)
        high = _parse_number(parts[3], "high", text)
        if high <= low:
            raise ParityUsageError(
                f"--input '{text}': high must be above low (range is [low, high))"
            )
    if len(parts) == 5:
        from kmigrate.parity.plan import parse_shape  # noqa: PLC0415 - plan imports us not

        shape = parse_shape(parts[4])
    return InputSpec(name=name, dtype=dtype, low=low, high=high, shape=shape)


def load_spec_file(path: str) -> list[InputSpec]:
    """A JSON or TOML file: ``{"inputs": [{"name": "ids", "dtype": "int32", "low": 0,
    "high": 30000, "shape": [128]}, ...]}`` (TOML: ``[[inputs]]`` tables)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as e:
        raise ParityUsageError(f"cannot read the input spec file {path}: {e}") from None
    try:
        if file.suffix == ".toml":
            import tomllib  # noqa: PLC0415

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as e:
        raise ParityUsageError(
            f"{path}: not valid {file.suffix.lstrip('.') or 'JSON'}: {e}"
        ) from None
    entries = data.get("inputs") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ParityUsageError(f"{path}: expected a list of inputs under 'inputs'")
    specs = []
    for entry in entries:
        spec = InputSpec.from_dict(entry)
        if not spec.name:
            raise ParityUsageError(f"{path}: every input needs a 'name' ({entry})")
        specs.append(spec)
    return specs


def match_specs(model_inputs: Sequence[str], specs: Sequence[InputSpec]) -> list[InputSpec | None]:
    """The spec for each model input, in the model's order; unknown names are an error.

    Names match first; when the model's inputs are unnamed (or named differently) and the
    user gave as many specs as there are inputs, position decides.
    """
    by_name = {s.name: s for s in specs}
    if set(by_name) <= set(model_inputs):
        return [by_name.get(name) for name in model_inputs]
    if len(specs) == len(model_inputs):
        return list(specs)
    unknown = sorted(set(by_name) - set(model_inputs))
    raise ParityUsageError(
        f"no model input named {', '.join(unknown)} (the model's inputs: "
        f"{', '.join(model_inputs) or 'none'})"
    )
