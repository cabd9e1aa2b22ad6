"""Property-based tests on generated TensorFlow-flavoured modules and notebooks.

The generators combine imports under several aliases, layer classes, ``tf.*`` /
``K.*`` calls with literal and non-literal arguments, nested calls, comments,
odd whitespace, multi-line calls, CRLF and mixed line endings. Properties:

- ``scan`` never crashes (no KM902) and reports KM901 only for code that does not parse;
- ``apply`` always returns code that parses, and a second ``apply`` changes nothing;
- ``apply`` never touches a line outside the rewritten call sites: every plain line
  (no TF name on it) comes out byte-identical, line ending included, in order, and
  comments on rewritten lines survive;
- notebooks: IPython lines and non-code cells come out unchanged and the JSON stays valid.

CI runs a bounded, derandomised number of examples (< 60 s). For a long local run::

    KMIGRATE_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest tests/engine/test_fuzz.py -q
"""

from __future__ import annotations

import ast
import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("KMIGRATE_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="KMIGRATE_FUZZ_EXAMPLES" not in os.environ,  # CI: the same examples each run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

# (import line, name it binds, what the name is)
IMPORTS = [
    ("import tensorflow as tf", "tf", "tf"),
    ("import tensorflow as tfx", "tfx", "tf"),
    ("import tensorflow", "tensorflow", "tf"),
    ("from tensorflow import keras", "keras", "keras"),
    ("from tensorflow import keras as tfk", "tfk", "keras"),
    ("from tensorflow.keras import layers", "layers", "layers"),
    ("from tensorflow.keras import backend as K", "K", "backend"),
    ("import numpy as np", "np", "np"),
]
TF_OPS = [
    "reduce_mean",
    "reduce_sum",
    "reduce_max",
    "square",
    "sqrt",
    "exp",
    "abs",
    "nn.relu",
    "nn.softmax",
    "nn.gelu",
    "math.rsqrt",
    "concat",
    "matmul",
    "transpose",
    "expand_dims",
    "squeeze",
    "reshape",
    "cast",
    "shape",
    "split",
    "where",
    "argmax",
    "clip_by_value",
    "random.normal",
    "random.uniform",
    "zeros",
    "ones",
]
K_OPS = ["mean", "sum", "square", "sqrt", "epsilon", "concatenate", "expand_dims", "dot"]
LAYERS = ["Dense", "Conv2D", "Dropout", "LayerNormalization", "Flatten", "Embedding"]
NAMES = ["x", "y", "inputs", "self.w", "h[0]"]

names = st.sampled_from(NAMES)
ints = st.integers(min_value=-3, max_value=8).map(str)
literals = st.one_of(
    ints,
    st.sampled_from(
        ["None", "True", "False", "'same'", '"SAME"', "0.5", "1e-6", "(2, 3)", "[1, 2]"]
    ),
)
spaces = st.sampled_from(["", " ", "  "])


@st.composite
def tf_call(draw, bound: dict[str, list[str]], depth: int = 0) -> str:
    """One call through whatever the module imported (or a plain function call)."""
    kinds = []
    if bound["tf"]:
        kinds.append("tf")
    if bound["backend"]:
        kinds.append("K")
    if bound["keras"] or bound["layers"] or bound["tf"]:
        kinds.append("layer")
    kind = draw(st.sampled_from(kinds or ["plain"]))
    if kind == "tf":
        callee = f"{draw(st.sampled_from(bound['tf']))}.{draw(st.sampled_from(TF_OPS))}"
    elif kind == "K":
        callee = f"{draw(st.sampled_from(bound['backend']))}.{draw(st.sampled_from(K_OPS))}"
    elif kind == "layer":
        prefixes = [f"{t}.keras.layers" for t in bound["tf"]]
        prefixes += [f"{k}.layers" for k in bound["keras"]] + bound["layers"]
        callee = f"{draw(st.sampled_from(prefixes))}.{draw(st.sampled_from(LAYERS))}"
    else:
        callee = "helper"
    argument = names | literals
    if depth < 2:
        argument = argument | tf_call(bound, depth + 1)
    positional = draw(st.lists(argument, max_size=3))
    keywords = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["axis", "keepdims", "name", "dtype", "activation"]), argument
            ),
            max_size=2,
            unique_by=lambda kv: kv[0],
        )
    )
    parts = positional + [f"{k}={v}" for k, v in keywords]
    pad = draw(spaces)
    if draw(st.booleans()) and len(parts) > 1:  # a call spread over lines
        indent = " " * draw(st.integers(4, 12))
        return f"{callee}(\n{indent}" + f",\n{indent}".join(parts) + ",\n)"
    return f"{callee}({pad}" + f",{draw(spaces) or ' '}".join(parts) + f"{pad})"


PLAIN = [
    "total = 1 + 2",
    "print('hello, world')",
    "values = [i * 2 for i in range(3)]",
    "# a comment that mentions nothing",
    "label = 'tf is only a word here'",
    "",
]


@st.composite
def module(draw) -> tuple[str, list[str]]:
    """A module's text and its plain lines (with their line endings)."""
    chosen = draw(st.lists(st.sampled_from(IMPORTS), min_size=1, max_size=5, unique=True))
    bound: dict[str, list[str]] = {"tf": [], "keras": [], "layers": [], "backend": [], "np": []}
    for _, name, kind in chosen:
        bound[kind].append(name)
    ending = draw(st.sampled_from(["\n", "\r\n", "mixed"]))
    body: list[tuple[str, bool]] = [(line, False) for line, _, _ in chosen] + [("", True)]
    plain_number = 0

    def comment() -> str:
        nonlocal plain_number
        plain_number += 1
        return f"  # note {plain_number}" if draw(st.booleans()) else ""

    def plain() -> tuple[str, bool]:
        nonlocal plain_number
        plain_number += 1
        text = draw(st.sampled_from(PLAIN))
        return (f"{text}  # plain {plain_number}" if text else "", True)

    for _ in range(draw(st.integers(1, 6))):
        shape = draw(st.sampled_from(["assign", "class", "plain", "function"]))
        if shape == "assign":
            target = draw(st.sampled_from(["y", "z", "out"]))
            joint = draw(st.sampled_from([" = ", "=", " = \\\n    "]))  # also a backslash
            body.append((f"{target}{joint}{draw(tf_call(bound))}{comment()}", False))
        elif shape == "plain":
            body.append(plain())
        else:
            header = (
                f"class Block{len(body)}({draw(st.sampled_from(bound['tf']))}.keras.layers.Layer):"
                if shape == "class" and bound["tf"]
                else f"def step{len(body)}(x):"
            )
            body.append((header, False))
            indent = "    " if header.startswith("def") else "        "
            if header.startswith("class"):
                body.append(("    def call(self, x):", False))
            for _ in range(draw(st.integers(1, 3))):
                if draw(st.booleans()):
                    body.append((f"{indent}h = {draw(tf_call(bound))}{comment()}", False))
                else:
                    text, _ = plain()
                    body.append((f"{indent}{text}" if text else "", True))
            body.append((f"{indent}return x", True))
    lines = []
    plain_lines = []
    for number, (text, is_plain) in enumerate(body):
        end = ending if ending != "mixed" else ("\r\n" if number % 3 == 1 else "\n")
        lines.append(text + end)
        if is_plain and text.strip():
            plain_lines.append(text + end)
    return "".join(lines), plain_lines


def fix(text: str):
    from kmigrate.engine.apply import fix_module_text
    from kmigrate.engine.rule_walk import RuleSet
    from kmigrate.rules.context_spec import CONTEXT_SPEC
    from kmigrate.rules.registry import all_rules

    global _RULESET
    if _RULESET is None:
        _RULESET = RuleSet(list(all_rules()))
    return fix_module_text("fuzz.py", text, _RULESET, CONTEXT_SPEC)


_RULESET = None


def in_order(needles: list[str], haystack: str) -> bool:
    position = 0
    for needle in needles:
        found = haystack.find(needle, position)
        if found < 0:
            return False
        position = found + len(needle)
    return True


@FUZZ
@given(module())
def test_scan_and_apply_properties(generated: tuple[str, list[str]]) -> None:
    from kmigrate.run.runner import scan_text

    text, plain_lines = generated
    ast.parse(text)  # the generator only writes valid Python
    findings = scan_text(text)
    assert not [f for f in findings if f.rule in ("KM901", "KM902")], findings
    outcome = fix(text)
    assert outcome.error is None, outcome.error
    new = outcome.text
    ast.parse(new)
    assert not [f for f in outcome.remaining if f.rule in ("KM901", "KM902")]
    assert in_order(plain_lines, new), "a line without TF code changed"
    notes = [
        f"# note {n}" for n in range(1, 60) if f"# note {n}\r" in text or f"# note {n}\n" in text
    ]
    assert in_order(notes, new), "a comment on a rewritten line was lost"
    assert fix(new).text == new, "apply is not idempotent"


@st.composite
def notebook(draw) -> tuple[str, list[str]]:
    """A notebook of generated code cells, IPython lines and markdown."""
    text, _ = draw(module())
    lines = text.replace("\r\n", "\n").splitlines(keepends=True)
    cells, current = [], []
    magics = []
    for line in lines:
        if current and line[:1].isalpha():  # a new top-level statement: a boundary
            if draw(st.integers(0, 3)) == 0:
                magic = draw(
                    st.sampled_from(["%matplotlib inline", "!pip list", "%time x = 1", "tf?"])
                )
                magics.append(magic)
                current.append(magic + "\n")
            if draw(st.booleans()):
                cells.append("".join(current))
                current = []
        current.append(line)
    cells.append("".join(current))
    data = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# fuzz"]},
            *(
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": source.splitlines(keepends=True),
                }
                for source in cells
            ),
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    return json.dumps(data, indent=draw(st.sampled_from([1, 2]))) + "\n", magics


@settings(FUZZ, max_examples=max(EXAMPLES // 3, 10))
@given(notebook())
def test_notebook_properties(generated: tuple[str, list[str]]) -> None:
    from kmigrate.engine.notebook import load_notebook

    raw, magics = generated
    book = load_notebook(raw)
    ast.parse(book.module_text)
    outcome = fix(book.module_text)
    assert outcome.error is None
    assert not [f for f in outcome.remaining if f.rule in ("KM901", "KM902")]
    new_raw = book.rebuild(outcome.text)
    new = json.loads(new_raw)
    old = json.loads(raw)
    assert new["cells"][0] == old["cells"][0] and new["metadata"] == old["metadata"]
    code = "".join("".join(c["source"]) + "\n" for c in new["cells"][1:])
    assert in_order([m + "\n" for m in magics], code + "\n") or all(m in code for m in magics)
    again = load_notebook(new_raw)
    assert again.rebuild(fix(again.module_text).text) == new_raw, "not idempotent"
