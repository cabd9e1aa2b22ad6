"""KM523 without a backend: which subclasses of built-in layers it finds, which it fixes,
why it refuses the others, and the method the editor appends (``ClassEdit.methods``)."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import apply_to_text
from kmigrate.engine.editor import apply_plans
from kmigrate.engine.model import ClassEdit, EditPlan, Span
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.run.runner import scan_text

TRACE = "return keras.Operation.compute_output_spec(self, *args, **kwargs)"


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def findings(text: str) -> list:
    return [f for f in scan_text(code(text), select=["KM523"]) if f.rule == "KM523"]


def subclass(
    header: str, base: str, body: str = "def call(self, inputs):\n    return inputs"
) -> str:
    return f"{header}\n\n\nclass Sub({base}):\n" + textwrap.indent(code(body), "    ")


@pytest.mark.parametrize(
    ("header", "base", "parent"),
    [
        ("import tensorflow as tf", "tf.keras.layers.Embedding", "Embedding"),
        ("from tensorflow import keras", "keras.layers.Concatenate", "Concatenate"),
        ("import tf_keras", "tf_keras.layers.Reshape", "Reshape"),
        ("from keras.layers import Flatten", "Flatten", "Flatten"),
        (
            "from tensorflow.keras.layers import MultiHeadAttention",
            "MultiHeadAttention",
            "MultiHeadAttention",
        ),
        ("import keras", "keras.layers.merge.Add", "Add"),  # Keras 2's module path
        ("import keras", "keras.layers.embeddings.Embedding", "Embedding"),
    ],
)
def test_every_keras_spelling_of_the_parent_is_found(header: str, base: str, parent: str) -> None:
    (finding,) = findings(subclass(header, base))
    assert f"`keras.layers.{parent}`" in finding.message
    assert finding.fixable and finding.severity == "error" and finding.span.line == 4


@pytest.mark.parametrize(
    "text",
    [
        subclass("import keras", "keras.layers.Dense"),  # Dense traces its call
        subclass("import keras", "keras.layers.Layer"),
        subclass("import keras", "keras.layers.Embedding", "def build(self, shape):\n    pass"),
        subclass(
            "import keras",
            "keras.layers.Embedding",
            "def call(self, x):\n    return x\n\ndef compute_output_spec(self, x):\n    return x",
        ),
        subclass(
            "import keras",
            "keras.layers.Add",
            "call = keras.layers.Add.call\n"
            "compute_output_spec = keras.Operation.compute_output_spec",
        ),
        subclass("from mylib import Embedding", "Embedding"),  # not Keras's
    ],
    ids=["dense", "layer", "no-override", "own-spec", "assigned-spec", "not-keras"],
)
def test_clean_subclasses(text: str) -> None:
    assert findings(text) == []


def test_a_local_chain_is_followed_to_the_keras_parent() -> None:
    text = """
        import keras


        class Base(keras.layers.Embedding):
            def __init__(self, **kwargs):
                super().__init__(input_dim=2, output_dim=4, **kwargs)


        class Pair(Base):
            def call(self, inputs):
                return inputs


        class Spec(keras.layers.Embedding):
            def compute_output_spec(self, inputs):
                return inputs


        class Traced(Spec):
            def call(self, inputs):
                return inputs


        class Child(Pair):
            def call(self, inputs):
                return inputs
    """
    # Traced inherits Spec's spec; Child inherits Pair's, once Pair's finding is fixed
    assert [f.span.line for f in findings(text)] == [9]
    fixed = apply_to_text(code(text), select=["KM523"])
    assert fixed.count(TRACE) == 1
    assert findings(fixed) == []


def test_the_fix_appends_the_tracing_method_after_the_class_body() -> None:
    text = """
        import keras


        class Pair(keras.layers.Concatenate):
            \"\"\"Two outputs.\"\"\"

            def call(self, inputs):
                return [inputs[0], inputs[1]]


        x = 1
    """
    assert apply_to_text(code(text), select=["KM523"]) == code(
        """
        import keras


        class Pair(keras.layers.Concatenate):
            \"\"\"Two outputs.\"\"\"

            def call(self, inputs):
                return [inputs[0], inputs[1]]

            def compute_output_spec(self, *args, **kwargs):
                # Keras 2 traced `call`; Concatenate's own spec describes Concatenate's call
                return keras.Operation.compute_output_spec(self, *args, **kwargs)


        x = 1
        """
    )


def test_legacy_code_gets_keras_imported_for_the_fix() -> None:
    text = """
        from tensorflow.keras.layers import Embedding


        class Pair(Embedding):
            def call(self, inputs):
                return inputs
    """
    fixed = apply_to_text(code(text))
    assert "import keras\n" in fixed and TRACE in fixed
    assert "tensorflow" not in fixed


def test_compute_output_shape_alone_is_a_warning() -> None:
    text = subclass(
        "import keras",
        "keras.layers.Flatten",
        "def compute_output_shape(self, input_shape):\n    return (input_shape[0], -1)",
    )
    (finding,) = findings(text)
    assert finding.severity == "warning" and finding.fixable
    assert "`compute_output_shape` of `keras.layers.Flatten`" in finding.message


def test_register_keras_serializable_keeps_the_fix() -> None:
    text = """
        import keras


        @keras.saving.register_keras_serializable()
        class Pair(keras.layers.Embedding):
            def call(self, inputs):
                return inputs
    """
    (finding,) = findings(text)
    assert finding.fixable


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (subclass("import keras", "keras.layers.StringLookup"), "preprocessing layer"),
        (
            "import keras\n\n\nclass Sub(Mixin, keras.layers.Embedding):\n    def call(self, x):\n"
            "        return x\n",
            "more bases",
        ),
        (
            "import keras\n\n\nclass Sub(keras.layers.Embedding, metaclass=Meta):\n"
            "    def call(self, x):\n        return x\n",
            "metaclass",
        ),
        (
            "import keras\n\n\n@dataclass\nclass Sub(keras.layers.Add):\n    def call(self, x):\n"
            "        return x\n",
            "class decorator",
        ),
        (
            subclass(
                "import keras",
                "keras.layers.Add",
                "def __call__(self, x):\n    return x\n\ndef call(self, x):\n    return x",
            ),
            "defines `__call__`",
        ),
        (
            subclass(
                "import keras",
                "keras.layers.Reshape",
                "def call(self, x):\n    return x\n\n"
                "def spec(self, x):\n    return super().compute_output_spec(x)",
            ),
            "uses `compute_output_spec` itself (line 9)",
        ),
        (
            subclass(
                "import keras",
                "keras.layers.Embedding",
                "def __init__(self):\n    super().__init__(2, 4, dynamic=True)\n\n"
                "def call(self, x):\n    return x",
            ),
            "`dynamic=`",
        ),
    ],
    ids=["preprocessing", "bases", "metaclass", "decorator", "dunder-call", "mentions", "dynamic"],
)
def test_not_exact_cases_are_reported_without_a_fix(text: str, why: str) -> None:
    (finding,) = findings(text)
    assert not finding.fixable
    assert "not rewritten: " in finding.message and why in finding.message
    assert apply_to_text(code(text), select=["KM523"]) == code(text)


def _class_edit(text: str, *methods: str) -> str:
    line = code(text).splitlines().index("class Pair(keras.layers.Add):") + 1
    plan = EditPlan((ClassEdit(Span(line, 0, line, 10), methods=methods),))
    return apply_plans(code(text), [plan], CONTEXT_SPEC.import_style).text


def test_the_editor_adds_a_method_only_where_the_class_does_not_bind_its_name() -> None:
    method = "def spec(self):\n    return {name:keras.ops.shape}(self)\n"
    bound = """
        import keras


        class Pair(keras.layers.Add):
            spec = None
    """
    assert _class_edit(bound, method) == code(bound)
    edited = _class_edit(
        "from keras import layers as keras_layers\nimport keras\n\n\n"
        "class Pair(keras.layers.Add):\n    pass\n",
        method,
        method,  # the same method twice: added once
    )
    assert edited.endswith(
        "    pass\n\n    def spec(self):\n        return keras.ops.shape(self)\n"
    )
