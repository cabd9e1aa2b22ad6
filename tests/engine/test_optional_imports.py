"""Modules that import TensorFlow only if it is installed (migrate/engine/optional_imports.py):
multi-backend projects keep TensorFlow for their tf.data preprocessing that way, and a
keras.ops call in a tf.data map fails on JAX and PyTorch, so their TensorFlow calls are
reported but never rewritten. Legacy code, which imports TensorFlow unguarded, is
rewritten as before. The backend test (test_optional_imports_backends.py) shows the break
the rewrite would cause."""

from __future__ import annotations

import ast
import textwrap

import pytest

from kmigrate.api import apply_to_text
from kmigrate.engine.model import Severity
from kmigrate.engine.optional_imports import optional_imports
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.run.runner import scan_text

LAYER = """
class Packer(keras.layers.Layer):
    def call(self, inputs):
        x = tf.cast(inputs, "int32")
        return tf.squeeze(x, axis=0)
"""

OPTIONAL = """
import keras

try:
    import tensorflow as tf
except ImportError:
    tf = None
"""


def _optional(source: str) -> dict[str, int]:
    tree = ast.parse(textwrap.dedent(source))
    return optional_imports(tree, CONTEXT_SPEC.canonical, ("tf",))


@pytest.mark.parametrize(
    "source",
    [
        "try:\n    import tensorflow as tf\nexcept ImportError:\n    tf = None\n",
        "try:\n    import tensorflow as tf\nexcept ModuleNotFoundError:\n    pass\n",
        "try:\n    import tensorflow as tf\nexcept (ImportError, OSError):\n    tf = None\n",
        "try:\n    import tensorflow\nexcept Exception:\n    tensorflow = None\n",
        "try:\n    import tensorflow as tf\nexcept:\n    tf = None\n",
        "if True:\n    try:\n        import tensorflow as tf\n    except ImportError:\n"
        "        tf = None\n",
    ],
)
def test_guarded_imports_are_optional(source: str) -> None:
    assert list(_optional(source)) == ["tf"]


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\n",
        # the handler says why and raises: TensorFlow is required (tensorflow_hub's shape)
        "try:\n    import tensorflow as tf\nexcept ImportError:\n    print('install it')\n"
        "    raise\n",
        # an unguarded import elsewhere in the module makes it required
        "try:\n    import tensorflow as tf\nexcept ImportError:\n    tf = None\n"
        "import tensorflow as tf\n",
        # other exceptions do not make a failed import optional
        "try:\n    import tensorflow as tf\nexcept ValueError:\n    tf = None\n",
        # an import inside a function is not the module's
        "def f():\n    try:\n        import tensorflow as tf\n    except ImportError:\n"
        "        return None\n",
        "try:\n    import numpy as np\nexcept ImportError:\n    np = None\n",
    ],
)
def test_required_imports_are_not(source: str) -> None:
    assert _optional(source) == {}


def test_the_guarded_import_is_found_in_a_multi_statement_module() -> None:
    assert _optional(OPTIONAL + LAYER) == {"tf": 5}


def test_calls_through_an_optional_import_are_reported_not_rewritten() -> None:
    source = textwrap.dedent(OPTIONAL + LAYER)
    findings = [f for f in scan_text(source) if f.rule == "KM201"]
    assert [f.symbol for f in findings] == ["tf.cast", "tf.squeeze"]
    assert all(f.fix is None for f in findings)
    assert all(f.severity is Severity.INFO for f in findings)  # notes: nothing to port
    assert all("imports `tf` as optional (line 5)" in f.message for f in findings)
    assert all("tf.data" in f.message for f in findings)
    assert apply_to_text(source) == source


def test_manual_findings_through_an_optional_import_are_notes_too() -> None:
    """A tokenizer's tf.strings call is no porting work either in a pipeline module (KM202
    for a catalog entry with no rewrite, KM205 for a call the catalog does not know)."""
    layer = LAYER.replace(
        "x = tf.cast(inputs", "x = tf.strings.split(inputs)\n        x = tf.cast(x"
    )
    layer += "\n    def more(self, x):\n        return tf.strings.reduce_join(x)\n"
    findings = scan_text(textwrap.dedent(OPTIONAL + layer))
    manual = {f.rule for f in findings if f.symbol.startswith("tf.strings.")}
    assert manual == {"KM202", "KM205"}
    assert all(f.severity is Severity.INFO and f.fix is None for f in findings if f.symbol)
    required = scan_text(textwrap.dedent("import keras\nimport tensorflow as tf\n" + layer))
    assert {f.severity for f in required if f.symbol.startswith("tf.strings.")} == {Severity.ERROR}


def test_legacy_code_with_a_required_import_is_still_rewritten() -> None:
    source = textwrap.dedent("import keras\nimport tensorflow as tf\n" + LAYER)
    findings = [f for f in scan_text(source) if f.rule == "KM201"]
    assert [f.fix is not None for f in findings] == [True, True]
    assert "ops.squeeze(x, axis=0)" in apply_to_text(source)
